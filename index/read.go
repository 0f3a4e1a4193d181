package index

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/keytable"
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
	db.fmu.RLock()
	maybe := db.f.MayHaveFull(&h)
	db.fmu.RUnlock()
	if !maybe {
		db.probes.one(false, false)
		return store.Value{}, store.ErrNotFound
	}
	k := fullKey(&h)
	err = db.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k[:])
		if err != nil {
			return err
		}
		if db.expired(item) {
			return errExpired
		}
		v, err = db.itemValue(item)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) && db.kt != nil {
		// Badger first: a key in both (a move to Badger a crash cut
		// short) has its value there.
		in, kerr := db.ktHas(&h)
		if kerr != nil || in {
			db.probes.one(true, in)
			return store.Value{}, kerr
		}
	}
	db.probes.one(true, err == nil)
	if err == errExpired {
		return store.Value{}, store.ErrNotFound
	}
	if errors.Is(err, badger.ErrKeyNotFound) {
		// The filter said "maybe": a false positive, or a damaged block.
		if err := db.guard.Check(k[:], k[:]); err != nil {
			return store.Value{}, err
		}
	}
	return v, translate(err)
}

// Has reports whether the full entry h is stored.
func (db *DB) Has(ctx context.Context, h hashkey.Hash) (ok bool, err error) {
	defer db.catchHash(&err, &h, false)
	if err := db.begin(ctx); err != nil {
		return false, err
	}
	defer db.mu.RUnlock()
	db.fmu.RLock()
	maybe := db.f.MayHaveFull(&h)
	db.fmu.RUnlock()
	if !maybe {
		db.probes.one(false, false)
		return false, nil
	}
	if in, err := db.ktHas(&h); in || err != nil {
		db.probes.one(true, in)
		return in, err
	}
	k := fullKey(&h)
	txn := db.bdb.NewTransaction(false)
	defer txn.Discard()
	item, err := txn.Get(k[:])
	live := err == nil && !db.expired(item)
	db.probes.one(true, live)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, db.guard.Check(k[:], k[:])
	}
	return live, translate(err)
}

// HasBatch reports, in input order, which full entries are stored. The
// hashes the filter lets through are looked up in key order in one
// iterator pass.
func (db *DB) HasBatch(ctx context.Context, hs []hashkey.Hash) (_ []bool, err error) {
	defer db.catch(&err, [2][]byte{{tagFull}, {tagPrefix}})
	if err := db.begin(ctx); err != nil {
		return nil, err
	}
	defer db.mu.RUnlock()
	out := make([]bool, len(hs))
	db.fmu.RLock()
	maybe := db.filterFull(hs)
	db.fmu.RUnlock()
	if len(maybe) == 0 {
		db.probes.add(len(hs), nil)
		return out, nil
	}
	sortByHash(hs, maybe)
	ktFound := 0
	if db.kt != nil {
		// The key table first, in key order; Badger gets the rest.
		look := make([]keytable.Key, len(maybe))
		for j, i := range maybe {
			look[j] = keytable.Key(hs[i])
		}
		in := make([]bool, len(maybe))
		if _, err := db.kt.HasBatch(look, in); err != nil {
			return nil, fmt.Errorf("index: key table: %w", err)
		}
		rest := maybe[:0:0]
		for j, i := range maybe {
			if in[j] {
				out[i] = true
			} else {
				rest = append(rest, i)
			}
		}
		ktFound = len(maybe) - len(rest)
		db.probes.found.Add(int64(ktFound))
		if len(rest) == 0 {
			db.probes.add(len(hs)-ktFound, nil)
			return out, nil
		}
		maybe = rest
	}
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
	db.probes.add(len(hs)-ktFound, found)
	if err := db.checkMissed(keys, found); err != nil {
		return nil, err
	}
	for j, i := range maybe {
		out[i] = found[j]
	}
	return out, nil
}

// sortByHash sorts idx, positions in hs, by hs[idx[j]].
func sortByHash(hs []hashkey.Hash, idx []int) {
	sortByLead(idx, func(i int) (uint64, bool) { return binary.BigEndian.Uint64(hs[i][:8]), true },
		func(a, b int) int { return bytes.Compare(hs[a][:], hs[b][:]) })
}

// checkMissed verifies the tables that cover the keys the filter let
// through but Badger did not find (see guard).
func (db *DB) checkMissed(keys [][]byte, found []bool) error {
	if db.guard.IsIdle() {
		return nil
	}
	var missed [][]byte
	for j, ok := range found {
		if !ok {
			missed = append(missed, keys[j])
		}
	}
	return db.guard.CheckKeys(missed)
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

// seekAllParallel is seekAll over contiguous runs of keys on every core: a
// run's seeks stay in key order, and the runs touch disjoint key ranges.
func (db *DB) seekAllParallel(keys [][]byte, prefix []byte) ([]bool, error) {
	const minRun = 256 // below this a goroutine and an iterator cost more than they save
	workers := min(runtime.GOMAXPROCS(0), len(keys)/minRun)
	if workers < 2 {
		return db.seekAll(keys, prefix, nil)
	}
	found := make([]bool, len(keys))
	errs := make([]error, workers)
	per := (len(keys) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(keys))
		wg.Go(func() {
			defer func() {
				// A panic here would end the process: no caller can
				// recover a goroutine's panic.
				if p := recover(); p != nil {
					errs[w] = db.panicError(p, [][2][]byte{{keys[lo], keys[hi-1]}})
				}
			}()
			f, err := db.seekAll(keys[lo:hi], prefix, nil)
			copy(found[lo:hi], f)
			errs[w] = err
		})
	}
	wg.Wait()
	return found, errors.Join(errs...)
}

// existSorted reports, for entries[idx[j]] (idx in key order), whether the
// entry is stored (live), and the expiry of each stored one (for the
// counts). The caller holds the entries' write locks.
func (db *DB) existSorted(entries []store.Entry, idx []int) ([]bool, []uint64, error) {
	out := make([]bool, len(idx))
	outExp := make([]uint64, len(idx))
	var keys [][]byte
	var pos []int
	db.fmu.RLock()
	for j, i := range idx {
		e := &entries[i]
		if db.f.MayHaveEntry(&e.Hash, e.IsPrefix()) {
			keys = append(keys, dbKey(e))
			pos = append(pos, j)
		}
	}
	db.fmu.RUnlock()
	found, exp, err := db.existKeys(keys, len(idx))
	if err != nil {
		return nil, nil, err
	}
	for j, p := range pos {
		out[p] = found[j]
		outExp[p] = exp[j]
	}
	return out, outExp, nil
}

// existKeys reports which of the sorted Badger keys are stored (live),
// and the expiry of each stored one: the lookups of existSorted (and of
// addHashes) for the keys the filter let through, n keys asked in all.
func (db *DB) existKeys(keys [][]byte, n int) ([]bool, []uint64, error) {
	if len(keys) == 0 {
		db.probes.add(n, nil)
		return nil, nil, nil
	}
	var found []bool
	exp := make([]uint64, len(keys))
	if len(keys) == 1 {
		txn := db.bdb.NewTransaction(false)
		defer txn.Discard()
		item, err := txn.Get(keys[0])
		switch {
		case err == nil:
			found = []bool{!db.expired(item)}
			exp[0] = item.ExpiresAt()
		case errors.Is(err, badger.ErrKeyNotFound):
			found = []bool{false}
		default:
			return nil, nil, translate(err)
		}
	} else {
		var err error
		if found, err = db.seekAll(keys, nil, exp); err != nil {
			return nil, nil, err
		}
	}
	db.probes.add(n, found)
	if err := db.checkMissed(keys, found); err != nil {
		return nil, nil, err
	}
	return found, exp, nil
}

// seekAll reports which of the sorted keys are stored, in one forward pass
// of a key-only iterator restricted to prefix, and sets exp[j] (exp may be
// nil) to the expiry of each stored one.
func (db *DB) seekAll(keys [][]byte, prefix []byte, exp []uint64) ([]bool, error) {
	found := make([]bool, len(keys))
	txn := db.bdb.NewTransaction(false)
	defer txn.Discard()
	// A sparse batch gets a Get per key (a keyFinder would seek for
	// most): an iterator's Seek positions itself in every memtable and
	// table, where a Get stops at the first that holds the key and skips
	// the others by their bloom filters (in a dedupe of 1M URLs, seeks
	// took 1 s of CPU).
	n := uint64(db.entries.Load())
	if uint64(len(keys))*stepNexts < n {
		for j, k := range keys {
			item, err := txn.Get(k)
			switch {
			case err == nil:
				found[j] = !db.expired(item)
				if exp != nil {
					exp[j] = item.ExpiresAt()
				}
			case !errors.Is(err, badger.ErrKeyNotFound):
				return nil, translate(err)
			}
		}
		return found, nil
	}
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: prefix})
	defer it.Close()
	kf := keyFinder{it: it, n: n}
	for j, k := range keys {
		if item := kf.find(k); item != nil {
			found[j] = !db.expired(item)
			if exp != nil {
				exp[j] = item.ExpiresAt()
			}
		}
	}
	return found, nil
}

// stepNexts is how many calls of Next a Seek costs about (~1.5 µs against
// ~80 ns at 1M entries).
const stepNexts = 16

// A keyFinder finds ascending keys with one forward pass of an iterator:
// when the next key is likely within stepNexts entries (hashes are
// uniform, so the gap follows from the leading bytes and the entry
// count), it steps there, and it seeks only when the key is not reached.
// In a dense sorted batch (a large "has" of present keys) most keys are.
type keyFinder struct {
	it   *badger.Iterator
	n    uint64  // the index's entries
	prev [9]byte // the tag and leading bytes of the last key asked for
	used bool
}

// find returns the item of key when it is stored (expired or not), else
// nil.
func (f *keyFinder) find(key []byte) *badger.Item {
	it := f.it
	switch {
	case !f.used:
		it.Seek(key)
		f.used = true
	case it.Valid() && bytes.Compare(it.Item().Key(), key) < 0:
		for steps := stepsTo(f.prev[:], key, f.n, stepNexts); steps > 0; steps-- {
			it.Next()
			if !it.Valid() || bytes.Compare(it.Item().Key(), key) >= 0 {
				break
			}
		}
		if it.Valid() && bytes.Compare(it.Item().Key(), key) < 0 {
			it.Seek(key)
		}
	}
	copy(f.prev[:], key)
	if it.Valid() && bytes.Equal(it.Item().Key(), key) {
		return it.Item()
	}
	return nil
}

// stepsTo returns how many Next calls to try from key from to key to
// before seeking: a few more than the entries expected between them
// among n uniformly spread keys (both are tag + hash), or 0 when more
// than limit are expected.
func stepsTo(from, to []byte, n uint64, limit int) int {
	if len(from) < 9 || len(to) < 9 || from[0] != to[0] {
		return 0
	}
	a, b := binary.BigEndian.Uint64(from[1:]), binary.BigEndian.Uint64(to[1:])
	if b < a {
		return 0
	}
	hi, _ := bits.Mul64(b-a, n) // (b-a)/2^64 of the n keys
	if hi >= uint64(limit) {
		return 0
	}
	return int(hi)*2 + 2
}

// Match returns the full entry h when it is stored, else the longest stored
// prefix entry that h starts with. The bool is false when neither exists.
func (db *DB) Match(ctx context.Context, h hashkey.Hash) (_ store.Match, _ bool, err error) {
	defer db.catchHash(&err, &h, true)
	if err := db.begin(ctx); err != nil {
		return store.Match{}, false, err
	}
	defer db.mu.RUnlock()
	db.fmu.RLock()
	full, short := db.f.MayHaveFull(&h), db.f.MayHavePrefixOf(&h)
	db.fmu.RUnlock()
	if !full && !short {
		db.probes.one(false, false)
		return store.Match{}, false, nil
	}
	var m store.Match
	var ok bool
	err = db.bdb.View(func(txn *badger.Txn) error {
		if full {
			k := fullKey(&h)
			item, err := txn.Get(k[:])
			switch {
			case err == nil && !db.expired(item):
				m.Len, ok = hashkey.Size, true
				m.Value, err = db.itemValue(item)
				return err
			case err != nil && !errors.Is(err, badger.ErrKeyNotFound):
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
			if bytes.HasPrefix(h[:], key[1:]) && (!ok || len(key)-1 > m.Len) && !db.expired(item) {
				v, err := db.itemValue(item)
				if err != nil {
					return err
				}
				m, ok = store.Match{Len: len(key) - 1, Value: v}, true
			}
		}
		return nil
	})
	if err != nil {
		return store.Match{}, false, translate(err)
	}
	if full && m.Len < hashkey.Size && db.kt != nil {
		in, err := db.ktHas(&h)
		if err != nil {
			return store.Match{}, false, err
		}
		if in {
			m, ok = store.Match{Len: hashkey.Size}, true
		}
	}
	db.probes.one(full, m.Len == hashkey.Size)
	if m.Len < hashkey.Size && !db.guard.IsIdle() {
		// The filter let h through, and no full entry (or none at all)
		// was found: verify the tables that could hold it.
		var errFull, errPrefix error
		if full {
			k := fullKey(&h)
			errFull = db.guard.Check(k[:], k[:])
		}
		if short {
			errPrefix = db.guard.Check(prefixKey(h[:store.MinPrefixEntryLen]), prefixKey(h[:]))
		}
		if err := cmp.Or(errFull, errPrefix); err != nil {
			return store.Match{}, false, err
		}
	}
	return m, ok, nil
}

// itemValue decodes a copy of item's value.
func (db *DB) itemValue(item *badger.Item) (store.Value, error) {
	if item.ValueSize() == 0 {
		return store.Value{Expires: expiresOf(item)}, nil
	}
	b, err := item.ValueCopy(nil)
	if err != nil {
		return store.Value{}, err
	}
	if len(b) == 0 {
		// Badger answers a value it cannot read from the value log (a
		// damaged record) with an empty value and no error; every value
		// the index stores that is not empty starts with valueVersion.
		return store.Value{}, db.valueLogError(item.KeyCopy(nil))
	}
	v, err := decodeValue(b)
	v.Expires = expiresOf(item)
	return v, err
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
			err = db.panicError(p, ranges)
		}
	}()
	if err := db.begin(ctx); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	if limit <= 0 {
		if err := db.guard.CheckRanges(ranges); err != nil {
			return err
		}
	}
	n := 0
	var last []byte
	err = db.scan(ctx, prefix, bits, true, func(key []byte, e *store.Entry) error {
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
	return db.guard.CheckRanges(ranges)
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
	if err := db.guard.CheckRanges(ranges); err != nil {
		return 0, 0, err
	}
	err = db.scan(ctx, prefix, bits, false, func(_ []byte, e *store.Entry) error {
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

// scan visits the entries under the bit prefix, those of the key table
// among Badger's full entries in key order. fn gets the Badger key (the
// key an entry of the key table would have) and the entry, both reused.
func (db *DB) scan(ctx context.Context, prefix []byte, bits int, values bool, fn func([]byte, *store.Entry) error) error {
	if db.kt == nil {
		return db.scanBadger(ctx, prefix, bits, values, fn)
	}
	next, stop := iter.Pull2(db.ktKeys(prefix, bits))
	defer stop()
	var pend *keytable.Key // the next key of the key table, or nil at its end
	var perr error
	pull := func() {
		k, err, ok := next()
		switch {
		case !ok:
			pend = nil
		case err != nil:
			pend, perr = nil, err
		default:
			pend = k
		}
	}
	pull()
	var done error // fn's error (scanBadger returns nil for errStop)
	user := fn
	fn = func(key []byte, e *store.Entry) error {
		err := user(key, e)
		if err != nil {
			done = err
		}
		return err
	}
	var kkey [fullKeyLen]byte
	var ke store.Entry
	// flush yields the key table's keys before key (all when key is nil
	// or not a full entry's) and drops one equal to it (Badger's copy is
	// the newer, see keys.go).
	sent := 0
	flush := func(key []byte) error {
		for pend != nil {
			kkey[0] = tagFull
			copy(kkey[1:], pend[:])
			c := -1
			if len(key) > 0 && key[0] == tagFull {
				c = bytes.Compare(kkey[:], key)
			}
			if c > 0 {
				return nil
			}
			if c < 0 {
				ke = store.Entry{Hash: hashkey.Hash(*pend), Len: hashkey.Size}
				if err := fn(kkey[:], &ke); err != nil {
					return err
				}
				// Badger's loop checks the context; a run of the key
				// table's keys between two of Badger's needs its own.
				if sent++; sent%ctxEvery == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
			}
			pull()
		}
		return perr
	}
	err := db.scanBadger(ctx, prefix, bits, values, func(key []byte, e *store.Entry) error {
		if err := flush(key); err != nil {
			return err
		}
		return fn(key, e)
	})
	if err != nil || done != nil {
		return err
	}
	if err := flush(nil); err != nil && err != errStop {
		return err
	}
	return nil
}

// scanBadger is scan over Badger's entries.
func (db *DB) scanBadger(ctx context.Context, prefix []byte, bits int, values bool, fn func([]byte, *store.Entry) error) error {
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
	var bad []error // values that cannot be decoded: reported by key, after the rest
	err := db.bdb.View(func(txn *badger.Txn) error {
		var e store.Entry
		for _, tag := range []byte{tagFull, tagPrefix} {
			seek[0] = tag
			err := func() error {
				it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: seek[:1+nb]})
				defer it.Close()
				n := 0
				for it.Seek(seek); it.Valid(); it.Next() {
					// Badger takes no context: a long scan looks at it
					// every ctxEvery keys.
					if n++; n%ctxEvery == 0 && ctx.Err() != nil {
						return ctx.Err()
					}
					item := it.Item()
					key := item.Key()
					if len(key) < 1+nbytes || db.expired(item) {
						continue
					}
					if mask != 0 && key[1+nb]&mask != seek[1+nb] {
						break // keys are sorted: past the prefix
					}
					e = store.Entry{Len: len(key) - 1}
					copy(e.Hash[:], key[1:])
					if x := item.ExpiresAt(); x != 0 && !values {
						e.Value.Expires = expiresOf(item) // for the counts
					}
					if values {
						v, err := db.itemValue(item)
						if err != nil {
							if len(bad) < maxBadValues {
								bad = append(bad, fmt.Errorf("value of %x: %w", key[1:], err))
							} else if len(bad) == maxBadValues {
								bad = append(bad, fmt.Errorf("%w: more values that cannot be read", store.ErrCorrupt))
							}
							continue
						}
						e.Value = v
					}
					if err := fn(key, &e); err != nil {
						fnErr = err
						return err
					}
				}
				return nil
			}()
			if err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case fnErr == errStop:
		err = nil
	case fnErr != nil:
		return fnErr
	}
	if err == nil && len(bad) > 0 {
		return errors.Join(bad...)
	}
	return translate(err)
}

// maxBadValues bounds the values that cannot be read a scan names.
const maxBadValues = 20
