package pgindex

// queries holds the SQL statements of one index, with its table names
// filled in. pgx prepares and caches each on every connection.
type queries struct {
	get, has, hasBatch, match               string
	scanFull, scanPrefix                    string
	countFull, countPrefix                  string
	putFull, putPrefix                      string
	addFull, addPrefix                      string
	deleteFull, deletePrefix                string
	loadTemp, loadFull, loadPrefix, dropTmp string
}

// loadTable is Load's per-transaction temporary table.
const loadTable = "pgindex_load"

func newQueries(full, prefix string) queries {
	// Keys are compared as bytes (bytea has no collation), so key ranges
	// and ORDER BY use the primary key's order.
	return queries{
		get:      `SELECT text, data FROM ` + full + ` WHERE h = $1`,
		has:      `SELECT EXISTS (SELECT 1 FROM ` + full + ` WHERE h = $1)`,
		hasBatch: `SELECT h FROM ` + full + ` WHERE h = ANY($1::bytea[])`,
		match: `(SELECT 32 AS n, text, data FROM ` + full + ` WHERE h = $1)
			UNION ALL
			(SELECT length(p) AS n, text, data FROM ` + prefix + ` WHERE p = ANY($2::bytea[]) ORDER BY length(p) DESC LIMIT 1)
			ORDER BY n DESC LIMIT 1`,
		scanFull: `SELECT h, text, data FROM ` + full + ` WHERE h >= $1 AND h < $2 ORDER BY h LIMIT $3`,
		scanPrefix: `SELECT p, text, data FROM ` + prefix + ` WHERE p >= $1 AND p < $2 AND length(p) >= $3
			ORDER BY p LIMIT $4`,
		countFull:   `SELECT count(*) FROM ` + full + ` WHERE h >= $1 AND h < $2`,
		countPrefix: `SELECT count(*) FROM ` + prefix + ` WHERE p >= $1 AND p < $2 AND length(p) >= $3`,
		putFull: `INSERT INTO ` + full + ` (h, text, data)
			SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])
			ON CONFLICT (h) DO UPDATE SET text = excluded.text, data = excluded.data`,
		putPrefix: `INSERT INTO ` + prefix + ` (p, text, data)
			SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])
			ON CONFLICT (p) DO UPDATE SET text = excluded.text, data = excluded.data`,
		addFull: `INSERT INTO ` + full + ` (h, text, data)
			SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])
			ON CONFLICT DO NOTHING RETURNING h`,
		addPrefix: `INSERT INTO ` + prefix + ` (p, text, data)
			SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])
			ON CONFLICT DO NOTHING RETURNING p`,
		deleteFull:   `DELETE FROM ` + full + ` WHERE h = $1`,
		deletePrefix: `DELETE FROM ` + prefix + ` WHERE p = $1`,
		// Dropped explicitly rather than ON COMMIT DROP, which CockroachDB
		// lacks; on PostgreSQL a rollback drops it as well.
		loadTemp: `CREATE TEMP TABLE ` + loadTable + ` (k BYTEA NOT NULL, ord BIGINT NOT NULL, text BYTEA, data BYTEA)`,
		loadFull: `INSERT INTO ` + full + ` (h, text, data)
			SELECT k, text, data FROM pg_temp.` + loadTable + ` WHERE length(k) = 32 ORDER BY k, ord
			ON CONFLICT DO NOTHING`,
		loadPrefix: `INSERT INTO ` + prefix + ` (p, text, data)
			SELECT k, text, data FROM pg_temp.` + loadTable + ` WHERE length(k) < 32 ORDER BY k, ord
			ON CONFLICT DO NOTHING`,
		// pg_temp: never a permanent table of that name on the search path.
		dropTmp: `DROP TABLE IF EXISTS pg_temp.` + loadTable,
	}
}
