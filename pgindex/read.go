package pgindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// scanPage is the number of rows Scan fetches per query.
const scanPage = 1000

// Get returns the value of the full entry h, or store.ErrNotFound. The
// value's slices belong to the caller.
func (db *DB) Get(ctx context.Context, h hashkey.Hash) (store.Value, error) {
	if err := db.begin(); err != nil {
		return store.Value{}, err
	}
	var v store.Value
	var rt rowTimes
	err := db.pool.QueryRow(ctx, db.q.get, h[:], db.now()).Scan(append([]any{&v.Text, &v.Data}, rt.dest()...)...)
	if err != nil {
		return store.Value{}, db.translate(err)
	}
	rt.set(&v)
	return normValue(v), nil
}

// GetBatch returns, in input order, the values of the full entries hs and
// which are stored (a missing one has a zero Value). The hashes are sent
// sorted, Options.BatchSize per query (= ANY($1)), as HasBatch's. The
// values' slices belong to the caller, a repeated hash's each its own.
func (db *DB) GetBatch(ctx context.Context, hs []hashkey.Hash) ([]store.Value, []bool, error) {
	if err := db.begin(); err != nil {
		return nil, nil, err
	}
	vs, ok := make([]store.Value, len(hs)), make([]bool, len(hs))
	if len(hs) == 0 {
		return vs, ok, nil
	}
	found := make(map[hashkey.Hash]store.Value)
	now := db.now()
	for chunk := range slices.Chunk(hashKeys(hs), db.opts.BatchSize) {
		rows, err := db.pool.Query(ctx, db.q.getBatch, chunk, now)
		if err != nil {
			return nil, nil, db.translate(err)
		}
		var k []byte
		var v store.Value
		var rt rowTimes
		_, err = pgx.ForEachRow(rows, append([]any{&k, &v.Text, &v.Data}, rt.dest()...), func() error {
			if len(k) != hashkey.Size {
				return fmt.Errorf("%w: full key of %d bytes", store.ErrCorrupt, len(k))
			}
			got := normValue(store.Value{Text: slices.Clone(v.Text), Data: slices.Clone(v.Data)})
			rt.set(&got)
			found[hashkey.Hash(k)] = got
			return nil
		})
		if err != nil {
			return nil, nil, db.translate(err)
		}
	}
	seen := make(map[hashkey.Hash]bool)
	for i, h := range hs {
		v, present := found[h]
		if !present {
			continue
		}
		if seen[h] {
			v.Text, v.Data = slices.Clone(v.Text), slices.Clone(v.Data)
		}
		vs[i], ok[i], seen[h] = v, true, true
	}
	return vs, ok, nil
}

// hashKeys returns the distinct keys of hs, sorted: a batch query's
// parameter.
func hashKeys(hs []hashkey.Hash) [][]byte {
	keys := make([][]byte, len(hs))
	for i := range hs {
		keys[i] = hs[i][:]
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal)
}

// Has reports whether the full entry h is stored.
func (db *DB) Has(ctx context.Context, h hashkey.Hash) (bool, error) {
	if err := db.begin(); err != nil {
		return false, err
	}
	var ok bool
	err := db.pool.QueryRow(ctx, db.q.has, h[:], db.now()).Scan(&ok)
	return ok, db.translate(err)
}

// HasBatch reports, in input order, which full entries are stored. The
// hashes are sent sorted, Options.BatchSize per query (= ANY($1)).
func (db *DB) HasBatch(ctx context.Context, hs []hashkey.Hash) ([]bool, error) {
	if err := db.begin(); err != nil {
		return nil, err
	}
	out := make([]bool, len(hs))
	if len(hs) == 0 {
		return out, nil
	}
	found := make(map[hashkey.Hash]struct{})
	now := db.now()
	for chunk := range slices.Chunk(hashKeys(hs), db.opts.BatchSize) {
		rows, err := db.pool.Query(ctx, db.q.hasBatch, chunk, now)
		if err != nil {
			return nil, db.translate(err)
		}
		var k []byte
		_, err = pgx.ForEachRow(rows, []any{&k}, func() error {
			if len(k) != hashkey.Size {
				return fmt.Errorf("%w: full key of %d bytes", store.ErrCorrupt, len(k))
			}
			found[hashkey.Hash(k)] = struct{}{}
			return nil
		})
		if err != nil {
			return nil, db.translate(err)
		}
	}
	for i := range hs {
		_, out[i] = found[hs[i]]
	}
	return out, nil
}

// Match returns the full entry h when it is stored, else the longest stored
// prefix entry that h starts with. The bool is false when neither exists.
// It is one query: the full key, and the 28 prefixes of h
// (store.MinPrefixEntryLen..store.MaxPrefixEntryLen bytes) with = ANY.
func (db *DB) Match(ctx context.Context, h hashkey.Hash) (store.Match, bool, error) {
	if err := db.begin(); err != nil {
		return store.Match{}, false, err
	}
	prefixes := make([][]byte, 0, store.MaxPrefixEntryLen-store.MinPrefixEntryLen+1)
	for n := store.MinPrefixEntryLen; n <= store.MaxPrefixEntryLen; n++ {
		prefixes = append(prefixes, h[:n])
	}
	var m store.Match
	var n int32
	var rt rowTimes
	err := db.pool.QueryRow(ctx, db.q.match, h[:], prefixes, db.now()).Scan(append([]any{&n, &m.Value.Text, &m.Value.Data}, rt.dest()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Match{}, false, nil
	}
	if err != nil {
		return store.Match{}, false, db.translate(err)
	}
	m.Len = int(n)
	rt.set(&m.Value)
	m.Value = normValue(m.Value)
	return m, true, nil
}

// Scan calls fn for each entry whose key starts with the leading bits of
// prefix (bits may be any value 0..256, so a half-byte prefix is
// bits = 4*hex digits), in key order: first the full entries, then the
// prefix entries at least that long; at most limit entries in all
// (limit <= 0: no limit). It stops at the first error fn returns and
// returns it. The entry's value slices belong to fn.
//
// Scan reads pages of rows by key range (h >= lo AND h < hi ORDER BY h),
// each page one query; no connection or transaction is held while fn
// runs, so fn may call methods of db. Unlike index.DB.Scan, the pages are
// not one snapshot: an entry written or deleted during the scan may or
// may not be visited, but every key is visited at most once, in order.
func (db *DB) Scan(ctx context.Context, prefix []byte, bits int, limit int, fn func(store.Entry) error) error {
	if err := store.CheckPrefix(prefix, bits); err != nil {
		return err
	}
	if err := db.begin(); err != nil {
		return err
	}
	lo, hi, nbytes := keyRange(prefix, bits)
	now := db.now()
	n := 0
	for _, isPrefix := range []bool{false, true} {
		from := lo
		for {
			if err := db.begin(); err != nil {
				return err
			}
			page := scanPage
			if limit > 0 {
				page = min(page, limit-n)
			}
			if page <= 0 {
				return nil
			}
			var rows pgx.Rows
			var err error
			if isPrefix {
				rows, err = db.pool.Query(ctx, db.q.scanPrefix, from, hi, nbytes, page, now)
			} else {
				rows, err = db.pool.Query(ctx, db.q.scanFull, from, hi, page, now)
			}
			if err != nil {
				return db.translate(err)
			}
			entries, err := collectEntries(rows, isPrefix)
			if err != nil {
				return db.translate(err)
			}
			for _, e := range entries {
				if err := fn(e); err != nil {
					return err
				}
			}
			n += len(entries)
			if len(entries) < page {
				break
			}
			// The smallest key after the last one visited.
			last := entries[len(entries)-1]
			from = append(slices.Clone(last.Key()), 0)
		}
	}
	return nil
}

// collectEntries reads the rows of a scan query.
func collectEntries(rows pgx.Rows, isPrefix bool) ([]store.Entry, error) {
	var out []store.Entry
	var k []byte
	var v store.Value
	var rt rowTimes
	_, err := pgx.ForEachRow(rows, append([]any{&k, &v.Text, &v.Data}, rt.dest()...), func() error {
		var e store.Entry
		if isPrefix {
			if len(k) < store.MinPrefixEntryLen || len(k) > store.MaxPrefixEntryLen {
				return fmt.Errorf("%w: prefix key %x", store.ErrCorrupt, k)
			}
			e.Len = len(k)
		} else {
			if len(k) != hashkey.Size {
				return fmt.Errorf("%w: full key %x", store.ErrCorrupt, k)
			}
			e.Len = hashkey.Size
		}
		copy(e.Hash[:], k)
		e.Value = normValue(store.Value{Text: slices.Clone(v.Text), Data: slices.Clone(v.Data)})
		rt.set(&e.Value)
		out = append(out, e)
		return nil
	})
	return out, err
}

// ForEach calls fn for every entry in key order (full entries, then prefix
// entries), stopping at the first error fn returns. See Scan.
func (db *DB) ForEach(ctx context.Context, fn func(store.Entry) error) error {
	return db.Scan(ctx, nil, 0, 0, fn)
}

// Count returns the number of full entries and of prefix entries that
// Scan(prefix, bits, 0, ...) would visit: two count(*) queries over key
// ranges.
func (db *DB) Count(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error) {
	if err := store.CheckPrefix(prefix, bits); err != nil {
		return 0, 0, err
	}
	if err := db.begin(); err != nil {
		return 0, 0, err
	}
	lo, hi, nbytes := keyRange(prefix, bits)
	now := db.now()
	if err := db.pool.QueryRow(ctx, db.q.countFull, lo, hi, now).Scan(&full); err != nil {
		return 0, 0, db.translate(err)
	}
	if err := db.pool.QueryRow(ctx, db.q.countPrefix, lo, hi, nbytes, now).Scan(&prefixes); err != nil {
		return 0, 0, db.translate(err)
	}
	return full, prefixes, nil
}

// maxKey sorts after every stored key (32 bytes at most).
var maxKey = bytes.Repeat([]byte{0xff}, hashkey.Size+1)

// keyRange returns the key range [lo, hi) of the keys whose leading bits
// equal those of prefix, and the number of bytes those bits occupy (a
// prefix entry shorter than that cannot match). lo is the prefix's bytes
// with the bits past the prefix cleared; hi is lo plus one in the last
// prefix bit, or maxKey when that overflows.
func keyRange(prefix []byte, bits int) (lo, hi []byte, nbytes int) {
	nbytes = (bits + 7) / 8
	lo = make([]byte, nbytes)
	copy(lo, prefix[:nbytes])
	if r := bits % 8; r != 0 {
		lo[nbytes-1] &= 0xff << (8 - r)
	}
	hi = slices.Clone(lo)
	unit := 1
	if r := bits % 8; r != 0 {
		unit = 1 << (8 - r)
	}
	for i := nbytes - 1; i >= 0; i-- {
		s := int(hi[i]) + unit
		hi[i] = byte(s)
		if s <= 0xff {
			return lo, hi, nbytes
		}
		unit = 1
	}
	return lo, maxKey, nbytes // all ones (or no prefix): no upper bound
}

// normValue makes empty parts nil, as index.DB returns them.
func normValue(v store.Value) store.Value {
	if len(v.Text) == 0 {
		v.Text = nil
	}
	if len(v.Data) == 0 {
		v.Data = nil
	}
	return v
}
