package pgindex

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/urlhash/urlhash/store"
)

// Stats returns the index's counts (exact: count(*) of the live rows of
// both tables, which reads every row of a large index; Expiring counts
// the live rows with an expires_at) and size: DiskBytes is
// pg_total_relation_size of the three tables (heap, primary-key index and
// TOAST), 0 where the server lacks the function (CockroachDB).
// FormatVersion is the schema version recorded in the meta table.
func (db *DB) Stats(ctx context.Context) (store.Stats, error) {
	if err := db.begin(); err != nil {
		return store.Stats{}, err
	}
	s := store.Stats{Profile: db.profileName()}
	var format string
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM `+db.full+` WHERE `+live("", "1")+`),
		(SELECT count(*) FROM `+db.prefix+` WHERE `+live("", "1")+`),
		(SELECT count(*) FROM `+db.full+` WHERE expires_at > $1::int8) +
			(SELECT count(*) FROM `+db.prefix+` WHERE expires_at > $1::int8),
		(SELECT value FROM `+db.meta+` WHERE name = 'format')`, db.now()).Scan(&s.Entries, &s.PrefixEntries, &s.Expiring, &format)
	if err != nil {
		return store.Stats{}, db.translate(err)
	}
	if s.FormatVersion, err = strconv.Atoi(format); err != nil {
		return store.Stats{}, fmt.Errorf("%w: bad format record %q", store.ErrFormat, format)
	}
	err = db.pool.QueryRow(ctx, `SELECT
		pg_total_relation_size($1::regclass) + pg_total_relation_size($2::regclass) + pg_total_relation_size($3::regclass)`,
		db.full, db.prefix, db.meta).Scan(&s.DiskBytes)
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && pe.Code == "42883") { // undefined_function
		return store.Stats{}, db.translate(err)
	}
	return s, nil
}

// Verify checks the index: the format record is present and readable, and
// every key is well formed (32-byte full keys, 4..31-byte prefix keys, no
// NULL). It reads every key. It returns an error wrapping
// store.ErrCorrupt when a check fails.
func (db *DB) Verify(ctx context.Context) error {
	if err := db.begin(); err != nil {
		return err
	}
	var format *string
	var badFull, badPrefix int64
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT value FROM `+db.meta+` WHERE name = 'format'),
		(SELECT count(*) FROM `+db.full+` WHERE h IS NULL OR length(h) <> 32),
		(SELECT count(*) FROM `+db.prefix+` WHERE p IS NULL OR length(p) NOT BETWEEN 4 AND 31)`).
		Scan(&format, &badFull, &badPrefix)
	if err != nil {
		return db.translate(err)
	}
	switch {
	case format == nil:
		return fmt.Errorf("%w: no format record", store.ErrCorrupt)
	case badFull > 0:
		return fmt.Errorf("%w: %d full keys not %d bytes long", store.ErrCorrupt, badFull, 32)
	case badPrefix > 0:
		return fmt.Errorf("%w: %d prefix keys not %d..%d bytes long", store.ErrCorrupt, badPrefix,
			store.MinPrefixEntryLen, store.MaxPrefixEntryLen)
	}
	if v, err := strconv.Atoi(*format); err != nil || v < 1 || v > FormatVersion {
		return fmt.Errorf("%w: format record %q", store.ErrCorrupt, *format)
	}
	return nil
}
