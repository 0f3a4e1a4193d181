package pgindex

import (
	"context"
	"iter"

	"github.com/jackc/pgx/v5"
	"github.com/urlhash/urlhash/store"
)

// Load stores every entry of seq whose key is not stored yet (like
// AddBatch, the first of repeated keys wins; stored values are
// kept) and returns the counts. It is one transaction: the entries are
// streamed with COPY into a temporary table (nothing is held in client
// memory), then moved with INSERT ... SELECT ... ORDER BY key ON CONFLICT
// DO NOTHING, once for full and once for prefix entries. Present counts
// the input entries not added (already stored, or repeated); Streamed is
// always false. A bad entry fails the load and nothing is written. Other
// writers may run during Load: a key they add first counts as present.
func (db *DB) Load(ctx context.Context, seq iter.Seq[store.Entry]) (store.LoadResult, error) {
	if err := db.beginWrite(); err != nil {
		return store.LoadResult{}, err
	}
	var res store.LoadResult
	var n int64
	var errEntry error // a bad entry, reported as itself rather than as pgx's COPY failure
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, db.q.dropTmp); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, db.q.loadTemp); err != nil {
			return err
		}
		next, stop := iter.Pull(seq)
		defer stop()
		src := pgx.CopyFromFunc(func() ([]any, error) {
			e, ok := next()
			if !ok {
				return nil, nil
			}
			if err := checkEntry(&e); err != nil {
				errEntry = err
				return nil, err
			}
			n++
			first, last, exp := seenOrNil(&e.Value)
			return []any{e.Key(), n, nilIfEmpty(e.Value.Text), nilIfEmpty(e.Value.Data), first, last, exp}, nil
		})
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"pg_temp", loadTable},
			[]string{"k", "ord", "text", "data", "first_seen", "last_seen", "expires_at"}, src); err != nil {
			return err
		}
		now := db.now()
		for _, sql := range []string{db.q.loadExpiredFull, db.q.loadExpiredPrefix} {
			if _, err := tx.Exec(ctx, sql, now); err != nil {
				return err
			}
		}
		for _, sql := range []string{db.q.loadFull, db.q.loadPrefix} {
			tag, err := tx.Exec(ctx, sql)
			if err != nil {
				return err
			}
			res.Added += tag.RowsAffected()
		}
		_, err := tx.Exec(ctx, db.q.dropTmp)
		return err
	})
	if errEntry != nil {
		return store.LoadResult{}, errEntry
	}
	if err != nil {
		return store.LoadResult{}, db.translate(err)
	}
	res.Present = n - res.Added
	return res, nil
}
