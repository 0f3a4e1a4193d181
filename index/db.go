package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/index/internal/extsort"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// snapshotChunk is the size of one filter chunk of a version 1 snapshot
// (which this package reads, and writes no more).
const snapshotChunk = 1 << 20

var _ store.Backend = (*DB)(nil)

// DB is an open index. Its methods are safe for concurrent use.
type DB struct {
	path string
	opts Options
	bo   badger.Options

	// mu is held shared by every operation and exclusively by Close, Load
	// and filter growth, which therefore see no operation in flight.
	mu     sync.RWMutex
	closed bool
	bdb    *badger.DB
	lock   *dirLock         // nil in memory
	guard  *integrity.Guard // nil in memory
	space  space
	acked  syncMark // what Sync acknowledged, recorded outside Badger
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
	// (tests).
	loadedSnapshot bool
	// panics counts the panics turned into errors (tests).
	panics atomic.Int64

	// kt holds the key-only full entries when the index has a key table
	// (see keys.go), else nil.
	kt *keytable.Table
	// ktWrote is set by the first key-table write since Open or the last
	// filter snapshot (see ktDirty).
	ktWrote atomic.Bool
	// recordsPending is set while Badger holds idempotency records of
	// key-table writes not yet synced (see syncRecords).
	recordsPending atomic.Bool
	// recordVersions counts the Badger versions those records' commits
	// took (see syncLocked); a commit and its count are one step under
	// recMu held shared, so that Sync reads both at one moment.
	recordVersions atomic.Uint64
	recMu          sync.RWMutex
	// addScratch keeps the working space of key-table adds for the next
	// (see addHashes).
	addScratch sync.Pool
	// format is the format version the index records.
	format uint64
	// created is set when Open created the index.
	created bool
	// testRecordCrash, when set, is called between a key-table add and
	// the write of its record to Badger (tests: an error stands for a
	// crash there).
	testRecordCrash func() error
	// testMoveCrash, when set, is called between the two steps of a move
	// to Badger (see ktMove); an error stops the move there, as a crash.
	testMoveCrash func() error
	// testSnapshotCrash, when set, is called between the write of the
	// snapshot file and the commit of its header; an error stops
	// writeSnapshot there, as a crash.
	testSnapshotCrash func() error
}

// Open opens the index in dir, creating it unless opts says ReadOnly or
// MustExist. A nil opts means defaults.
//
// Before Badger opens the directory, Open checks it without writing to it
// (see "Integrity" in the package documentation): damage (a missing or
// unreadable MANIFEST, a listed table missing, a table file not listed, a
// table whose index does not open) is an error wrapping store.ErrCorrupt
// that names the files; Open never deletes or moves a file.
//
// Errors: store.ErrNoIndex (no index and creation not allowed),
// store.ErrNotIndex (a non-empty directory holding no index, for a
// writable Open), store.ErrLocked, store.ErrNeedsRecovery (read-only after
// a crash), store.ErrCorrupt, store.ErrFormat (newer or malformed format),
// store.ErrProfileMismatch, store.ErrInvalidOptions; all may be wrapped.
func Open(dir string, opts *Options) (_ *DB, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	bo := o.badgerOptions(dir)
	if o.InMemory {
		db := &DB{opts: o, bo: bo}
		defer db.catchOpen(&err)
		if db.bdb, err = openBadger(bo); err != nil {
			return nil, err
		}
		if err := db.init(); err != nil {
			db.bdb.Close()
			return nil, err
		}
		return db, nil
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: empty directory name", store.ErrInvalidOptions)
	}
	s, err := integrity.Inspect(dir)
	if err != nil {
		return nil, err
	}
	fresh := !s.Manifest && !s.HasData()
	if fresh {
		switch {
		case o.ReadOnly || o.MustExist:
			return nil, fmt.Errorf("%w: %s", store.ErrNoIndex, dir)
		case len(s.Foreign) > 0:
			return nil, fmt.Errorf("%w: %s is not empty (%s) and holds no index; give a new or empty directory", store.ErrNotIndex, dir, foreignNames(s.Foreign))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("index: create %s: %w", dir, err)
		}
	}
	db := &DB{path: dir, opts: o, bo: bo}
	db.countCompactions()
	lock, err := lockDir(dir, o.ReadOnly)
	if err != nil {
		return nil, err
	}
	db.lock = lock
	defer func() {
		if err != nil {
			db.lock.release()
		}
	}()
	defer db.catchOpen(&err)
	// Look again now that no other process can change the directory.
	if s, err = integrity.Inspect(dir); err != nil {
		return nil, err
	}
	if err := checkRestoring(dir); err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		// Run files of a load a crash interrupted: temporary, never data.
		if err := extsort.RemoveRuns(dir); err != nil {
			return nil, err
		}
	}
	tables, err := integrity.Check(dir, &s, &db.bo, isSnapshotKey)
	if err != nil {
		return nil, err
	}
	if o.Badger == nil {
		// The codec to write with is asked for or kept; the cache is
		// needed as long as one table is compressed.
		codec := codecs[o.Compression]
		if o.Compression == "" {
			codec = codecOf(tables)
		}
		o.setCodec(&db.bo, codec, anyCompressed(tables))
	}
	if o.Badger == nil && (opts == nil || opts.MemTableSize == 0) && o.keyTableAhead(dir, fresh) {
		db.bo.MemTableSize = KeyTableMemTableSize
	}
	db.guard = integrity.NewGuard(dir, db.bo.BlockSize, tables)
	if err := integrity.CheckKeyRegistry(dir, &db.bo); err != nil {
		return nil, err
	}
	if db.bdb, err = openBadger(db.bo); err != nil {
		return nil, err
	}
	if err := db.checkSynced(s.Mems); err != nil { // the logs before Badger created its next one
		db.bdb.Close()
		return nil, err
	}
	if err := db.init(); err != nil {
		db.bdb.Close()
		db.closeSynced()
		return nil, err
	}
	return db, nil
}

// catchOpen is catch for Open, which has no key range: it names every
// damaged table.
func (db *DB) catchOpen(err *error) {
	if p := recover(); p != nil {
		if db.bdb != nil {
			func() {
				defer func() { recover() }()
				db.bdb.Close()
			}()
		}
		*err = db.panicError(p, nil)
	}
}

// isKeyRegistryError reports whether err is Badger's refusal of its key
// registry file (KEYREGISTRY).
func isKeyRegistryError(err error) bool {
	if errors.Is(err, badger.ErrEncryptionKeyMismatch) || errors.Is(err, badger.ErrInvalidEncryptionKey) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "key registry") || strings.Contains(msg, "keyregistry") || strings.Contains(msg, "encryption key mismatch")
}

// foreignNames names a few of the foreign names of a directory.
func foreignNames(names []string) string {
	slices.Sort(names)
	if len(names) > 3 {
		return fmt.Sprintf("%s, ... %d names", strings.Join(names[:3], ", "), len(names))
	}
	return strings.Join(names, ", ")
}

func openBadger(bo badger.Options) (*badger.DB, error) {
	bdb, err := badger.Open(bo)
	if err != nil {
		// Every condition the index knows (locked, crashed, damaged) is
		// told apart before this call, by its own checks; Badger's errors
		// do not wrap their causes (see TestBadgerBehaviour).
		if isKeyRegistryError(err) {
			// The key registry (no keys: the index is not encrypted) is
			// read before anything else; Badger's message names no file.
			return nil, integrity.KeyRegistryDamaged(bo.Dir, err.Error())
		}
		return nil, fmt.Errorf("index: open %s: %v", bo.Dir, err)
	}
	return bdb, nil
}

// init checks or writes the metadata and loads or rebuilds the filter.
func (db *DB) init() error {
	var format []byte
	var profile []byte
	err := db.bdb.View(func(txn *badger.Txn) error {
		var err error
		if format, err = getCopy(txn, metaKey(metaFormat)); err != nil {
			return err
		}
		profile, err = getCopy(txn, metaKey(metaProfile))
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case format == nil:
		if db.opts.ReadOnly {
			return fmt.Errorf("%w: %s", store.ErrNoIndex, db.path)
		}
		if err := db.writeMeta(true); err != nil {
			return err
		}
		db.format = formatBadger
		db.created = true
	default:
		v, n := binary.Uvarint(format)
		if n != len(format) {
			return fmt.Errorf("%w: bad format record", store.ErrFormat)
		}
		if v > FormatVersion {
			return fmt.Errorf("%w: version %d, this program reads up to %d", store.ErrFormat, v, FormatVersion)
		}
		db.format = v
		db.profile = string(profile)
		if p := db.opts.Profile; p != "" && db.profile != p {
			if db.profile != "" {
				return fmt.Errorf("%w: index has %q, asked for %q", store.ErrProfileMismatch, db.profile, p)
			}
			if !db.opts.ReadOnly {
				if err := db.writeMeta(false); err != nil {
					return err
				}
			}
		}
	}
	if err := db.loadIdentity(); err != nil {
		return err
	}
	if err := db.readTTL(); err != nil {
		return err
	}
	if err := db.openKeyTable(); err != nil {
		return err
	}
	if err := db.loadFilter(); err != nil {
		db.closeKeyTable()
		return err
	}
	return nil
}

// writeMeta records the format version (when format is set) and the
// profile: the one from the options when given, else the one recorded.
func (db *DB) writeMeta(format bool) error {
	if db.opts.Profile != "" {
		db.profile = db.opts.Profile
	}
	err := db.bdb.Update(func(txn *badger.Txn) error {
		if format {
			if err := txn.Set(metaKey(metaFormat), binary.AppendUvarint(nil, formatBadger)); err != nil {
				return err
			}
		}
		if db.profile == "" {
			return nil
		}
		return txn.Set(metaKey(metaProfile), []byte(db.profile))
	})
	return translate(err)
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

// chunkReader reads the filter's chunks in order from txn, one value
// buffer reused, and sums them into crc. A chunk missing is an error
// wrapping store.ErrCorrupt (as before the decoding read chunks itself:
// Open fails); err keeps it, or the error of a read, which the filter's
// decoder would report as mere damage.
type chunkReader struct {
	txn    *badger.Txn
	chunks uint32 // in the snapshot
	i      uint32 // the next chunk to read
	buf    []byte
	cur    []byte // the unread part of chunk i-1
	crc    hash.Hash32
	err    error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.i == r.chunks {
			return 0, io.EOF
		}
		item, err := r.txn.Get(filterChunkKey(r.i))
		if errors.Is(err, badger.ErrKeyNotFound) {
			r.err = fmt.Errorf("%w: filter chunk %d missing", store.ErrCorrupt, r.i)
			return 0, r.err
		}
		if err == nil {
			r.buf, err = item.ValueCopy(r.buf[:0])
		}
		if err != nil {
			r.err = translate(err)
			return 0, r.err
		}
		r.crc.Write(r.buf)
		r.cur = r.buf
		r.i++
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// loadFilter loads the persisted filter when it reflects the current
// database state and rebuilds it from the keys otherwise.
func (db *DB) loadFilter() error {
	if !db.opts.InMemory {
		// A snapshot that cannot be read or is damaged is a cache to
		// rebuild, never a reason to refuse the index.
		if ok, _ := db.loadSnapshot(); ok {
			db.loadedSnapshot = true
			return nil
		}
	}
	return db.rebuildFilter(0)
}

func (db *DB) loadSnapshot() (bool, error) {
	var hdr snapshotHeader
	var f *filter.Filter
	var errDecode error
	var exp *expiryCounts
	err := db.bdb.View(func(txn *badger.Txn) error {
		b, err := getCopy(txn, metaKey(metaSnapshot))
		if err != nil || b == nil {
			return err
		}
		if err := hdr.decode(b); err != nil {
			return err
		}
		if hdr.State != db.bdb.MaxVersion() {
			return nil // stale: written before later changes
		}
		e, err := getCopy(txn, metaKey(metaExpiry))
		if err != nil {
			return err
		}
		if e != nil {
			var state uint64
			if exp, state, err = decodeExpiryCounts(e); err != nil || state != hdr.State {
				exp = nil // damaged, or left by a program that keeps none
			}
		}
		if exp == nil {
			if db.ttl.Load() {
				return nil // rebuild the counts with the filter
			}
			exp = &expiryCounts{} // no entry ever had an expiry
		}
		if hdr.File {
			return nil // read below, outside the transaction
		}
		// The filter is decoded from its chunks as they are read (never
		// the whole encoding beside the filter it decodes to), and checked
		// against its CRC once read.
		cr := &chunkReader{txn: txn, chunks: hdr.Chunks, crc: crc32.New(castagnoli)}
		f, errDecode = filter.Decode(hdr.Bits, cr, hdr.FullLen, hdr.ShortLen)
		if cr.err != nil {
			return cr.err
		}
		if errDecode == nil && (cr.i != hdr.Chunks || len(cr.cur) != 0 || cr.crc.Sum32() != hdr.CRC) {
			errDecode = fmt.Errorf("%w: filter chunks do not match their header", store.ErrCorrupt)
		}
		return nil
	})
	if err == nil && hdr.File && exp != nil {
		// A file that does not match its header (a crash between the
		// two writes, damage) is a cache to rebuild.
		f, errDecode = readSnapshotFile(db.path, &hdr)
	}
	if err != nil || (f == nil && errDecode == nil) {
		return false, err
	}
	if errDecode != nil {
		return false, nil // rebuild rather than trust it
	}
	db.setFilter(f)
	db.entries.Store(int64(hdr.Entries))
	db.prefixEntries.Store(int64(hdr.PrefixEntries))
	db.setExpiry(exp)
	db.snapState = hdr.State
	db.snapInBadger = !hdr.File
	return true, nil
}

// rebuildFilter rebuilds the filter and counts by key-only iteration, with
// width at least k, after verifying every table not verified yet (an
// iteration stops silently at a damaged block, and a filter built from it
// would answer "absent" for the keys it missed). The caller excludes
// writers.
func (db *DB) rebuildFilter(k uint8) error {
	if err := db.guard.CheckAll(); err != nil {
		return err
	}
	var leads []uint64
	var shorts []uint32
	exp := &expiryCounts{}
	err := db.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{tagFull}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if len(key) != fullKeyLen {
				return fmt.Errorf("%w: full key of %d bytes", store.ErrCorrupt, len(key))
			}
			leads = append(leads, binary.BigEndian.Uint64(key[1:]))
			if x := item.ExpiresAt(); x != 0 {
				exp.add(x, kindFull, 1)
			}
		}
		it2 := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{tagPrefix}})
		defer it2.Close()
		for it2.Rewind(); it2.Valid(); it2.Next() {
			item := it2.Item()
			key := item.Key()
			if len(key) < 1+store.MinPrefixEntryLen || len(key) > 1+store.MaxPrefixEntryLen {
				return fmt.Errorf("%w: prefix key of %d bytes", store.ErrCorrupt, len(key))
			}
			shorts = append(shorts, binary.BigEndian.Uint32(key[1:]))
			if x := item.ExpiresAt(); x != 0 {
				exp.add(x, kindPrefix, 1)
			}
		}
		return nil
	})
	if err != nil {
		return translate(err)
	}
	// The key table's keys (most of them, in an index that has one) are
	// streamed into the filter in key order (which appends them to its
	// flat form in place): holding them all, 8 bytes a key, cost 800 MB at
	// 100M entries. The filter is sized by the table's live count, which
	// also counts a key in both stores (a move a crash interrupted): such
	// a key is counted once, as Badger's, and the key table's copy
	// deleted.
	var ktLive uint64
	if db.kt != nil {
		ktLive = uint64(db.kt.Len())
	}
	k = max(k, filter.BitsFor(uint64(len(leads))+ktLive))
	f := filter.New(k)
	f.Expect(uint64(len(leads)) + ktLive)
	batch := make([]uint64, 0, 1<<16)
	var ktFull uint64
	var copies []keytable.Key
	err = db.ktCopies(func(key *keytable.Key, inBadger bool) error {
		if inBadger {
			copies = append(copies, *key)
			return nil
		}
		if batch = append(batch, binary.BigEndian.Uint64(key[:8])); len(batch) == cap(batch) {
			batch = f.AddLeads(batch, batch[:0])[:0]
		}
		ktFull++
		return nil
	})
	if err != nil {
		return err
	}
	if len(copies) > 0 && !db.opts.ReadOnly {
		if err := db.ktDelete(copies); err != nil {
			return err
		}
	}
	f.AddLeads(batch, batch[:0])
	f.AddLeads(leads, leads[:0])
	f.AddPrefixes(shorts)
	db.fmu.Lock()
	db.setFilter(f)
	db.fmu.Unlock()
	db.entries.Store(int64(uint64(len(leads)) + ktFull))
	db.prefixEntries.Store(int64(len(shorts)))
	db.setExpiry(exp)
	return nil
}

// maybeGrow starts widening the filter in the background when the entry
// count outgrew it. The wider filter is built from a snapshot of the keys
// while writers go on: from the moment the snapshot is taken (with every
// writer stripe held, so no write is between its filter update and its
// commit) writers add their keys to both filters, and lookups keep using
// the old one until the new one is complete.
func (db *DB) maybeGrow() {
	if !db.needGrow() || !db.growing.CompareAndSwap(false, true) {
		return
	}
	if err := db.begin(context.Background()); err != nil {
		db.growing.Store(false)
		return
	}
	if db.stopGrow.Load() {
		db.mu.RUnlock()
		db.growing.Store(false)
		return
	}
	for i := range db.stripes {
		db.stripes[i].Lock()
	}
	db.pmu.Lock()
	db.fmu.Lock()
	k := filter.BitsFor(2 * uint64(db.entries.Load())) // grow once per doubling
	next := db.f.Wider(k)
	db.next = next
	db.fmu.Unlock()
	txn := db.bdb.NewTransaction(false)
	db.pmu.Unlock()
	for i := range db.stripes {
		db.stripes[i].Unlock()
	}
	db.growWG.Add(1)
	go func() {
		defer db.growWG.Done()
		defer db.growing.Store(false)
		defer db.mu.RUnlock()
		defer txn.Discard()
		ok := db.fillFilter(txn, next)
		db.fmu.Lock()
		if ok {
			db.setFilter(next)
		}
		db.next = nil
		db.fmu.Unlock()
	}()
}

// setFilter installs f as the filter. The caller holds fmu, or is Open.
func (db *DB) setFilter(f *filter.Filter) { db.f = f }

// fillFilter adds the full keys visible to txn to f, in batches, and
// reports whether it finished (Close stops it, and damage found in a table
// fails it: the old filter stays, complete).
func (db *DB) fillFilter(txn *badger.Txn, f *filter.Filter) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if db.guard.CheckAll() != nil {
		db.growFailed.Store(true)
		return false
	}
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{tagFull}})
	defer it.Close()
	batch := make([]uint64, 0, 1<<16)
	flush := func() {
		db.fmu.Lock()
		f.AddLeads(batch, batch[:0])
		db.fmu.Unlock()
		batch = batch[:0]
	}
	for it.Rewind(); it.Valid(); it.Next() {
		if db.stopGrow.Load() {
			return false
		}
		key := it.Item().Key()
		if len(key) == fullKeyLen {
			batch = append(batch, binary.BigEndian.Uint64(key[1:]))
		}
		if len(batch) == cap(batch) {
			flush()
		}
	}
	for key, err := range db.ktKeys(nil, 0) {
		if err != nil || db.stopGrow.Load() {
			return false
		}
		batch = append(batch, binary.BigEndian.Uint64(key[:8]))
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
	return true
}

func (db *DB) needGrow() bool {
	db.fmu.RLock()
	narrow := db.f.IsTooNarrowFor(uint64(db.entries.Load()))
	db.fmu.RUnlock()
	return narrow && !db.growFailed.Load()
}

// writeSnapshot persists the filter and counts: the filter's encoding in
// the snapshot file, then its header and the counts in one transaction,
// which deletes the chunks of a version 1 snapshot. The caller excludes
// writers.
func (db *DB) writeSnapshot() error {
	hdr := snapshotHeader{
		File:          true,
		Entries:       uint64(db.entries.Load()),
		PrefixEntries: uint64(db.prefixEntries.Load()),
		Bits:          db.f.Bits(),
	}
	// The transaction below commits at the next version; the snapshot is
	// current exactly while no later write exists. The file records that
	// version too: until the header is committed, the header on disk (an
	// older one) does not match it.
	hdr.State = db.bdb.MaxVersion() + 1
	var err error
	if hdr.CRC, hdr.FullLen, hdr.ShortLen, err = writeSnapshotFile(db.path, hdr.State, db.f.Encode); err != nil {
		return err
	}
	hdr.Size = snapshotFileLen(hdr.FullLen, hdr.ShortLen)
	if db.testSnapshotCrash != nil {
		if err := db.testSnapshotCrash(); err != nil {
			return err
		}
	}
	err = db.bdb.Update(func(txn *badger.Txn) error {
		// Every chunk, whatever header (if any) listed it: a damaged
		// version 1 header must not leave its chunks behind for good.
		var chunks [][]byte
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: metaKey(metaFilter)})
		for it.Rewind(); it.Valid(); it.Next() {
			chunks = append(chunks, it.Item().KeyCopy(nil))
		}
		it.Close()
		for _, k := range chunks {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		// Counts too large for one value (spread over more than a few
		// million distinct seconds) are left out: the next Open counts
		// again, by the key-only pass that rebuilds the filter.
		var errExp error
		if e := db.encodeExpiry(hdr.State); len(e) <= maxExpiryRecord {
			errExp = txn.Set(metaKey(metaExpiry), e)
		} else {
			errExp = txn.Delete(metaKey(metaExpiry))
		}
		if errExp != nil {
			return errExp
		}
		return txn.Set(metaKey(metaSnapshot), hdr.appendBinary(nil))
	})
	if err == nil {
		db.ktWrote.Store(false)
		db.snapInBadger = false
	}
	return translate(err)
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
	// The last sync number goes in before the snapshot, which records
	// Badger's version: a snapshot written after it stays current.
	var seq uint64
	var errMark error
	if !db.opts.InMemory && !db.opts.ReadOnly {
		db.acked.mu.Lock()
		defer db.acked.mu.Unlock()
		seq, errMark = db.markSync()
	}
	var errSnap error
	// The snapshot is a cache: written only when the one on disk is not
	// current, and skipped without room for it or when a table is
	// damaged (the next Open rebuilds the filter).
	if !db.opts.InMemory && !db.opts.ReadOnly && (db.bdb.MaxVersion() != db.snapState || db.snapInBadger) &&
		db.roomFor(2*int64(db.f.SizeBytes())) == nil && db.prepareWrite() == nil {
		errSnap = db.writeSnapshot()
	}
	errKT := db.closeKeyTable()
	errClose := translate(db.bdb.Close())
	if errMark == nil && errClose == nil {
		errMark = db.recordSync(seq, true)
	}
	return errors.Join(errSnap, errKT, errClose, errMark, db.closeSynced(), db.lock.release())
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
	if db.kt != nil {
		if err := db.kt.Sync(); err != nil {
			return fmt.Errorf("index: key table: %w", err)
		}
	}
	db.acked.mu.Lock()
	defer db.acked.mu.Unlock()
	// Every Badger write commits at a new version: when none did since
	// the last Sync made Badger durable, it has nothing to sync (a
	// seen-set on a key table writes only to the key table), nor when
	// each did for an idempotency record that the key table's log holds
	// too (a served dedupe's batches): the log is durable, and the key
	// table syncs Badger before it drops a log segment (syncRecords).
	if db.kt != nil && db.acked.synced != 0 {
		v, records := db.badgerVersion()
		if v-db.acked.synced == records-db.acked.syncedRecords {
			db.acked.synced, db.acked.syncedRecords = v, records
			return nil
		}
	}
	seq, err := db.markSync()
	if err != nil {
		return err
	}
	v, records := db.badgerVersion() // what the fsync below covers, at least
	if err := db.bdb.Sync(); err != nil {
		return translate(err)
	}
	if err := db.syncMemtables(); err != nil {
		return err
	}
	if err := db.recordSync(seq, false); err != nil {
		return err
	}
	db.acked.synced, db.acked.syncedRecords = v, records
	return nil
}

// badgerVersion returns Badger's version and the count of record commits
// (recordVersions) at one moment: every record counted has committed at
// that version or before.
func (db *DB) badgerVersion() (version, records uint64) {
	db.recMu.Lock()
	defer db.recMu.Unlock()
	return db.committed(), db.recordVersions.Load()
}

// committed returns the version of Badger's last commit. Badger's
// MaxVersion reads its memtable's maximum without synchronisation with a
// write in progress (a data race); a read transaction's timestamp is that
// version, once every commit up to it has finished.
func (db *DB) committed() uint64 {
	txn := db.bdb.NewTransaction(false)
	defer txn.Discard()
	return txn.ReadTs()
}

// syncMemtables fsyncs every memtable log in the directory. Badger's Sync
// covers only the active memtable; one rotated out but not yet flushed to a
// table holds acknowledged writes that a power loss would otherwise take.
// (A killed process loses none of them: the pages are in the OS's cache.)
func (db *DB) syncMemtables() error {
	logs, err := filepath.Glob(filepath.Join(db.bo.Dir, "*.mem"))
	if err != nil {
		return fmt.Errorf("index: sync: %w", err)
	}
	for _, name := range logs {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue // flushed and removed meanwhile
		}
		if err != nil {
			return fmt.Errorf("index: sync: %w", err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("index: sync %s: %w", name, err)
		}
	}
	return nil
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
	err = db.bdb.Update(func(txn *badger.Txn) error { return txn.Set(metaKey(metaProfile), []byte(name)) })
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

// beginWrite is begin for writes.
func (db *DB) beginWrite(ctx context.Context) error {
	if err := db.begin(ctx); err != nil {
		return err
	}
	if db.opts.ReadOnly {
		db.mu.RUnlock()
		return store.ErrReadOnly
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
