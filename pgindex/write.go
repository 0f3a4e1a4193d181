package pgindex

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Put stores v under the full entry h, replacing any stored value
// (store.Put: a batch of one).
func (db *DB) Put(ctx context.Context, h hashkey.Hash, v store.Value) error {
	return store.Put(ctx, db, h, v)
}

// PutPrefix stores v under the prefix entry p (store.MinPrefixEntryLen..
// store.MaxPrefixEntryLen bytes, else store.ErrPrefixLength), replacing any
// stored value (store.PutPrefix).
func (db *DB) PutPrefix(ctx context.Context, p []byte, v store.Value) error {
	return store.PutPrefix(ctx, db, p, v)
}

// PutBatch stores every entry (full or prefix), replacing stored values.
// When a key repeats, the last entry wins. Each statement of
// Options.BatchSize rows is one transaction; the batch as a whole is not
// (a failure may keep a part of it).
func (db *DB) PutBatch(ctx context.Context, entries []store.Entry) error {
	_, err := db.write(ctx, entries, false)
	return err
}

// Add stores v under h unless h is stored, and reports whether it did
// (store.Add). It is one INSERT ... ON CONFLICT DO NOTHING RETURNING:
// atomic with respect to every other writer of the database, in any
// process on any host.
func (db *DB) Add(ctx context.Context, h hashkey.Hash, v store.Value) (added bool, err error) {
	return store.Add(ctx, db, h, v)
}

// AddBatch stores each entry whose key is not stored and reports,
// in input order, which ones it added. When a key repeats in the batch, only
// its first occurrence can be added. Each key is reported added by exactly
// one caller however many processes add it at once. Each statement of
// Options.BatchSize rows is one transaction; the batch as a whole is not.
func (db *DB) AddBatch(ctx context.Context, entries []store.Entry) ([]bool, error) {
	return db.write(ctx, entries, true)
}

// Delete removes a full or prefix entry. It returns an error wrapping
// store.ErrNotFound when the key is not stored and store.ErrPrefixLength
// for a bad prefix length.
func (db *DB) Delete(ctx context.Context, e store.Entry) error {
	if err := e.Check(); err != nil {
		return err
	}
	if e.IsPrefix() {
		return db.remove(ctx, db.q.deletePrefix, e.Key())
	}
	return db.remove(ctx, db.q.deleteFull, e.Key())
}

func (db *DB) remove(ctx context.Context, sql string, key []byte) error {
	if err := db.beginWrite(); err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, sql, key, db.now())
	if err != nil {
		return db.translate(err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %x", store.ErrNotFound, key)
	}
	return nil
}

// entryKey identifies an entry's key: its bytes (zero past n) and length.
type entryKey struct {
	h hashkey.Hash
	n uint8
}

func keyOf(e *store.Entry) entryKey {
	var k entryKey
	b := e.Key()
	copy(k.h[:], b)
	k.n = uint8(len(b))
	return k
}

// markReturned runs the statement sql, which returns the keys it wrote,
// and sets result[pos[key]] for each (retried as a whole on a transient
// error).
func (db *DB) markReturned(ctx context.Context, pos map[entryKey]int, result []bool, sql string, args ...any) error {
	var written [][]byte
	err := db.retry(ctx, func() error {
		written = written[:0]
		rows, err := db.pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		var k []byte
		_, err = pgx.ForEachRow(rows, []any{&k}, func() error {
			written = append(written, slices.Clone(k))
			return nil
		})
		return err
	})
	if err != nil {
		return db.translate(err)
	}
	for _, k := range written {
		i, ok := pos[keyOfBytes(k)]
		if !ok {
			return fmt.Errorf("%w: insert returned a key not sent: %x", store.ErrCorrupt, k)
		}
		result[i] = true
	}
	return nil
}

func keyOfBytes(b []byte) entryKey {
	var k entryKey
	copy(k.h[:], b)
	k.n = uint8(len(b))
	return k
}

func (k *entryKey) bytes() []byte { return k.h[:k.n] }

// positions maps each key of entries to the index of one occurrence: the
// first, or the last when last is set (a statement must not touch a row
// twice).
func positions(entries []store.Entry, last bool) map[entryKey]int {
	pos := make(map[entryKey]int, len(entries))
	for i := range entries {
		k := keyOf(&entries[i])
		if _, dup := pos[k]; dup && !last {
			continue
		}
		pos[k] = i
	}
	return pos
}

// sortedKeys returns the keys of pos, full and prefix apart, each in byte
// order: concurrent batches then take row locks in one order, which keeps
// them from deadlocking.
func sortedKeys(pos map[entryKey]int) (full, prefixes []entryKey) {
	for k := range pos {
		if k.n == hashkey.Size {
			full = append(full, k)
		} else {
			prefixes = append(prefixes, k)
		}
	}
	byBytes := func(a, b entryKey) int { return bytes.Compare(a.bytes(), b.bytes()) }
	slices.SortFunc(full, byBytes)
	slices.SortFunc(prefixes, byBytes)
	return full, prefixes
}

// checkEntry returns store.ErrPrefixLength for an entry that is neither
// full nor a 4..31-byte prefix entry, and store.ErrBadValue for a value
// that fails store.Value.Check.
func checkEntry(e *store.Entry) error {
	if e.Len < 0 || e.Len > hashkey.Size || (e.IsPrefix() && e.Len < store.MinPrefixEntryLen) {
		return fmt.Errorf("%w: %d bytes", store.ErrPrefixLength, e.Len)
	}
	if err := e.Value.Check(); err != nil {
		return fmt.Errorf("%w (key %x)", err, e.Key())
	}
	return nil
}

// write implements Put*, Add*. For ifAbsent it returns, per input
// entry, whether it was added; otherwise it returns nil.
func (db *DB) write(ctx context.Context, entries []store.Entry, ifAbsent bool) ([]bool, error) {
	for i := range entries {
		if err := checkEntry(&entries[i]); err != nil {
			return nil, err
		}
	}
	if err := db.beginWrite(); err != nil {
		return nil, err
	}
	var result []bool
	if ifAbsent {
		result = make([]bool, len(entries))
	}
	if len(entries) == 0 {
		return result, nil
	}
	// The first occurrence of a key adds; the last one puts.
	pos := positions(entries, !ifAbsent)
	full, prefixes := sortedKeys(pos)
	now := db.now()
	for _, part := range []struct {
		keys     []entryKey
		put, add string
	}{{full, db.q.putFull, db.q.addFull}, {prefixes, db.q.putPrefix, db.q.addPrefix}} {
		for chunk := range slices.Chunk(part.keys, db.opts.BatchSize) {
			ks := make([][]byte, len(chunk))
			texts := make([][]byte, len(chunk))
			datas := make([][]byte, len(chunk))
			firsts, lasts, exps := make([]*int64, len(chunk)), make([]*int64, len(chunk)), make([]*int64, len(chunk))
			for j := range chunk {
				ks[j] = chunk[j].bytes()
				v := &entries[pos[chunk[j]]].Value
				texts[j], datas[j] = nilIfEmpty(v.Text), nilIfEmpty(v.Data)
				firsts[j], lasts[j], exps[j] = seenOrNil(v)
			}
			if !ifAbsent {
				err := db.retry(ctx, func() error {
					_, err := db.pool.Exec(ctx, part.put, ks, texts, datas, firsts, lasts, exps)
					return err
				})
				if err != nil {
					return nil, db.translate(err)
				}
				continue
			}
			if err := db.markReturned(ctx, pos, result, part.add, ks, texts, datas, firsts, lasts, exps, now); err != nil {
				return nil, err
			}
		}
	}
	return result, nil
}

// nilIfEmpty makes an empty value part NULL.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
