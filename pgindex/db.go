package pgindex

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/urlhash/urlhash/store"
)

// FormatVersion is the schema version this package creates and the newest
// it reads. It is recorded in the meta table under "format".
const FormatVersion = 1

var _ store.Backend = (*DB)(nil)

// DB is an index in a PostgreSQL (or PostgreSQL-protocol) database. Its
// methods are safe for concurrent use, and several DBs, in this process or
// others, on this host or others, may use one index at the same time.
type DB struct {
	pool      *pgxpool.Pool
	opts      Options
	path      string     // connection string, password redacted
	profileMu sync.Mutex // guards profile after Open
	profile   string
	identity  string // see Identity
	closed    atomic.Bool

	// Qualified table names and the statements that use them.
	meta, full, prefix string
	q                  queries
}

// Open connects to the database named by connString (a postgres:// URL or
// a keyword/value string, as pgx accepts) and opens the index in
// opts.Schema, creating the schema and its tables unless opts says
// ReadOnly or MustExist. A nil opts means defaults.
//
// ctx bounds Open; each later operation runs under the context it is
// given (pgx sends PostgreSQL a cancel request when it ends).
//
// Errors: store.ErrNoIndex (no index and creation not allowed),
// store.ErrFormat (newer or malformed format record),
// store.ErrProfileMismatch, store.ErrInvalidOptions, or a connection
// error; all may be wrapped.
func Open(ctx context.Context, connString string, opts *Options) (*DB, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("%w: connection string: %v", store.ErrInvalidOptions, redactErr(err, connString))
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgindex: %v", redactErr(err, connString))
	}
	db := &DB{
		pool:   pool,
		opts:   o,
		path:   Redact(connString),
		meta:   pgx.Identifier{o.Schema, "meta"}.Sanitize(),
		full:   pgx.Identifier{o.Schema, "entries"}.Sanitize(),
		prefix: pgx.Identifier{o.Schema, "prefixes"}.Sanitize(),
	}
	db.q = newQueries(db.full, db.prefix)
	if err := db.init(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// init creates the schema when allowed and checks the metadata.
func (db *DB) init(ctx context.Context) error {
	// The prefix table is created last: when it exists, so do the others
	// (an index made before creation became one transaction may lack it).
	var exists bool
	err := db.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, db.prefix).Scan(&exists)
	if err != nil {
		return db.translate(err)
	}
	if !exists {
		if db.opts.ReadOnly || db.opts.MustExist {
			return fmt.Errorf("%w: schema %s", store.ErrNoIndex, db.opts.Schema)
		}
		if err := db.create(ctx); err != nil {
			return err
		}
	}
	if err := db.upgrade(ctx); err != nil {
		return err
	}
	if !db.opts.ReadOnly {
		// Record the format (first Open) and the profile (first Open with
		// one); concurrent Opens agree because only one insert wins.
		_, err := db.pool.Exec(ctx, `INSERT INTO `+db.meta+` (name, value) VALUES ('format', $1) ON CONFLICT DO NOTHING`,
			strconv.Itoa(FormatVersion))
		if err != nil {
			return db.translate(err)
		}
		// The identity, drawn by the first writable Open (of an index
		// made before identities too); concurrent ones agree likewise.
		id := make([]byte, 16)
		rand.Read(id)
		if _, err := db.pool.Exec(ctx, `INSERT INTO `+db.meta+` (name, value) VALUES ('identity', $1) ON CONFLICT DO NOTHING`,
			hex.EncodeToString(id)); err != nil {
			return db.translate(err)
		}
		if db.opts.Profile != "" {
			_, err := db.pool.Exec(ctx, `INSERT INTO `+db.meta+` (name, value) VALUES ('profile', $1) ON CONFLICT DO NOTHING`,
				db.opts.Profile)
			if err != nil {
				return db.translate(err)
			}
		}
	}
	rows, err := db.pool.Query(ctx, `SELECT name, value FROM `+db.meta+` WHERE name IN ('format', 'profile', 'identity')`)
	if err != nil {
		return db.translate(err)
	}
	var format string
	var sawFormat bool
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			rows.Close()
			return db.translate(err)
		}
		switch name {
		case "format":
			format, sawFormat = value, true
		case "profile":
			db.profile = value
		case "identity":
			db.identity = value
		}
	}
	if err := rows.Err(); err != nil {
		return db.translate(err)
	}
	if !sawFormat {
		return fmt.Errorf("%w: no format record in %s", store.ErrFormat, db.meta)
	}
	v, err := strconv.Atoi(format)
	if err != nil || v < 1 {
		return fmt.Errorf("%w: bad format record %q", store.ErrFormat, format)
	}
	if v > FormatVersion {
		return fmt.Errorf("%w: version %d, this program reads up to %d", store.ErrFormat, v, FormatVersion)
	}
	if p := db.opts.Profile; p != "" && db.profile != "" && db.profile != p {
		return fmt.Errorf("%w: index has %q, asked for %q", store.ErrProfileMismatch, db.profile, p)
	}
	return nil
}

// create creates the schema and tables. Two processes creating the same
// schema at once may collide on the catalog's unique indexes; the loser
// retries and finds everything in place.
func (db *DB) create(ctx context.Context) error {
	var version string
	if err := db.pool.QueryRow(ctx, `SELECT version()`).Scan(&version); err != nil {
		return db.translate(err)
	}
	// PostgreSQL and CockroachDB order a primary key by its bytes.
	// YugabyteDB hash-shards the first key column unless told ASC, which
	// would turn every key-range scan into a full scan; PostgreSQL
	// rejects ASC in a constraint.
	hk, pk := `h BYTEA PRIMARY KEY`, `p BYTEA PRIMARY KEY`
	hkey, pkey := ``, ``
	if strings.Contains(version, "-YB-") {
		hk, pk = `h BYTEA NOT NULL`, `p BYTEA NOT NULL`
		hkey, pkey = `, PRIMARY KEY (h ASC)`, `, PRIMARY KEY (p ASC)`
	}
	schema := pgx.Identifier{db.opts.Schema}.Sanitize()
	stmts := []string{
		`CREATE SCHEMA IF NOT EXISTS ` + schema,
		`CREATE TABLE IF NOT EXISTS ` + db.meta + ` (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + db.full + ` (
			` + hk + ` CHECK (length(h) = 32),
			text BYTEA,
			data BYTEA,
			first_seen BIGINT,
			last_seen BIGINT,
			expires_at BIGINT` + hkey + `)`,
		`CREATE TABLE IF NOT EXISTS ` + db.prefix + ` (
			` + pk + ` CHECK (length(p) BETWEEN 4 AND 31),
			text BYTEA,
			data BYTEA,
			first_seen BIGINT,
			last_seen BIGINT,
			expires_at BIGINT` + pkey + `)`,
	}
	// One transaction: a crash or a concurrent Open sees all the tables
	// or none (PostgreSQL's DDL is transactional).
	var err error
	for attempt := range 5 {
		err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			for _, s := range stmts {
				if _, err := tx.Exec(ctx, s); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil || !isCatalogRace(err) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
	}
	return db.translate(err)
}

// isCatalogRace reports whether err is a concurrent CREATE ... IF NOT
// EXISTS losing to another session.
func isCatalogRace(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "23505", "42P06", "42P07", "40001", "40P01":
		return true
	}
	return false
}

// Close closes the connection pool, after waiting for operations in
// flight. Closing a closed DB returns nil.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	db.pool.Close()
	return nil
}

// Sync returns nil: every write is a committed transaction when its method
// returns, durable as the server's settings make commits (fsync,
// synchronous_commit, replication).
func (db *DB) Sync(ctx context.Context) error {
	if db.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// Path returns the connection string with any password replaced by
// "xxxxx".
func (db *DB) Path() string { return db.path }

// Profile implements store.Backend: the profile recorded in the index
// ("" if none), read from memory; it never fails.
func (db *DB) Profile(context.Context) (string, error) { return db.profileName(), nil }

// profileName returns the profile recorded in the index ("" if none).
func (db *DB) profileName() string {
	db.profileMu.Lock()
	defer db.profileMu.Unlock()
	return db.profile
}

// SetProfile records name as the index's profile when it records none (an
// empty name records nothing). It
// returns an error wrapping store.ErrProfileMismatch when the index records
// another (also one that another client recorded first), and
// store.ErrReadOnly on a read-only index that records none.
func (db *DB) SetProfile(ctx context.Context, name string) error {
	if err := db.begin(); err != nil {
		return err
	}
	if name == "" {
		return nil
	}
	db.profileMu.Lock()
	defer db.profileMu.Unlock()
	if db.profile == "" {
		if db.opts.ReadOnly {
			return store.ErrReadOnly
		}
		// Only one insert wins; every client then reads the winner.
		if _, err := db.pool.Exec(ctx, `INSERT INTO `+db.meta+` (name, value) VALUES ('profile', $1) ON CONFLICT DO NOTHING`, name); err != nil {
			return db.translate(err)
		}
		if err := db.pool.QueryRow(ctx, `SELECT value FROM `+db.meta+` WHERE name = 'profile'`).Scan(&db.profile); err != nil {
			return db.translate(err)
		}
	}
	if db.profile != name {
		return fmt.Errorf("%w: %s records %q, not %q", store.ErrProfileMismatch, db.path, db.profile, name)
	}
	return nil
}

// Identity returns the index's identity: 128 random bits as 32 hex
// digits, recorded in the meta table by the first writable Open (as
// index.DB.Identity). It is "" only for an index made before identities
// and opened read-only since.
func (db *DB) Identity() string { return db.identity }

// Schema returns the PostgreSQL schema that holds the index.
func (db *DB) Schema() string { return db.opts.Schema }

// begin returns ErrClosed after Close.
func (db *DB) begin() error {
	if db.closed.Load() {
		return store.ErrClosed
	}
	return nil
}

// beginWrite is begin for writes.
func (db *DB) beginWrite() error {
	if err := db.begin(); err != nil {
		return err
	}
	if db.opts.ReadOnly {
		return store.ErrReadOnly
	}
	return nil
}

// translate maps driver errors to the index's errors. Other errors are
// reported by text (with the SQLSTATE), except context errors, which stay
// wrapped.
func (db *DB) translate(err error) error {
	switch {
	case err == nil:
		return nil
	case db.closed.Load():
		return store.ErrClosed
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("pgindex: %w", err)
	}
	for _, e := range []error{store.ErrNotFound, store.ErrClosed, store.ErrCorrupt, store.ErrFormat,
		store.ErrReadOnly, store.ErrPrefixLength, store.ErrBadValue, store.ErrNoIndex, store.ErrProfileMismatch, store.ErrInvalidOptions} {
		if errors.Is(err, e) {
			return err
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("pgindex: %s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	return fmt.Errorf("pgindex: %v", err)
}

// retryable reports whether a statement failed only because of a
// conflict with another transaction and can run again unchanged.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// retry runs fn again (a few times, with a short backoff) while it fails
// with a serialization failure or a deadlock; every statement fn runs is
// atomic, so a failed attempt left nothing behind. When ctx ends between
// attempts the error is ctx's (errors.Is finds context.Canceled or
// DeadlineExceeded), naming the last attempt's failure.
func (db *DB) retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := range 8 {
		if err = fn(); err == nil || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgindex: %w while retrying (last attempt: %v)", context.Cause(ctx), err)
		case <-time.After(time.Duration(1<<attempt) * time.Millisecond):
		}
	}
	return err
}

var passwordKV = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redact returns connString with any password replaced by "xxxxx": the
// user-info password of a URL, a password query parameter, and a
// password=... keyword/value pair.
func Redact(connString string) string {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err == nil {
			q := u.Query()
			if q.Has("password") {
				q.Set("password", "xxxxx")
				u.RawQuery = q.Encode()
			}
			return u.Redacted()
		}
		// Unparseable: fall through to the keyword rule, and hide the
		// user info wholesale.
		if at := strings.LastIndex(connString, "@"); at >= 0 {
			scheme := connString[:strings.Index(connString, "://")+3]
			connString = scheme + "xxxxx" + connString[at:]
		}
	}
	return passwordKV.ReplaceAllString(connString, "${1}xxxxx")
}

// redactErr returns err's text with the password of connString hidden
// (pgx's parse errors may quote the connection string).
func redactErr(err error, connString string) string {
	msg := err.Error()
	if r := Redact(connString); r != connString {
		msg = strings.ReplaceAll(msg, connString, r)
	}
	return msg
}
