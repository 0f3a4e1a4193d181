package index

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/store"
)

var _ store.Backend = (*DB)(nil)

// DB is an open index. Its methods are safe for concurrent use.
//
// A DB keeps the locks, the filter and the counts; which store holds an
// entry, and every read and write of the stores, is its owner's (st, see
// stores). Open's steps are listed in open.go.
type DB struct {
	path string
	opts Options
	bo   badger.Options

	// mu is held shared by every operation and exclusively by Close, Load
	// and filter growth, which therefore see no operation in flight.
	mu     sync.RWMutex
	closed bool
	// st holds the stores (Badger and the key table) and decides where
	// an entry lives.
	st    stores
	lock  *dirLock // nil in memory
	space space
	// writeReady is set once every table was verified before a write.
	writeReady atomic.Bool
	// snapState is the Badger version the persisted filter snapshot
	// reflects (0: none is current).
	snapState uint64
	// snapInBadger is set when Open loaded a version 1 snapshot (its
	// encoding in Badger's value log): Close writes it in a file.
	snapInBadger bool

	// Writers of full entries lock stripes[h[0]]; writers of prefix entries
	// lock pmu. Locks are taken in ascending stripe order, then pmu.
	stripes [256]sync.Mutex
	pmu     sync.Mutex

	fmu  sync.RWMutex // guards f, next and their bitmaps
	f    *filter.Filter
	next *filter.Filter // the wider filter being built, or nil
	// The filter of a current snapshot file loads in the background (see
	// loadFilter): fin is set and fready closed once f is in (ferr, when
	// it could be neither loaded nor rebuilt). Until then a read that
	// finds its key in the stores answers without the filter, and
	// everything else that needs it waits (waitFilter). fhdr is the
	// snapshot's header, for Stats meanwhile; fstop asks the loader to
	// stop (Close), fwg waits for it.
	fin    atomic.Bool
	fready chan struct{}
	ferr   error
	fhdr   snapshotHeader
	fstop  atomic.Bool
	fwg    sync.WaitGroup
	// rebuilding is set when no snapshot was current and the filter is
	// rebuilt in the background (see rebuildsInBackground).
	rebuilding atomic.Bool

	growing  atomic.Bool // a background filter growth runs
	stopGrow atomic.Bool // Close asks it to stop
	// growFailed stops further growth attempts after one found damage.
	growFailed atomic.Bool
	growWG     sync.WaitGroup

	entries       atomic.Int64
	prefixEntries atomic.Int64
	probes        probes // the filter's answers, for Stats
	// ttl is set once the index holds (or held) an entry with an expiry:
	// the counts above then include expired entries, which exp counts.
	ttl atomic.Bool
	emu sync.Mutex // guards exp
	exp expiryCounts

	profileMu sync.Mutex // guards profile after Open
	profile   string
	identity  string // see Identity

	// loadedSnapshot records whether Open used the persisted filter
	// (tests: see snapshotUsed).
	loadedSnapshot atomic.Bool
	// created is set when Open created the index.
	created bool
	// testSnapshotCrash, when set, is called between the write of the
	// snapshot file and the commit of its header; an error stops
	// writeSnapshot there, as a crash.
	testSnapshotCrash func() error
}

// getCopy returns a copy of the value of key, or nil when absent.
func getCopy(txn *badger.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, translate(err)
	}
	v, err := item.ValueCopy(nil)
	if v == nil {
		v = []byte{}
	}
	return v, translate(err)
}

// Close persists the filter, flushes and closes the index. Everything
// written before Close returns survives a crash. Closing a closed DB
// returns nil.
//
// A read-only index writes nothing. A writable one skips the snapshot
// when the disk is short of space (the next Open rebuilds the filter).
func (db *DB) Close() (err error) {
	defer db.catch(&err)
	db.stopGrow.Store(true)
	db.growWG.Wait()
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil
	}
	db.closed = true
	// No operation runs: a filter still loading is not needed. A rebuild
	// of a writable index is let finish: its snapshot, written below,
	// spares the next Open the pass (which Open itself once made).
	if db.opts.ReadOnly || !db.rebuilding.Load() {
		db.fstop.Store(true)
	}
	db.fwg.Wait()
	st := &db.st
	// A move this process left unfinished is finished first: the
	// snapshot counts each key once. If that fails the snapshot is not
	// written, and the next Open reconciles the stores.
	errMoves := st.finishMoves()
	// The last sync number goes in before the snapshot, which records
	// Badger's version: a snapshot written after it stays current.
	var seq uint64
	var errMark error
	if !db.opts.InMemory && !db.opts.ReadOnly {
		st.acked.mu.Lock()
		defer st.acked.mu.Unlock()
		seq, errMark = st.markSync()
	}
	var errSnap error
	// The snapshot is a cache: written only when the one on disk is not
	// current, and skipped without room for it, when a table is damaged
	// or when the filter never came in (no write waited for it; the next
	// Open rebuilds the filter).
	if !db.opts.InMemory && !db.opts.ReadOnly && errMoves == nil && db.fin.Load() && (st.bdb.MaxVersion() != db.snapState || db.snapInBadger) &&
		db.roomFor(2*int64(db.f.SizeBytes())) == nil && db.prepareWrite() == nil {
		errSnap = db.writeSnapshot()
	}
	errKT, errClose := st.close()
	if errMark == nil && errClose == nil {
		errMark = st.recordSync(seq, true)
	}
	return errors.Join(errMoves, errSnap, errKT, errClose, errMark, st.closeSynced(), db.lock.release())
}

// Sync makes every write acknowledged so far durable on disk.
func (db *DB) Sync(ctx context.Context) (err error) {
	defer db.catch(&err)
	if err := db.begin(ctx); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	return db.syncLocked()
}

// syncLocked is Sync under db.mu (shared or exclusive).
func (db *DB) syncLocked() error {
	if db.opts.InMemory || db.opts.ReadOnly {
		return nil
	}
	return db.st.sync()
}

// Path returns the index directory ("" in memory).
func (db *DB) Path() string { return db.path }

// Profile implements store.Backend: the profile recorded in the index
// ("" if none), read from memory; it never fails.
func (db *DB) Profile(context.Context) (string, error) { return db.profileName(), nil }

// profileName returns the profile recorded in the index ("" if none).
func (db *DB) profileName() string {
	db.profileMu.Lock()
	defer db.profileMu.Unlock()
	return db.profile
}

// SetProfile records name as the index's profile when it records none (an
// empty name records nothing). It
// returns an error wrapping store.ErrProfileMismatch when the index records
// another, and store.ErrReadOnly on a read-only index that records none.
func (db *DB) SetProfile(ctx context.Context, name string) (err error) {
	defer db.catch(&err)
	if err := db.begin(ctx); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	db.profileMu.Lock()
	defer db.profileMu.Unlock()
	switch {
	case name == "", db.profile == name:
		return nil
	case db.profile != "":
		return fmt.Errorf("%w: %s records %q, not %q", store.ErrProfileMismatch, db.path, db.profile, name)
	case db.opts.ReadOnly:
		return store.ErrReadOnly
	}
	if err := db.roomFor(2 * int64(len(name)+64)); err != nil {
		return err
	}
	if err := db.prepareWrite(); err != nil {
		return err
	}
	err = db.st.update(func(txn *badger.Txn) error { return txn.Set(metaKey(metaProfile), []byte(name)) })
	if err != nil {
		return translate(err)
	}
	db.profile = name
	return nil
}

// ctxEvery is how many keys a long loop (scan, load) handles between two
// looks at its context, since Badger takes none.
const ctxEvery = 1024

// begin takes the shared lock for an operation, unless ctx is done; the
// caller must db.mu.RUnlock when it returns nil.
func (db *DB) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return store.ErrClosed
	}
	return nil
}

// beginWrite is begin for writes, which wait for the filter to be in
// (writers admit their keys to it).
func (db *DB) beginWrite(ctx context.Context) error {
	if err := db.begin(ctx); err != nil {
		return err
	}
	if db.opts.ReadOnly {
		db.mu.RUnlock()
		return store.ErrReadOnly
	}
	if err := db.waitFilter(); err != nil {
		db.mu.RUnlock()
		return err
	}
	return nil
}

// translate maps Badger errors to the package's errors. Other Badger errors
// are reported by text only, so callers never see Badger types.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, badger.ErrKeyNotFound):
		return store.ErrNotFound
	case errors.Is(err, badger.ErrDBClosed):
		return store.ErrClosed
	case errors.Is(err, badger.ErrReadOnlyTxn):
		return store.ErrReadOnly
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("index: %w", err)
	}
	for _, e := range []error{store.ErrNotFound, store.ErrClosed, store.ErrCorrupt, store.ErrFormat, store.ErrReadOnly, store.ErrPrefixLength, store.ErrDiskFull} {
		if errors.Is(err, e) {
			return err
		}
	}
	return fmt.Errorf("index: %v", err)
}
