package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"sync"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Get returns the value of the full entry h, or store.ErrNotFound. The value's
// slices belong to the caller.
func (db *DB) Get(ctx context.Context, h hashkey.Hash) (v store.Value, err error) {
	defer db.catchHash(&err, &h, false)
	if err := db.begin(ctx); err != nil {
		return store.Value{}, err
	}
	defer db.mu.RUnlock()
	if !db.fin.Load() {
		// The filter is loading: a stored key is answered without it;
		// while it is rebuilt, an absent one too.
		unfiltered := db.readsUnfiltered()
		v, ok, err := db.st.get(&h, unfiltered)
		switch {
		case ok || err != nil:
			return v, err
		case unfiltered:
			return store.Value{}, store.ErrNotFound
		}
		if err := db.waitFilter(); err != nil {
			return store.Value{}, err
		}
	}
	db.fmu.RLock()
	maybe := db.f.MayHaveFull(&h)
	db.fmu.RUnlock()
	if !maybe {
		db.probes.one(false, false)
		return store.Value{}, store.ErrNotFound
	}
	v, ok, err := db.st.get(&h, true)
	db.probes.one(true, ok)
	switch {
	case err != nil:
		return store.Value{}, err
	case !ok:
		return store.Value{}, store.ErrNotFound
	}
	return v, nil
}

// GetBatch returns, in input order, the values of the full entries hs and
// which are stored (a missing one has a zero Value). The hashes the
// filter lets through are read in key order: in an index whose key table
// holds the values, each value block is read and decoded once for all
// the keys it holds (see stores.getSorted). The values' slices belong to
// the caller.
func (db *DB) GetBatch(ctx context.Context, hs []hashkey.Hash) (_ []store.Value, _ []bool, err error) {
	defer db.catch(&err, [2][]byte{{tagFull}, {tagPrefix}})
	if err := db.begin(ctx); err != nil {
		return nil, nil, err
	}
	defer db.mu.RUnlock()
	if db.readsUnfiltered() {
		all := sortedPositions(hs)
		got, found, err := db.st.getSorted(hs, all, true)
		if err != nil {
			return nil, nil, err
		}
		vs, ok := make([]store.Value, len(hs)), make([]bool, len(hs))
		for j, i := range all {
			vs[i], ok[i] = got[j], found[j]
		}
		return vs, ok, nil
	}
	if !db.fin.Load() {
		if err := db.waitFilter(); err != nil {
			return nil, nil, err
		}
	}
	vs, ok := make([]store.Value, len(hs)), make([]bool, len(hs))
	db.fmu.RLock()
	maybe := db.filterFull(hs)
	db.fmu.RUnlock()
	if len(maybe) == 0 {
		db.probes.add(len(hs), nil)
		return vs, ok, nil
	}
	sortByHash(hs, maybe)
	got, found, err := db.st.getSorted(hs, maybe, true)
	if err != nil {
		return nil, nil, err
	}
	db.probes.add(len(hs), found)
	for j, i := range maybe {
		vs[i], ok[i] = got[j], found[j]
	}
	return vs, ok, nil
}

// Has reports whether the full entry h is stored.
func (db *DB) Has(ctx context.Context, h hashkey.Hash) (ok bool, err error) {
	defer db.catchHash(&err, &h, false)
	if err := db.begin(ctx); err != nil {
		return false, err
	}
	defer db.mu.RUnlock()
	if !db.fin.Load() {
		// The filter is loading: a stored key is answered without it;
		// while it is rebuilt, an absent one too.
		unfiltered := db.readsUnfiltered()
		if ok, err := db.st.has(&h, unfiltered); ok || err != nil || unfiltered {
			return ok, err
		}
		if err := db.waitFilter(); err != nil {
			return false, err
		}
	}
	db.fmu.RLock()
	maybe := db.f.MayHaveFull(&h)
	db.fmu.RUnlock()
	if !maybe {
		db.probes.one(false, false)
		return false, nil
	}
	ok, err = db.st.has(&h, true)
	db.probes.one(true, ok)
	return ok, err
}

// HasBatch reports, in input order, which full entries are stored. The
// hashes the filter lets through are looked up in key order (see
// stores.hasSorted).
func (db *DB) HasBatch(ctx context.Context, hs []hashkey.Hash) (_ []bool, err error) {
	defer db.catch(&err, [2][]byte{{tagFull}, {tagPrefix}})
	if err := db.begin(ctx); err != nil {
		return nil, err
	}
	defer db.mu.RUnlock()
	out := make([]bool, len(hs))
	if db.readsUnfiltered() {
		return db.hasBatchUnfiltered(hs, out, true)
	}
	if !db.fin.Load() {
		if len(hs) <= loadingBatch {
			return db.hasBatchLoading(hs, out)
		}
		// A large batch waits: the filter answers most absent keys
		// without a read, where the stores would read for each.
		if err := db.waitFilter(); err != nil {
			return nil, err
		}
	}
	return db.hasBatch(hs, out)
}

// loadingBatch is the largest HasBatch answered from the stores while
// the filter loads (a command's first answers).
const loadingBatch = 256

// hasBatch is HasBatch through the filter, setting out.
func (db *DB) hasBatch(hs []hashkey.Hash, out []bool) ([]bool, error) {
	db.fmu.RLock()
	maybe := db.filterFull(hs)
	db.fmu.RUnlock()
	if len(maybe) == 0 {
		db.probes.add(len(hs), nil)
		return out, nil
	}
	sortByHash(hs, maybe)
	found, err := db.st.hasSorted(hs, maybe, true)
	if err != nil {
		return nil, err
	}
	db.probes.add(len(hs), found)
	for j, i := range maybe {
		out[i] = found[j]
	}
	return out, nil
}

// hasBatchLoading is HasBatch while the filter loads: every key is looked
// up in the stores at once; those not found wait for the filter, which
// answers them as HasBatch does.
func (db *DB) hasBatchLoading(hs []hashkey.Hash, out []bool) ([]bool, error) {
	found, err := db.hasBatchUnfiltered(hs, out, false)
	if err != nil {
		return nil, err
	}
	var missed []hashkey.Hash
	var at []int
	for i, ok := range found {
		if !ok {
			missed = append(missed, hs[i])
			at = append(at, i)
		}
	}
	if len(missed) == 0 {
		return out, nil
	}
	if err := db.waitFilter(); err != nil {
		return nil, err
	}
	got, err := db.hasBatch(missed, make([]bool, len(missed)))
	if err != nil {
		return nil, err
	}
	for n, i := range at {
		out[i] = got[n]
	}
	return out, nil
}

// hasBatchUnfiltered answers HasBatch from the stores alone, verifying
// what they do not find when verify is set (the filter is being rebuilt:
// see readsUnfiltered).
func (db *DB) hasBatchUnfiltered(hs []hashkey.Hash, out []bool, verify bool) ([]bool, error) {
	all := sortedPositions(hs)
	found, err := db.st.hasSorted(hs, all, verify)
	if err != nil {
		return nil, err
	}
	for j, i := range all {
		out[i] = found[j]
	}
	return out, nil
}

// sortedPositions returns every position of hs, sorted by hs[i].
func sortedPositions(hs []hashkey.Hash) []int {
	all := make([]int, len(hs))
	for i := range all {
		all[i] = i
	}
	sortByHash(hs, all)
	return all
}

// sortByHash sorts idx, positions in hs, by hs[idx[j]].
func sortByHash(hs []hashkey.Hash, idx []int) {
	sortByLead(idx, func(i int) (uint64, bool) { return binary.BigEndian.Uint64(hs[i][:8]), true },
		func(a, b int) int { return bytes.Compare(hs[a][:], hs[b][:]) })
}

// filterFull returns the positions of hs that the filter lets through, in
// order. A large batch is split across cores: a filter probe is a few
// hundred nanoseconds of cache misses, the whole cost of an absent key.
// The caller holds db.fmu.
func (db *DB) filterFull(hs []hashkey.Hash) []int {
	const minRun = 1024
	workers := min(runtime.GOMAXPROCS(0), len(hs)/minRun)
	if workers < 2 {
		return db.filterRange(hs, 0, len(hs))
	}
	parts := make([][]int, workers)
	per := (len(hs) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { parts[w] = db.filterRange(hs, w*per, min((w+1)*per, len(hs))) })
	}
	wg.Wait()
	return slices.Concat(parts...)
}

// filterRange returns the positions in [lo, hi) of hs that the filter
// lets through, in order. The caller holds db.fmu.
func (db *DB) filterRange(hs []hashkey.Hash, lo, hi int) []int {
	var maybe []int
	for i := lo; i < hi; i++ {
		if db.f.MayHaveFull(&hs[i]) {
			maybe = append(maybe, i)
		}
	}
	return maybe
}

// Match returns the full entry h when it is stored, else the longest stored
// prefix entry that h starts with. The bool is false when neither exists.
func (db *DB) Match(ctx context.Context, h hashkey.Hash) (_ store.Match, _ bool, err error) {
	defer db.catchHash(&err, &h, true)
	if err := db.begin(ctx); err != nil {
		return store.Match{}, false, err
	}
	defer db.mu.RUnlock()
	full, short := true, true // while the filter is rebuilt, every store is asked
	if !db.readsUnfiltered() {
		if err := db.waitFilter(); err != nil {
			return store.Match{}, false, err
		}
		db.fmu.RLock()
		full, short = db.f.MayHaveFull(&h), db.f.MayHavePrefixOf(&h)
		db.fmu.RUnlock()
	}
	if !full && !short {
		db.probes.one(false, false)
		return store.Match{}, false, nil
	}
	if full {
		v, ok, err := db.st.get(&h, true)
		db.probes.one(true, ok)
		if err != nil || ok {
			return store.Match{Len: hashkey.Size, Value: v}, ok, err
		}
	} else {
		db.probes.one(false, false)
	}
	if !short {
		return store.Match{}, false, nil
	}
	return db.st.longestPrefix(&h)
}

// Scan calls fn for each entry whose key starts with the leading bits of
// prefix (bits may be any multiple of 4, or any value 0..256: a half-byte
// prefix is bits = 4*hex digits), in key order: first the full entries, then
// the prefix entries at least that long; at most limit entries in all
// (limit <= 0: no limit). It stops at the first error fn returns and returns
// it. The entry's value slices belong to fn. The scan reads one consistent
// snapshot; fn must not call methods of db (a pending Load, Close or filter
// growth would deadlock).
//
// A scan without a limit verifies the tables of its key range before it
// calls fn, so that damage is an error before any entry, never a partial
// result. A scan with a limit verifies the tables of the range it read
// afterwards: fn may have seen entries before the error.
func (db *DB) Scan(ctx context.Context, prefix []byte, bits int, limit int, fn func(store.Entry) error) (err error) {
	if err := store.CheckPrefix(prefix, bits); err != nil {
		return err
	}
	ranges := scanRanges(prefix, bits)
	inFn := false // a panic of fn's own is fn's, not damage
	defer func() {
		if p := recover(); p != nil {
			if inFn {
				panic(p)
			}
			err = db.st.panicError(p, ranges)
		}
	}()
	if err := db.begin(ctx); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	if limit <= 0 {
		if err := db.st.guard.CheckRanges(ranges); err != nil {
			return err
		}
	}
	n := 0
	var last []byte
	err = db.st.scan(ctx, prefix, bits, true, func(key []byte, e *store.Entry) error {
		n++
		inFn = true
		err := fn(*e)
		inFn = false
		if err != nil {
			return err
		}
		if limit > 0 && n >= limit {
			last = bytes.Clone(key)
			return errStop
		}
		return nil
	})
	if err != nil || limit <= 0 {
		return err
	}
	if last != nil {
		// Stopped at the limit: the range read ends at the last key.
		if last[0] == tagFull {
			ranges = ranges[:1]
			ranges[0][1] = last
		} else {
			ranges[1][1] = last
		}
	}
	return db.st.guard.CheckRanges(ranges)
}

// scanRanges returns the key ranges of the full and prefix entries that
// start with the leading bits of prefix.
func scanRanges(prefix []byte, bits int) [][2][]byte {
	nbytes := (bits + 7) / 8
	lo := make([]byte, 1+nbytes)
	copy(lo[1:], prefix[:nbytes])
	hi := make([]byte, 1+nbytes, 1+hashkey.Size)
	copy(hi[1:], prefix[:nbytes])
	if r := bits % 8; r != 0 {
		lo[nbytes] &= 0xff << (8 - r)
		hi[nbytes] |= 0xff >> r
	}
	for len(hi) < cap(hi) {
		hi = append(hi, 0xff)
	}
	rs := make([][2][]byte, 2)
	for i, tag := range []byte{tagFull, tagPrefix} {
		l, h := bytes.Clone(lo), bytes.Clone(hi)
		l[0], h[0] = tag, tag
		rs[i] = [2][]byte{l, h}
	}
	return rs
}

// ForEach calls fn for every entry in key order (full entries, then prefix
// entries), stopping at the first error fn returns.
func (db *DB) ForEach(ctx context.Context, fn func(store.Entry) error) error {
	return db.Scan(ctx, nil, 0, 0, fn)
}

// Count returns the number of full entries and of prefix entries that
// Scan(prefix, bits, 0, ...) would visit.
func (db *DB) Count(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error) {
	if err := store.CheckPrefix(prefix, bits); err != nil {
		return 0, 0, err
	}
	ranges := scanRanges(prefix, bits)
	defer db.catch(&err, ranges...)
	if err := db.begin(ctx); err != nil {
		return 0, 0, err
	}
	defer db.mu.RUnlock()
	if err := db.st.guard.CheckRanges(ranges); err != nil {
		return 0, 0, err
	}
	err = db.st.scan(ctx, prefix, bits, false, func(_ []byte, e *store.Entry) error {
		if e.IsPrefix() {
			prefixes++
		} else {
			full++
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return full, prefixes, nil
}

var errStop = errors.New("index: stop")
