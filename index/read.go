package index

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Get returns the value of the full entry h, or store.ErrNotFound. The value's
// slices belong to the caller.
func (db *DB) Get(h hashkey.Hash) (store.Value, error) {
	if err := db.begin(); err != nil {
		return store.Value{}, err
	}
	defer db.mu.RUnlock()
	db.fmu.RLock()
	maybe := db.f.mayHaveFull(&h)
	db.fmu.RUnlock()
	if !maybe {
		return store.Value{}, store.ErrNotFound
	}
	k := fullKey(&h)
	var v store.Value
	err := db.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k[:])
		if err != nil {
			return err
		}
		if item.ValueSize() == 0 {
			return nil
		}
		b, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		v, err = decodeValue(b)
		return err
	})
	return v, translate(err)
}

// Has reports whether the full entry h is stored.
func (db *DB) Has(h hashkey.Hash) (bool, error) {
	if err := db.begin(); err != nil {
		return false, err
	}
	defer db.mu.RUnlock()
	db.fmu.RLock()
	maybe := db.f.mayHaveFull(&h)
	db.fmu.RUnlock()
	if !maybe {
		return false, nil
	}
	k := fullKey(&h)
	txn := db.bdb.NewTransaction(false)
	defer txn.Discard()
	_, err := txn.Get(k[:])
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, translate(err)
}

// HasBatch reports, in input order, which full entries are stored. The
// hashes the filter lets through are looked up in key order in one
// iterator pass.
func (db *DB) HasBatch(hs []hashkey.Hash) ([]bool, error) {
	if err := db.begin(); err != nil {
		return nil, err
	}
	defer db.mu.RUnlock()
	out := make([]bool, len(hs))
	db.fmu.RLock()
	maybe := db.filterFull(hs)
	db.fmu.RUnlock()
	if len(maybe) == 0 {
		return out, nil
	}
	slices.SortFunc(maybe, func(a, b int) int { return bytes.Compare(hs[a][:], hs[b][:]) })
	keys := make([][]byte, len(maybe))
	buf := make([]byte, len(maybe)*fullKeyLen)
	for j, i := range maybe {
		k := buf[j*fullKeyLen : (j+1)*fullKeyLen]
		k[0] = tagFull
		copy(k[1:], hs[i][:])
		keys[j] = k
	}
	found, err := db.seekAllParallel(keys, []byte{tagFull})
	if err != nil {
		return nil, err
	}
	for j, i := range maybe {
		out[i] = found[j]
	}
	return out, nil
}

// filterFull returns the positions of hs that the filter lets through, in
// order. A large batch is split across cores: a filter probe is a few
// hundred nanoseconds of cache misses, the whole cost of an absent key.
// The caller holds db.fmu.
func (db *DB) filterFull(hs []hashkey.Hash) []int {
	const minRun = 1024
	workers := min(runtime.GOMAXPROCS(0), len(hs)/minRun)
	if workers < 2 {
		return db.filterRange(hs, 0, len(hs), nil)
	}
	parts := make([][]int, workers)
	per := (len(hs) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { parts[w] = db.filterRange(hs, w*per, min((w+1)*per, len(hs)), nil) })
	}
	wg.Wait()
	return slices.Concat(parts...)
}

func (db *DB) filterRange(hs []hashkey.Hash, lo, hi int, maybe []int) []int {
	for i := lo; i < hi; i++ {
		if db.f.mayHaveFull(&hs[i]) {
			maybe = append(maybe, i)
		}
	}
	return maybe
}

// seekAllParallel is seekAll over contiguous runs of keys on every core: a
// run's seeks stay in key order, and the runs touch disjoint key ranges.
func (db *DB) seekAllParallel(keys [][]byte, prefix []byte) ([]bool, error) {
	const minRun = 256 // below this a goroutine and an iterator cost more than they save
	workers := min(runtime.GOMAXPROCS(0), len(keys)/minRun)
	if workers < 2 {
		return db.seekAll(keys, prefix)
	}
	found := make([]bool, len(keys))
	errs := make([]error, workers)
	per := (len(keys) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(keys))
		wg.Go(func() {
			f, err := db.seekAll(keys[lo:hi], prefix)
			copy(found[lo:hi], f)
			errs[w] = err
		})
	}
	wg.Wait()
	return found, errors.Join(errs...)
}

// existSorted reports, for entries[idx[j]] (idx in key order), whether the
// entry is stored. The caller holds the entries' write locks.
func (db *DB) existSorted(entries []store.Entry, idx []int) ([]bool, error) {
	out := make([]bool, len(idx))
	var keys [][]byte
	var pos []int
	db.fmu.RLock()
	for j, i := range idx {
		e := &entries[i]
		if db.f.mayHaveEntry(&e.Hash, e.IsPrefix()) {
			keys = append(keys, dbKey(e))
			pos = append(pos, j)
		}
	}
	db.fmu.RUnlock()
	if len(keys) == 0 {
		return out, nil
	}
	var found []bool
	if len(keys) == 1 {
		txn := db.bdb.NewTransaction(false)
		defer txn.Discard()
		_, err := txn.Get(keys[0])
		switch {
		case err == nil:
			found = []bool{true}
		case errors.Is(err, badger.ErrKeyNotFound):
			found = []bool{false}
		default:
			return nil, translate(err)
		}
	} else {
		var err error
		if found, err = db.seekAll(keys, nil); err != nil {
			return nil, err
		}
	}
	for j, p := range pos {
		out[p] = found[j]
	}
	return out, nil
}

// seekAll reports which of the sorted keys are stored, in one forward pass
// of a key-only iterator restricted to prefix.
func (db *DB) seekAll(keys [][]byte, prefix []byte) ([]bool, error) {
	found := make([]bool, len(keys))
	txn := db.bdb.NewTransaction(false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: prefix})
	defer it.Close()
	positioned := false
	for j, k := range keys {
		if !positioned || (it.Valid() && bytes.Compare(it.Item().Key(), k) < 0) {
			it.Seek(k)
			positioned = true
		}
		if !it.Valid() {
			break // every later key is beyond the last stored one
		}
		found[j] = bytes.Equal(it.Item().Key(), k)
	}
	return found, nil
}

// Match returns the full entry h when it is stored, else the longest stored
// prefix entry that h starts with. The bool is false when neither exists.
func (db *DB) Match(h hashkey.Hash) (store.Match, bool, error) {
	if err := db.begin(); err != nil {
		return store.Match{}, false, err
	}
	defer db.mu.RUnlock()
	db.fmu.RLock()
	full, short := db.f.mayHaveFull(&h), db.f.mayHavePrefixOf(&h)
	db.fmu.RUnlock()
	if !full && !short {
		return store.Match{}, false, nil
	}
	var m store.Match
	var ok bool
	err := db.bdb.View(func(txn *badger.Txn) error {
		if full {
			k := fullKey(&h)
			item, err := txn.Get(k[:])
			switch {
			case err == nil:
				m.Len, ok = hashkey.Size, true
				m.Value, err = itemValue(item)
				return err
			case !errors.Is(err, badger.ErrKeyNotFound):
				return err
			}
		}
		if !short {
			return nil
		}
		// Every prefix entry h starts with shares h's first 4 bytes.
		pk := prefixKey(h[:store.MinPrefixEntryLen])
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: pk})
		defer it.Close()
		for it.Seek(pk); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if bytes.Compare(key[1:], h[:]) > 0 {
				break
			}
			if bytes.HasPrefix(h[:], key[1:]) && (!ok || len(key)-1 > m.Len) {
				v, err := itemValue(item)
				if err != nil {
					return err
				}
				m, ok = store.Match{Len: len(key) - 1, Value: v}, true
			}
		}
		return nil
	})
	return m, ok, translate(err)
}

// itemValue decodes a copy of item's value.
func itemValue(item *badger.Item) (store.Value, error) {
	if item.ValueSize() == 0 {
		return store.Value{}, nil
	}
	b, err := item.ValueCopy(nil)
	if err != nil {
		return store.Value{}, err
	}
	return decodeValue(b)
}

// Scan calls fn for each entry whose key starts with the leading bits of
// prefix (bits may be any multiple of 4, or any value 0..256: a half-byte
// prefix is bits = 4*hex digits), in key order: first the full entries, then
// the prefix entries at least that long; at most limit entries in all
// (limit <= 0: no limit). It stops at the first error fn returns and returns
// it. The entry's value slices belong to fn. The scan reads one consistent
// snapshot; fn must not call methods of db (a pending Load, Close or filter
// growth would deadlock).
func (db *DB) Scan(prefix []byte, bits int, limit int, fn func(store.Entry) error) error {
	if bits < 0 || bits > 8*hashkey.Size || len(prefix)*8 < bits {
		return fmt.Errorf("%w: %d bits of a %d-byte prefix", store.ErrPrefixLength, bits, len(prefix))
	}
	if err := db.begin(); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	n := 0
	return db.scan(prefix, bits, true, func(e *store.Entry) error {
		n++
		if err := fn(*e); err != nil {
			return err
		}
		if limit > 0 && n >= limit {
			return errStop
		}
		return nil
	})
}

// ForEach calls fn for every entry in key order (full entries, then prefix
// entries), stopping at the first error fn returns.
func (db *DB) ForEach(fn func(store.Entry) error) error { return db.Scan(nil, 0, 0, fn) }

// Count returns the number of full entries and of prefix entries that
// Scan(prefix, bits, 0, ...) would visit.
func (db *DB) Count(prefix []byte, bits int) (full, prefixes int64, err error) {
	if bits < 0 || bits > 8*hashkey.Size || len(prefix)*8 < bits {
		return 0, 0, fmt.Errorf("%w: %d bits of a %d-byte prefix", store.ErrPrefixLength, bits, len(prefix))
	}
	if err := db.begin(); err != nil {
		return 0, 0, err
	}
	defer db.mu.RUnlock()
	err = db.scan(prefix, bits, false, func(e *store.Entry) error {
		if e.IsPrefix() {
			prefixes++
		} else {
			full++
		}
		return nil
	})
	return full, prefixes, err
}

var errStop = errors.New("index: stop")

// scan visits the entries under the bit prefix. fn's entry is reused.
func (db *DB) scan(prefix []byte, bits int, values bool, fn func(*store.Entry) error) error {
	nb := bits / 8           // whole bytes
	nbytes := (bits + 7) / 8 // bytes that hold the prefix
	var mask byte
	if bits%8 != 0 {
		mask = 0xff << (8 - bits%8)
	}
	seek := make([]byte, 1+nbytes)
	copy(seek[1:], prefix[:nbytes])
	if mask != 0 {
		seek[nbytes] &= mask
	}
	var fnErr error
	err := db.bdb.View(func(txn *badger.Txn) error {
		var e store.Entry
		for _, tag := range []byte{tagFull, tagPrefix} {
			seek[0] = tag
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: seek[:1+nb]})
			for it.Seek(seek); it.Valid(); it.Next() {
				item := it.Item()
				key := item.Key()
				if len(key) < 1+nbytes {
					continue
				}
				if mask != 0 && key[1+nb]&mask != seek[1+nb] {
					break // keys are sorted: past the prefix
				}
				e = store.Entry{Len: len(key) - 1}
				copy(e.Hash[:], key[1:])
				if values {
					v, err := itemValue(item)
					if err != nil {
						it.Close()
						return err
					}
					e.Value = v
				}
				if err := fn(&e); err != nil {
					it.Close()
					fnErr = err
					return err
				}
			}
			it.Close()
		}
		return nil
	})
	if fnErr != nil {
		if fnErr == errStop {
			return nil
		}
		return fnErr
	}
	return translate(err)
}
