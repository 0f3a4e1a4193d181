package pgindex

// queries holds the SQL statements of one index, with its table names
// filled in. pgx prepares and caches each on every connection.
//
// Times are BIGINT unix seconds (NULL: none). Every read takes the
// index's clock as its last parameter and sees only live rows
// (expires_at IS NULL OR expires_at > now): expiry is emulated, and an
// expired row stays in its table until a write replaces it (add, visit,
// load, put) or PurgeExpired removes it (DeletePrefix deletes, and counts,
// live rows only).
type queries struct {
	get, getBatch, has, hasBatch, match     string
	scanFull, scanPrefix                    string
	countFull, countPrefix                  string
	putFull, putPrefix                      string
	addFull, addPrefix                      string
	visitFull, visitPrefix                  string
	deleteFull, deletePrefix                string
	deleteRangeFull, deleteRangePrefix      string
	purgeFull, purgePrefix                  string
	loadTemp, loadFull, loadPrefix, dropTmp string
	loadExpiredFull, loadExpiredPrefix      string
	probeTimes                              string
	addTimes                                []string
}

// loadTable is Load's per-transaction temporary table.
const loadTable = "pgindex_load"

// live is the condition that a row of alias t (or "") has not expired at
// parameter $n.
func live(t, n string) string {
	return `(` + t + `expires_at IS NULL OR ` + t + `expires_at > $` + n + `::int8)`
}

func newQueries(full, prefix string) queries {
	// Keys are compared as bytes (bytea has no collation), so key ranges
	// and ORDER BY use the primary key's order.
	const cols = `text, data, first_seen, last_seen, expires_at`
	const unnest6 = `unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::int8[], $5::int8[], $6::int8[])`
	// An add replaces an expired row whole (ON CONFLICT ... WHERE): the
	// row lock makes it new for one caller only.
	const replaceAll = `DO UPDATE SET text = excluded.text, data = excluded.data, first_seen = excluded.first_seen,
			last_seen = excluded.last_seen, expires_at = excluded.expires_at`
	// A visit of an expired row starts it afresh; of a due row keeps
	// first_seen and the parts the visit does not set.
	const expired = `t.expires_at <= $5::int8`
	const visitSet = `DO UPDATE SET
			text = CASE WHEN ` + expired + ` THEN excluded.text ELSE COALESCE(excluded.text, t.text) END,
			data = CASE WHEN ` + expired + ` THEN excluded.data ELSE COALESCE(excluded.data, t.data) END,
			first_seen = CASE WHEN ` + expired + ` THEN excluded.first_seen ELSE COALESCE(t.first_seen, excluded.first_seen) END,
			last_seen = excluded.last_seen,
			expires_at = CASE WHEN ` + expired + ` THEN excluded.expires_at ELSE COALESCE(excluded.expires_at, t.expires_at) END
		WHERE ` + expired + ` OR t.last_seen IS NULL OR ($6::int8 > 0 AND t.last_seen <= $5::int8 - $6::int8)`
	visit := func(table, key string) string {
		return `INSERT INTO ` + table + ` AS t (` + key + `, text, data, expires_at, first_seen, last_seen)
			SELECT k, tx, d, e, $5::int8, $5::int8 FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::int8[]) AS u(k, tx, d, e)
			ON CONFLICT (` + key + `) ` + visitSet + ` RETURNING ` + key
	}
	addTimes := func(table string) string {
		return `ALTER TABLE ` + table + ` ADD COLUMN IF NOT EXISTS first_seen BIGINT,
			ADD COLUMN IF NOT EXISTS last_seen BIGINT, ADD COLUMN IF NOT EXISTS expires_at BIGINT`
	}
	return queries{
		get:      `SELECT ` + cols + ` FROM ` + full + ` WHERE h = $1 AND ` + live("", "2"),
		getBatch: `SELECT h, ` + cols + ` FROM ` + full + ` WHERE h = ANY($1::bytea[]) AND ` + live("", "2"),
		has:      `SELECT EXISTS (SELECT 1 FROM ` + full + ` WHERE h = $1 AND ` + live("", "2") + `)`,
		hasBatch: `SELECT h FROM ` + full + ` WHERE h = ANY($1::bytea[]) AND ` + live("", "2"),
		match: `(SELECT 32 AS n, ` + cols + ` FROM ` + full + ` WHERE h = $1 AND ` + live("", "3") + `)
			UNION ALL
			(SELECT length(p) AS n, ` + cols + ` FROM ` + prefix + ` WHERE p = ANY($2::bytea[]) AND ` + live("", "3") + `
			ORDER BY length(p) DESC LIMIT 1)
			ORDER BY n DESC LIMIT 1`,
		scanFull: `SELECT h, ` + cols + ` FROM ` + full + ` WHERE h >= $1 AND h < $2 AND ` + live("", "4") + ` ORDER BY h LIMIT $3`,
		scanPrefix: `SELECT p, ` + cols + ` FROM ` + prefix + ` WHERE p >= $1 AND p < $2 AND length(p) >= $3 AND ` + live("", "5") + `
			ORDER BY p LIMIT $4`,
		countFull:   `SELECT count(*) FROM ` + full + ` WHERE h >= $1 AND h < $2 AND ` + live("", "3"),
		countPrefix: `SELECT count(*) FROM ` + prefix + ` WHERE p >= $1 AND p < $2 AND length(p) >= $3 AND ` + live("", "4"),
		putFull: `INSERT INTO ` + full + ` (h, ` + cols + `)
			SELECT * FROM ` + unnest6 + `
			ON CONFLICT (h) ` + replaceAll,
		putPrefix: `INSERT INTO ` + prefix + ` (p, ` + cols + `)
			SELECT * FROM ` + unnest6 + `
			ON CONFLICT (p) ` + replaceAll,
		addFull: `INSERT INTO ` + full + ` AS t (h, ` + cols + `)
			SELECT * FROM ` + unnest6 + `
			ON CONFLICT (h) ` + replaceAll + ` WHERE t.expires_at <= $7::int8 RETURNING h`,
		addPrefix: `INSERT INTO ` + prefix + ` AS t (p, ` + cols + `)
			SELECT * FROM ` + unnest6 + `
			ON CONFLICT (p) ` + replaceAll + ` WHERE t.expires_at <= $7::int8 RETURNING p`,
		visitFull:         visit(full, "h"),
		visitPrefix:       visit(prefix, "p"),
		deleteFull:        `DELETE FROM ` + full + ` WHERE h = $1 AND ` + live("", "2"),
		deletePrefix:      `DELETE FROM ` + prefix + ` WHERE p = $1 AND ` + live("", "2"),
		deleteRangeFull:   `DELETE FROM ` + full + ` WHERE h >= $1 AND h < $2 AND ` + live("", "3"),
		deleteRangePrefix: `DELETE FROM ` + prefix + ` WHERE p >= $1 AND p < $2 AND length(p) >= $3 AND ` + live("", "4"),
		purgeFull:         `DELETE FROM ` + full + ` WHERE expires_at <= $1::int8`,
		purgePrefix:       `DELETE FROM ` + prefix + ` WHERE expires_at <= $1::int8`,
		// Dropped explicitly rather than ON COMMIT DROP, which CockroachDB
		// lacks; on PostgreSQL a rollback drops it as well.
		loadTemp: `CREATE TEMP TABLE ` + loadTable + ` (k BYTEA NOT NULL, ord BIGINT NOT NULL, text BYTEA, data BYTEA,
			first_seen BIGINT, last_seen BIGINT, expires_at BIGINT)`,
		loadFull: `INSERT INTO ` + full + ` (h, ` + cols + `)
			SELECT k, ` + cols + ` FROM pg_temp.` + loadTable + ` WHERE length(k) = 32 ORDER BY k, ord
			ON CONFLICT DO NOTHING`,
		loadPrefix: `INSERT INTO ` + prefix + ` (p, ` + cols + `)
			SELECT k, ` + cols + ` FROM pg_temp.` + loadTable + ` WHERE length(k) < 32 ORDER BY k, ord
			ON CONFLICT DO NOTHING`,
		// A load adds where a row expired: the expired rows of its keys go
		// first, in the same transaction.
		loadExpiredFull: `DELETE FROM ` + full + ` WHERE expires_at <= $1::int8
			AND h IN (SELECT k FROM pg_temp.` + loadTable + ` WHERE length(k) = 32)`,
		loadExpiredPrefix: `DELETE FROM ` + prefix + ` WHERE expires_at <= $1::int8
			AND p IN (SELECT k FROM pg_temp.` + loadTable + ` WHERE length(k) < 32)`,
		// pg_temp: never a permanent table of that name on the search path.
		dropTmp:    `DROP TABLE IF EXISTS pg_temp.` + loadTable,
		probeTimes: `SELECT (SELECT count(*) FROM (SELECT expires_at FROM ` + full + ` LIMIT 0) a) + (SELECT count(*) FROM (SELECT expires_at FROM ` + prefix + ` LIMIT 0) b)`,
		addTimes:   []string{addTimes(full), addTimes(prefix)},
	}
}
