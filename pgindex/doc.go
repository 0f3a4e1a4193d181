// Package pgindex is the urlhash index on PostgreSQL's wire protocol
// (PostgreSQL, CockroachDB, YugabyteDB): the same entries, answers and
// errors as package index, in a database that many processes on many
// hosts can share. Use it when one machine's disk or one process is not
// enough: several crawler hosts deduplicating one frontier, or more
// identities than one disk holds. Hashes are uniform, so the keyspace
// spreads over a range-partitioned engine without hot spots.
//
// # Basics
//
// Open a connection string (as pgx accepts: postgres://user@host/db or
// "host=... dbname=..."), use the DB from any number of goroutines, and
// Close it:
//
//	db, err := pgindex.Open(ctx, "postgres://crawler@db.example/urlhash", nil)
//	...
//	added, err := db.Add(ctx, h, store.Value{})
//
// A *DB is a store.Backend, like the embedded *index.DB, with the same
// method set (Put, PutPrefix, PutBatch, Get, Has, HasBatch, Delete,
// DeletePrefix, Add, AddBatch, VisitBatch, Match, Scan, ForEach, Count, Load, Stats, Verify, Sync,
// Close, Path, Profile, SetProfile), the store package's types and its
// sentinel errors (possibly wrapped, use errors.Is). pgindex links no
// Badger and no URL code. No pgx type or error escapes; server errors are
// reported by text with their SQLSTATE.
//
// Every method that talks to the database takes a context, passed to
// each pgx call: cancelling it ends the statement (pgx asks the server to
// cancel it) and the method returns an error wrapping ctx.Err().
//
// # Schema
//
// Open creates, on first use and unless Options.ReadOnly or
// Options.MustExist, a schema (Options.Schema, default "urlhash", so
// that several indexes can share a database) holding:
//
//	meta     (name TEXT PRIMARY KEY, value TEXT NOT NULL)
//	         "format" = FormatVersion, "profile" = Options.Profile,
//	         "identity" = 32 random hex digits (DB.Identity)
//	entries  (h BYTEA PRIMARY KEY CHECK (length(h) = 32), text BYTEA, data BYTEA,
//	          first_seen BIGINT, last_seen BIGINT, expires_at BIGINT)
//	prefixes (p BYTEA PRIMARY KEY CHECK (length(p) BETWEEN 4 AND 31), text BYTEA, data BYTEA,
//	          first_seen BIGINT, last_seen BIGINT, expires_at BIGINT)
//
// text and data are store.Value's Text and Data, NULL when empty; the
// times are unix seconds, NULL when not recorded. A writable Open of an
// index made before the time columns existed adds them (ALTER TABLE ADD
// COLUMN IF NOT EXISTS, probed first so that it runs once); a read-only
// Open of one is refused with store.ErrFormat until then. A
// newer format is refused with store.ErrFormat; the profile follows
// index.Options.Profile (recorded once, a different non-empty one refused
// with store.ErrProfileMismatch). The primary keys are B-trees ordered by
// bytes (bytea has no collation), so:
//
//   - Has, Get: one index probe; HasBatch: h = ANY($1) with
//     Options.BatchSize sorted keys per query.
//   - Match: one query, the full key UNION ALL the longest of the 28
//     prefixes of h (4..31 bytes) with p = ANY($2).
//   - Scan, Count: key ranges. A prefix of bits (half bytes allowed)
//     becomes lo <= key < hi, lo the prefix with the bits past it cleared
//     and hi lo plus one in its last bit; prefix entries must also be at
//     least as long as the prefix's bytes. Scan fetches pages of 1000 in
//     key order (ORDER BY h LIMIT), each starting just after the last key.
//   - Add(Batch): INSERT ... SELECT FROM unnest($1, $2, $3)
//     ON CONFLICT DO NOTHING RETURNING h; PutBatch: the same with
//     DO UPDATE.
//   - Load: COPY into a temporary table, then INSERT ... SELECT ...
//     ORDER BY key ON CONFLICT DO NOTHING, in one transaction.
//   - VisitBatch: INSERT ... ON CONFLICT DO UPDATE SET last_seen = now
//     ... WHERE (expired, or no last_seen, or last_seen <= now -
//     revisitAfter) RETURNING key: the row lock makes each due sighting
//     new for exactly one caller, in any process on any host.
//   - DeletePrefix: DELETE by the key range of the prefix, one
//     transaction.
//
// # Expiry (emulated)
//
// PostgreSQL has no TTL. A row whose expires_at is at or before the
// clock (Options.Now, unix seconds, passed as a parameter, so the clocks
// of the hosts sharing an index should agree) is filtered out of every
// read (expires_at IS NULL OR expires_at > now) and counts as absent to
// Add, VisitBatch and Load, which replace it (ON CONFLICT DO UPDATE
// ... WHERE expires_at <= now; Load deletes the expired rows of its keys
// first). Until then it stays in its table: PurgeExpired, or the same
// DELETE ... WHERE expires_at <= extract(epoch FROM now()) run from cron,
// removes expired rows and frees their space. Reads filter rows; no index
// on expires_at is kept (a purge reads the table).
//
// # Consistency
//
// Every statement is its own transaction (the server's default isolation,
// READ COMMITTED on PostgreSQL). Add relies on the primary key's
// unique index, not on locks in this process: when two sessions insert
// one key, the second waits for the first to commit and then skips it, so
// exactly one caller, in any process on any host, is told the key is
// new; a key repeated within a batch is new at most once (its first
// occurrence). Batches are sent in key order, so concurrent batches lock
// rows in the same order and do not deadlock; a statement that still
// fails with a deadlock or a serialization failure (SQLSTATE 40P01,
// 40001: CockroachDB runs SERIALIZABLE) is retried, which is safe because
// it changed nothing. A batch longer than Options.BatchSize is split into
// several transactions: after a failure a part of it may be stored, as
// after a crash with index.DB. Load is one transaction: all or nothing;
// keys that other writers add meanwhile are counted as present.
//
// Sync is a no-op: a method returns after its commit, and a commit is as
// durable as the server makes it (fsync, synchronous_commit, replicas).
// Scan is not one snapshot: each page is, so an entry written during a
// scan may or may not be visited, but every key is visited at most once,
// in order, and fn may call the DB.
//
// # YugabyteDB and CockroachDB notes
//
// YugabyteDB's YSQL hash-shards a table on its first primary-key column
// unless the key says ASC, and a hash-sharded key turns every key-range
// scan into a full scan. Open detects YugabyteDB (version() contains
// "-YB-") and creates the tables with PRIMARY KEY (h ASC) and
// PRIMARY KEY (p ASC); when creating them by hand, do the same:
//
//	CREATE TABLE urlhash.entries (h BYTEA NOT NULL CHECK (length(h) = 32),
//	    text BYTEA, data BYTEA, PRIMARY KEY (h ASC));
//
// Open keeps existing tables (CREATE TABLE IF NOT EXISTS), so hand-made
// ones with more splits or tablets are used as they are. Uniform hashes
// make pre-splitting at even byte boundaries (SPLIT AT VALUES) effective.
//
// CockroachDB orders primary keys ascending by default and needs nothing
// for scans. Load's temporary table (dropped at the end of Load's
// transaction, not ON COMMIT DROP, which CockroachDB lacks) needs the
// session variable experimental_enable_temp_tables = 'on', set for the
// user (ALTER ROLE ... SET) or in the connection string. Stats reports
// sizes as 0 there (no pg_total_relation_size).
//
// Behind PgBouncer in transaction mode, pgx's cached prepared statements
// do not survive across server connections: add
// default_query_exec_mode=exec (or simple_protocol) to the connection
// string.
//
// These notes follow the engines' documentation; the tests run against
// PostgreSQL only.
//
// # Filter
//
// index.DB keeps a roaring filter in memory that answers most lookups of
// absent keys without reading the store. pgindex has none, on purpose:
// other processes and hosts write to the same tables, and a filter built
// here would not know their keys, so it would answer "absent" for keys
// another host added (Has, HasBatch and Match would be wrong; Add
// stays right because the insert decides). Keeping it right would need
// invalidation: every writer publishing its keys (LISTEN/NOTIFY, logical
// replication) or bumping a change counter that every lookup reads, which
// costs a round trip of its own or a hot row. The gain is also smaller
// than with Badger: the round trip, not the key probe, dominates a remote
// lookup, and batching (HasBatch, AddBatch) already spreads it
// over many keys.
//
// A filter would be right where this DB is the only writer (one importer,
// or a single-host deployment using PostgreSQL for its operations):
// built by a key-only scan at Open and updated by its own writes, it
// could skip the query for absent keys, exactly as index does. That is
// not implemented.
//
// # Performance
//
// Measured with go test -bench . ./pgindex (100k keys, batches of 1000,
// both backends in the same run) on the shared 2-core test machine against
// a local PostgreSQL 15 started by .ci/postgres.sh, which runs with fsync
// off (commits reach the operating system only, as Badger's writes
// without SyncWrites; Badger's Load does fsync its tables). Per key, in
// the least loaded run: Load 2.4 µs (Badger 1.1), AddBatch 3.8 µs
// (Badger 2.4), HasBatch 1.4 µs (Badger 0.74); one Add 24 µs
// (Badger 7). Other runs on the busy machine varied up to three times
// either way. Over a network, add one round trip per statement.
package pgindex
