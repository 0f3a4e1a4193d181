package pgindex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/urlhash/urlhash/store"
)

// upgrade adds the time columns (first_seen, last_seen, expires_at) to the
// tables of an index created before they existed; a read-only open of
// such an index is refused, naming the fix.
func (db *DB) upgrade(ctx context.Context) error {
	var n int64
	err := db.pool.QueryRow(ctx, db.q.probeTimes).Scan(&n)
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) || pe.Code != "42703" { // undefined_column
		return db.translate(err)
	}
	if db.opts.ReadOnly {
		return fmt.Errorf("%w: schema %s lacks the time columns; open it writable once (any write) to add them",
			store.ErrFormat, db.opts.Schema)
	}
	for _, s := range db.q.addTimes {
		if _, err := db.pool.Exec(ctx, s); err != nil {
			return db.translate(err)
		}
	}
	return nil
}

// now returns the index clock in unix seconds.
func (db *DB) now() int64 { return db.opts.Now().Unix() }

// unixOrNil returns t in unix seconds, or nil (NULL) for the zero time.
func unixOrNil(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	x := t.Unix()
	return &x
}

// rowTimes is the time columns of a row.
type rowTimes struct{ first, last, exp *int64 }

func (r *rowTimes) dest() []any { return []any{&r.first, &r.last, &r.exp} }

func (r *rowTimes) set(v *store.Value) {
	at := func(p *int64) time.Time {
		if p == nil {
			return time.Time{}
		}
		return store.Unix(*p)
	}
	v.FirstSeen, v.LastSeen, v.Expires = at(r.first), at(r.last), at(r.exp)
}

// VisitBatch implements store.Backend: one INSERT ... ON CONFLICT DO UPDATE
// ... WHERE (due) RETURNING per Options.BatchSize keys, so that a row lock
// decides among concurrent visitors, in any process on any host.
// revisitAfter is rounded up to whole seconds; the clock is Options.Now of
// this process (keep the hosts' clocks in step).
func (db *DB) VisitBatch(ctx context.Context, entries []store.Entry, revisitAfter time.Duration) ([]bool, error) {
	for i := range entries {
		if err := checkEntry(&entries[i]); err != nil {
			return nil, err
		}
	}
	if err := db.beginWrite(); err != nil {
		return nil, err
	}
	result := make([]bool, len(entries))
	if len(entries) == 0 {
		return result, nil
	}
	after := int64(0)
	if revisitAfter > 0 {
		after = int64((revisitAfter + time.Second - 1) / time.Second)
	}
	now := db.now()
	pos := positions(entries, false) // the first occurrence visits
	full, prefixes := sortedKeys(pos)
	for _, part := range []struct {
		keys []entryKey
		sql  string
	}{{full, db.q.visitFull}, {prefixes, db.q.visitPrefix}} {
		for chunk := range slices.Chunk(part.keys, db.opts.BatchSize) {
			ks := make([][]byte, len(chunk))
			texts := make([][]byte, len(chunk))
			datas := make([][]byte, len(chunk))
			exps := make([]*int64, len(chunk))
			for j := range chunk {
				ks[j] = chunk[j].bytes()
				v := &entries[pos[chunk[j]]].Value
				texts[j], datas[j], exps[j] = nilIfEmpty(v.Text), nilIfEmpty(v.Data), unixOrNil(v.Expires)
			}
			if err := db.markReturned(ctx, pos, result, part.sql, ks, texts, datas, exps, now, after); err != nil {
				return nil, err
			}
		}
	}
	return result, nil
}

// DeletePrefix implements store.Backend: two DELETEs by key range (live
// rows are counted; expired ones in the range stay until purged).
func (db *DB) DeletePrefix(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error) {
	if err := store.CheckPrefix(prefix, bits); err != nil {
		return 0, 0, err
	}
	if err := db.beginWrite(); err != nil {
		return 0, 0, err
	}
	lo, hi, nbytes := keyRange(prefix, bits)
	now := db.now()
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, db.q.deleteRangeFull, lo, hi, now)
		if err != nil {
			return err
		}
		full = tag.RowsAffected()
		tag, err = tx.Exec(ctx, db.q.deleteRangePrefix, lo, hi, nbytes, now)
		prefixes = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, 0, db.translate(err)
	}
	return full, prefixes, nil
}

// PurgeExpired deletes the rows that have expired by Options.Now and
// returns how many it deleted. Reads never see expired rows; this only
// frees their space (run it from time to time, or the equivalent DELETE
// ... WHERE expires_at <= extract(epoch FROM now()) from cron).
func (db *DB) PurgeExpired(ctx context.Context) (int64, error) {
	if err := db.beginWrite(); err != nil {
		return 0, err
	}
	now := db.now()
	var n int64
	for _, sql := range []string{db.q.purgeFull, db.q.purgePrefix} {
		tag, err := db.pool.Exec(ctx, sql, now)
		if err != nil {
			return n, db.translate(err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

// seenOrNil returns v's times as the columns store them (see
// store.Value.SeenUnix), NULL for none.
func seenOrNil(v *store.Value) (first, last, exp *int64) {
	f, l := v.SeenUnix()
	return int64OrNil(f), int64OrNil(l), unixOrNil(v.Expires)
}

// int64OrNil is x, or NULL for 0.
func int64OrNil(x int64) *int64 {
	if x == 0 {
		return nil
	}
	return &x
}
