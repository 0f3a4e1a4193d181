package index

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// loadItem is an input entry in compact form.
type loadItem struct {
	h   hashkey.Hash
	n   uint8 // key length
	val int32 // index into values, or -1
	ord int32 // input position, to keep the first of repeated keys
}

func (it *loadItem) key() []byte { return it.h[:it.n] }

func (it *loadItem) isPrefix() bool { return it.n != hashkey.Size }

func (it *loadItem) dbKey() []byte {
	k := make([]byte, 1+it.n)
	k[0] = tagFull
	if it.isPrefix() {
		k[0] = tagPrefix
	}
	copy(k[1:], it.key())
	return k
}

func compareItems(a, b *loadItem) int {
	if ap, bp := a.isPrefix(), b.isPrefix(); ap != bp {
		if bp {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.key(), b.key())
}

// Load stores every entry of seq whose key is not stored yet (like
// AddBatch, the first of repeated keys wins; stored values are
// kept) and returns the counts. It collects and sorts the whole input
// (about 40 bytes per entry plus values), then writes the new keys as
// sorted tables straight into the LSM tree when Badger allows (always for
// an index with no entries and for the first load after Open, else after
// flushing the memtables by reopening Badger), and through a write batch
// otherwise. Everything Load added is durable when it returns. Other
// operations wait while Load runs. A bad entry fails the load before
// anything is written.
func (db *DB) Load(seq iter.Seq[store.Entry]) (store.LoadResult, error) {
	var items []loadItem
	var values []store.Value
	for e := range seq {
		if err := e.Check(); err != nil {
			return store.LoadResult{}, err
		}
		if len(items) == math.MaxInt32 {
			return store.LoadResult{}, fmt.Errorf("%w: more than %d entries in one load", store.ErrInvalidOptions, math.MaxInt32)
		}
		it := loadItem{h: e.Hash, n: hashkey.Size, val: -1, ord: int32(len(items))}
		if e.IsPrefix() {
			it.n = uint8(e.Len)
		}
		if !e.Value.IsZero() {
			// The caller may reuse its buffers between yields.
			it.val = int32(len(values))
			values = append(values, store.Value{Text: bytes.Clone(e.Value.Text), Data: bytes.Clone(e.Value.Data)})
		}
		items = append(items, it)
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return store.LoadResult{}, store.ErrClosed
	}
	if db.opts.ReadOnly {
		return store.LoadResult{}, store.ErrReadOnly
	}

	slices.SortFunc(items, func(a, b loadItem) int {
		if c := compareItems(&a, &b); c != 0 {
			return c
		}
		return cmp.Compare(a.ord, b.ord)
	})
	var res store.LoadResult
	uniq := items[:0]
	for i := range items {
		if i > 0 && compareItems(&items[i-1], &items[i]) == 0 {
			res.Present++
			continue
		}
		uniq = append(uniq, items[i])
	}
	items = uniq

	// Which keys are stored already: the filter, then one ordered pass.
	var keys [][]byte
	var pos []int
	for i := range items {
		it := &items[i]
		if db.f.mayHaveEntry(&it.h, it.isPrefix()) {
			keys = append(keys, it.dbKey())
			pos = append(pos, i)
		}
	}
	present := make([]bool, len(items))
	if len(keys) > 0 {
		found, err := db.seekAll(keys, nil)
		if err != nil {
			return store.LoadResult{}, err
		}
		for j, p := range pos {
			present[p] = found[j]
		}
	}
	fresh := items[:0:0]
	var newFull, newPrefix int64
	for i := range items {
		if present[i] {
			res.Present++
			continue
		}
		fresh = append(fresh, items[i])
		if items[i].isPrefix() {
			newPrefix++
		} else {
			newFull++
		}
	}
	res.Added = int64(len(fresh))
	if len(fresh) == 0 {
		return res, nil
	}

	// Widen the filter first if the load outgrows it, then add the keys.
	if k := filterBitsFor(uint64(db.entries.Load() + newFull)); k > db.f.k {
		if err := db.rebuildFilter(k); err != nil {
			return store.LoadResult{}, err
		}
	}
	db.fmu.Lock()
	for i := range fresh {
		if fresh[i].isPrefix() {
			db.f.addPrefix(fresh[i].key())
		} else {
			db.f.addFull(&fresh[i].h)
		}
	}
	db.fmu.Unlock()

	streamed, err := db.loadStream(fresh, values)
	if err != nil {
		return store.LoadResult{}, err
	}
	if !streamed {
		if err := db.loadBatch(fresh, values); err != nil {
			return store.LoadResult{}, err
		}
	}
	db.entries.Add(newFull)
	db.prefixEntries.Add(newPrefix)
	res.Streamed = streamed
	if !db.opts.InMemory {
		// The tables are synced; this syncs metadata rewritten after a
		// fresh stream.
		if err := db.bdb.Sync(); err != nil {
			return store.LoadResult{}, translate(err)
		}
	}
	return res, nil
}

var errMemtable = errors.New("index: memtable not empty")

// loadStream writes sorted new items with a StreamWriter. It reports false
// (and writes nothing) when Badger cannot take them that way.
func (db *DB) loadStream(items []loadItem, values []store.Value) (bool, error) {
	if db.opts.InMemory {
		return false, nil
	}
	err := db.stream(items, values)
	if errors.Is(err, errMemtable) {
		// Flush the memtables by reopening Badger, then stream above the
		// tree. (Dropping the tree to stream into an empty one would be
		// faster, but the counts that say "empty" may be wrong after a
		// crash or a failed batch, and the metadata would be gone until
		// rewritten.)
		if err = db.reopen(); err == nil {
			err = db.stream(items, values)
		}
	}
	if errors.Is(err, errMemtable) {
		return false, nil
	}
	return err == nil, err
}

// stream runs one StreamWriter whose tables go above the existing ones
// (PrepareIncremental). It returns errMemtable when a memtable holds data.
func (db *DB) stream(items []loadItem, values []store.Value) error {
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
		sw.Cancel()
		if bytes.Contains([]byte(err.Error()), []byte("MemTable has data")) {
			return errMemtable
		}
		return translate(err)
	}
	const flushAt = 32 << 20
	buf := z.NewBuffer(flushAt+(1<<20), "index.Load")
	defer func() { buf.Release() }()
	kv := &pb.KV{Version: ver, StreamId: 1}
	for i := range items {
		it := &items[i]
		kv.Key = it.dbKey()
		kv.Value = nil
		if it.val >= 0 {
			kv.Value = appendValue(nil, values[it.val])
		}
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

// loadBatch writes items through a WriteBatch.
func (db *DB) loadBatch(items []loadItem, values []store.Value) error {
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	for i := range items {
		it := &items[i]
		var v []byte
		if it.val >= 0 {
			v = appendValue(nil, values[it.val])
		}
		if err := wb.Set(it.dbKey(), v); err != nil {
			return translate(err)
		}
	}
	return translate(wb.Flush())
}
