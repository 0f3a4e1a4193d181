package index

import (
	"bytes"
	"iter"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/urlhash/urlhash/store"
)

// Load stores every entry of seq whose key is not stored yet (like
// AddBatch, the first of repeated keys wins; stored values are kept) and
// returns the counts. It collects the whole input (about 90 bytes per
// entry plus values) and takes the write path of AddBatch (plan, admit,
// count); it then writes the new keys as sorted tables straight into the
// LSM tree when Badger allows (always for an index with no entries and for
// the first load after Open, else after flushing the memtables by reopening
// Badger), and through a write batch otherwise. Everything Load added is
// durable when it returns. Other operations wait while Load runs. A bad
// entry fails the load before anything is written.
func (db *DB) Load(seq iter.Seq[store.Entry]) (_ store.LoadResult, err error) {
	defer db.catch(&err)
	var entries []store.Entry
	for e := range seq {
		if err := db.check(&e); err != nil {
			return store.LoadResult{}, err
		}
		if !e.Value.IsZero() {
			// The caller may reuse its buffers between yields.
			e.Value.Text, e.Value.Data = bytes.Clone(e.Value.Text), bytes.Clone(e.Value.Data)
		}
		entries = append(entries, e)
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return store.LoadResult{}, store.ErrClosed
	}
	if db.opts.ReadOnly {
		return store.LoadResult{}, store.ErrReadOnly
	}
	if err := db.prepareWrite(); err != nil {
		return store.LoadResult{}, err
	}
	p, err := db.plan(entries, false)
	if err != nil {
		return store.LoadResult{}, err
	}
	res := store.LoadResult{Present: int64(len(entries) - len(p.order))}
	fresh := make([]int, 0, len(p.order))
	var newFull int64
	for j, i := range p.order {
		if p.existed[j] {
			res.Present++
			continue
		}
		fresh = append(fresh, i)
		if !entries[i].IsPrefix() {
			newFull++
		}
	}
	res.Added = int64(len(fresh))
	if len(fresh) == 0 {
		return res, nil
	}
	// The new tables, and (into a non-empty index) the flattened tree
	// rewritten before the old tables go.
	var cost int64
	for _, i := range fresh {
		cost += entryCost(&entries[i])
	}
	if db.entries.Load()+db.prefixEntries.Load() > 0 {
		cost += db.tableBytes()
	}
	if err := db.roomFor(cost); err != nil {
		return store.LoadResult{}, err
	}

	// Widen the filter first if the load outgrows it, then add the keys.
	if k := filterBitsFor(uint64(db.entries.Load() + newFull)); k > db.f.k {
		if err := db.rebuildFilter(k); err != nil {
			return store.LoadResult{}, err
		}
	}
	db.admit(entries, fresh, nil)
	if err := db.noteTTL(entries); err != nil {
		return store.LoadResult{}, err
	}
	streamed, err := db.loadStream(entries, fresh)
	if err != nil {
		return store.LoadResult{}, err
	}
	if !streamed {
		if err := db.loadBatch(entries, fresh); err != nil {
			return store.LoadResult{}, err
		}
	}
	db.count(entries, p)
	res.Streamed = streamed
	if !db.opts.InMemory {
		// The tables are synced; this syncs metadata rewritten after a
		// fresh stream.
		if err := db.bdb.Sync(); err != nil {
			return store.LoadResult{}, translate(err)
		}
	}
	db.freeze()
	return res, nil
}

// loadStream writes entries[idx] (in key order) with a StreamWriter. It
// reports false (and writes nothing) when Badger cannot take them that way.
func (db *DB) loadStream(entries []store.Entry, idx []int) (bool, error) {
	if db.opts.InMemory {
		return false, nil
	}
	if db.stream(entries, idx) == nil {
		return true, nil
	}
	// Badger refuses while a memtable holds data. Flush the memtables by
	// reopening Badger, then stream above the tree. (Dropping the tree to
	// stream into an empty one would be faster, but the counts that say
	// "empty" may be wrong after a crash or a failed batch, and the
	// metadata would be gone until rewritten.)
	if err := db.reopen(); err != nil {
		return false, err
	}
	if db.stream(entries, idx) == nil {
		return true, nil
	}
	// Still refused: the caller writes through a batch, which reports any
	// error that was not Badger's refusal.
	return false, nil
}

// stream runs one StreamWriter whose tables go above the existing ones
// (PrepareIncremental). It returns errMemtable when a memtable holds data.
func (db *DB) stream(entries []store.Entry, idx []int) error {
	// PrepareIncremental flattens the tree itself when level 0 holds
	// tables and then assumes the data landed in the last level, which is
	// not always so (badger v4.9.6: "Inter: Biggest(j-1)" overlap).
	// Flatten first so it sees the level the data is really in.
	if lv := db.bdb.Levels(); len(lv) > 0 && lv[0].NumTables > 0 {
		if err := db.bdb.Flatten(2); err != nil {
			return translate(err)
		}
	}
	ver := db.bdb.MaxVersion() + 1
	sw := db.bdb.NewStreamWriter()
	if err := sw.PrepareIncremental(); err != nil {
		// Badger refuses while a memtable holds data; its error is a
		// plain string, so the caller treats any refusal alike.
		sw.Cancel()
		return translate(err)
	}
	const flushAt = 32 << 20
	buf := z.NewBuffer(flushAt+(1<<20), "index.Load")
	defer func() { buf.Release() }()
	kv := &pb.KV{Version: ver, StreamId: 1}
	for _, i := range idx {
		e := &entries[i]
		kv.Key = dbKey(e)
		kv.Value = appendValue(nil, e.Value)
		kv.ExpiresAt = expiresAt(&e.Value)
		badger.KVToBuffer(kv, buf)
		if buf.LenNoPadding() >= flushAt {
			if err := sw.Write(buf); err != nil {
				sw.Cancel()
				return translate(err)
			}
			buf.Release()
			buf = z.NewBuffer(flushAt+(1<<20), "index.Load")
		}
	}
	if err := sw.Write(buf); err != nil {
		sw.Cancel()
		return translate(err)
	}
	return translate(sw.Flush())
}

// reopen closes and reopens Badger, which flushes the memtables to tables.
// The caller holds db.mu exclusively.
func (db *DB) reopen() error {
	if err := db.bdb.Close(); err != nil {
		db.closed = true
		return translate(err)
	}
	bdb, err := openBadger(db.bo)
	if err != nil {
		db.closed = true
		return err
	}
	db.bdb = bdb
	return nil
}

// loadBatch writes entries[idx] through a WriteBatch.
func (db *DB) loadBatch(entries []store.Entry, idx []int) error {
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	for _, i := range idx {
		e := &entries[i]
		if err := wb.SetEntry(badgerEntry(e)); err != nil {
			return translate(err)
		}
	}
	return translate(wb.Flush())
}
