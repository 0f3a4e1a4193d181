package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/store"
)

// snapshotChunk is the size of one filter chunk of a version 1 snapshot
// (which this package reads, and writes no more).
const snapshotChunk = 1 << 20

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

// A snapshot is the header and expiry counts of a current filter
// snapshot (see readSnapshot).
type snapshot struct {
	hdr snapshotHeader
	exp *expiryCounts
}

// readSnapshot (step 12 of Open) trusts Badger: the persisted filter
// snapshot is current when its header records Badger's version (no write
// since, in either store: the key table's first write after a snapshot
// marks it stale in Badger) and the expiry counts were written with it.
// It returns nil when the snapshot is missing, stale (the last process
// did not close cleanly, or another program wrote) or unreadable: the
// stores are then reconciled and the filter and counts rebuilt. It
// repairs nothing.
func (db *DB) readSnapshot() (*snapshot, error) {
	var snap snapshot
	current := false
	err := db.st.bdb.View(func(txn *badger.Txn) error {
		b, err := getCopy(txn, metaKey(metaSnapshot))
		if err != nil || b == nil {
			return err
		}
		if err := snap.hdr.decode(b); err != nil {
			return nil // a cache to rebuild
		}
		if snap.hdr.State != db.st.bdb.MaxVersion() {
			return nil // stale: written before later changes
		}
		e, err := getCopy(txn, metaKey(metaExpiry))
		if err != nil {
			return err
		}
		if e != nil {
			var state uint64
			if snap.exp, state, err = decodeExpiryCounts(e); err != nil || state != snap.hdr.State {
				snap.exp = nil // damaged, or left by a program that keeps none
			}
		}
		if snap.exp == nil {
			if db.ttl.Load() {
				return nil // rebuild the counts with the filter
			}
			snap.exp = &expiryCounts{} // no entry ever had an expiry
		}
		current = true
		return nil
	})
	if err != nil || !current {
		// A snapshot that cannot be read is a cache to rebuild, never a
		// reason to refuse the index.
		return nil, nil
	}
	return &snap, nil
}

// loadFilter (step 14 of Open) trusts the stores, reconciled: it takes
// the counts of snap (nil: none current) and loads its filter when its
// encoding matches its header (sizes, CRC), and otherwise rebuilds both
// by a key-only pass of the stores (after verifying every table). A
// snapshot that does not decode is rebuilt, never a reason to refuse the
// index.
//
// The filter of a snapshot file (2.1 bytes a key: 210 MB at 100M keys,
// seconds to read and decode) loads in the background, so that a command
// answers before it is in: the filter is only ever a shortcut. Meanwhile
// a lookup that finds its key in the stores answers at once, one that
// does not waits for the filter (which answers most absent keys, and
// whose "maybe" has the tables checked, see integrity.Guard), and writes
// wait for it (they admit their keys to it first). A version 1 snapshot
// (chunks in Badger) is decoded here.
func (db *DB) loadFilter(snap *snapshot) error {
	if snap != nil {
		db.setCounts(int64(snap.hdr.Entries), int64(snap.hdr.PrefixEntries), snap.exp)
		db.snapState = snap.hdr.State
		db.snapInBadger = !snap.hdr.File
		db.loadedSnapshot.Store(true)
		if snap.hdr.File {
			db.fhdr = snap.hdr
			db.fwg.Add(1)
			go db.loadSnapshotFile()
			return nil
		}
		if f, err := db.decodeSnapshot(&snap.hdr); err == nil {
			db.setFilter(f)
			db.filterIn(nil)
			return nil
		}
		db.loadedSnapshot.Store(false)
		db.snapState = 0 // Close writes it again
	}
	if db.rebuildsInBackground() {
		db.rebuilding.Store(true)
		db.fwg.Add(1)
		go func() {
			defer db.fwg.Done()
			if db.opts.beforeFilterLoad != nil {
				db.opts.beforeFilterLoad()
			}
			db.filterIn(db.rebuildFilter(0, &db.fstop))
		}()
		return nil
	}
	if err := db.rebuildFilter(0, nil); err != nil {
		return err
	}
	db.filterIn(nil)
	return nil
}

// backgroundRebuild is the key table's size from which Open rebuilds the
// filter and the counts in the background (no current snapshot: the last
// process did not close): the pass reads every key, about 0.4 s a million.
const backgroundRebuild = 1 << 20

// rebuildsInBackground reports whether Open's rebuild of the filter runs
// in the background: on disk, for a key table of backgroundRebuild keys
// or more. Meanwhile reads answer from the stores alone, verifying what
// they do not find (see readsUnfiltered); writes and the counts wait.
func (db *DB) rebuildsInBackground() bool {
	if db.opts.InMemory || db.st.kt == nil {
		return false
	}
	if db.opts.backgroundRebuild {
		return true
	}
	return db.st.kt.Len() >= backgroundRebuild
}

// readsUnfiltered reports whether reads go to the stores without the
// filter: it is being rebuilt in the background, and a read that waited
// would wait for a pass over every key.
func (db *DB) readsUnfiltered() bool { return !db.fin.Load() && db.rebuilding.Load() }

// loadSnapshotFile is loadFilter's background load of db.fhdr's file: a
// file that does not match its header (a crash between the two writes,
// damage) is rebuilt from the keys, as Open would have; a rebuild that
// fails (damaged tables) leaves the error to every operation that needs
// the filter. Close stops it.
func (db *DB) loadSnapshotFile() {
	defer db.fwg.Done()
	if db.opts.beforeFilterLoad != nil {
		db.opts.beforeFilterLoad()
	}
	f, err := readSnapshotFile(db.path, &db.fhdr, &db.fstop)
	switch {
	case err == nil:
		db.fmu.Lock()
		db.setFilter(f)
		db.fmu.Unlock()
	case db.fstop.Load():
		err = store.ErrClosed
	default:
		db.loadedSnapshot.Store(false)
		db.snapState = 0 // Close writes it again
		err = db.rebuildFilter(0, nil)
	}
	db.filterIn(err)
}

// filterIn records that the filter is in (err nil) or cannot be, and
// wakes those waiting for it.
func (db *DB) filterIn(err error) {
	db.ferr = err
	db.fin.Store(err == nil)
	close(db.fready)
}

// waitFilter waits until the filter is in, and returns the error that
// kept it out (a damaged index whose snapshot did not decode).
func (db *DB) waitFilter() error {
	if db.fin.Load() {
		return nil
	}
	<-db.fready
	return db.ferr
}

// decodeSnapshot decodes the filter hdr describes: from the snapshot
// file, or (version 1) from its chunks in Badger, decoded as they are
// read (never the whole encoding beside the filter it decodes to), and
// checked against the CRC once read. A file that does not match its
// header (a crash between the two writes, damage) is an error.
func (db *DB) decodeSnapshot(hdr *snapshotHeader) (*filter.Filter, error) {
	if hdr.File {
		return readSnapshotFile(db.path, hdr, nil)
	}
	var f *filter.Filter
	var errDecode error
	err := db.st.bdb.View(func(txn *badger.Txn) error {
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
	return f, cmp.Or(err, errDecode)
}

// rebuildFilter rebuilds the filter and counts by key-only iteration, with
// width at least k, after verifying every table not verified yet (an
// iteration stops silently at a damaged block, and a filter built from it
// would answer "absent" for the keys it missed). The caller excludes
// writers. stop (may be nil), once set, ends it with store.ErrClosed.
func (db *DB) rebuildFilter(k uint8, stop *atomic.Bool) error {
	if err := db.st.guard.CheckAll(); err != nil {
		return err
	}
	// The filter is made once the pass knows how many full entries there
	// are, and takes the key table's (most of them, in an index that has
	// one) as they are read, in key order (which appends them to its flat
	// form in place).
	var f *filter.Filter
	n, err := db.st.keyPass(stop, func(full uint64) {
		f = filter.New(max(k, filter.BitsFor(full)))
		f.Expect(full)
	}, func(leads []uint64) {
		f.AddLeads(leads, leads[:0])
	}, func(shorts []uint32) {
		f.AddPrefixes(shorts)
	})
	if err != nil {
		return err
	}
	db.fmu.Lock()
	db.setFilter(f)
	db.fmu.Unlock()
	db.setCounts(int64(n.full), int64(n.prefix), n.exp)
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
	txn := db.st.bdb.NewTransaction(false)
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
	if db.st.guard.CheckAll() != nil {
		db.growFailed.Store(true)
		return false
	}
	batch := make([]uint64, 0, 1<<16)
	flush := func() {
		slices.Sort(batch) // the key table's come in no order
		db.fmu.Lock()
		f.AddLeads(batch, batch[:0])
		db.fmu.Unlock()
		batch = batch[:0]
	}
	done := db.st.fullLeads(txn, func(lead uint64) bool {
		if db.stopGrow.Load() {
			return false
		}
		if batch = append(batch, lead); len(batch) == cap(batch) {
			flush()
		}
		return true
	})
	if !done {
		return false
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
	hdr := snapshotHeader{File: true, Bits: db.f.Bits()}
	// The transaction below commits at the next version; the snapshot is
	// current exactly while no later write exists. The file records that
	// version too: until the header is committed, the header on disk (an
	// older one) does not match it.
	hdr.State = db.st.bdb.MaxVersion() + 1
	// The counts at one moment: a key-table merge may report expired
	// rows it dropped meanwhile (see dropExpired).
	full, prefixes, exp := db.countsSnapshot(hdr.State)
	hdr.Entries, hdr.PrefixEntries = uint64(full), uint64(prefixes)
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
	err = db.st.update(func(txn *badger.Txn) error {
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
		// million distinct seconds), or for the tree (see valueOrder),
		// are left out: the next Open counts again, by the key-only pass
		// that rebuilds the filter.
		var errExp error
		if len(exp) <= maxExpiryRecord && !db.st.order.large(len(exp)) {
			errExp = txn.Set(metaKey(metaExpiry), exp)
		} else {
			errExp = txn.Delete(metaKey(metaExpiry))
		}
		if errExp != nil {
			return errExp
		}
		return txn.Set(metaKey(metaSnapshot), hdr.appendBinary(nil))
	})
	if err == nil {
		db.st.snapshotWritten()
		db.snapInBadger = false
	}
	return translate(err)
}
