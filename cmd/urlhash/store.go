package main

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
)

// storeBatch is how many inputs a store command hands the index at once.
const storeBatch = 4096

// lookupBatch is storeBatch for has: the index answers a sorted batch in
// key order (the key table coalesces its reads, Badger steps from key to
// key), which pays once the batch is dense among the stored keys; but
// every batch in flight holds its texts, records and keys, and memory
// the process touches first costs page faults. has --hashes of 1M
// hashes against 1M stored, on the final code (median of 7 and 5 runs):
// absent 0.19 s and 91 MiB with 32,768, 0.22 s with 65,536, 0.23 s and
// 161 MiB with 131,072; present 0.35, 0.35 and 0.41 s.
const lookupBatch = 1 << 15

// dbFlags are the flags of every command that opens an index, and the
// one place an index is opened.
type dbFlags struct {
	dir    string
	schema string
	wait   time.Duration
	// id is the identity flags of a command that computes identities
	// (see addIdentity); a command without them opens with the profile
	// the index records.
	id identityFlags
	// mustExist makes a writing command refuse a location with no index
	// rather than create one.
	mustExist bool
	// profile, when set and no identity flag was given, is the identity
	// to open with (import of an export uses the export's).
	profile hashkey.Profile
	// compression is the codec of the tables a writing command writes
	// (index.Options.Compression); "" keeps the index's.
	compression string
	// loadMemory is index.Options.LoadMemory (import --memory).
	loadMemory int64
	// keyTable is --key-table: "on" upgrades an index directory to a key
	// table (index.Options.KeyTable), "off" creates a new one without
	// (index.Options.NoKeyTable), "" is the index's default.
	keyTable string
	// caFile is --ca-file: the CA certificates an https:// server's
	// certificate must chain to.
	caFile string
}

// addFlags declares --db, --wait, --schema and --ca-file.
func (o *dbFlags) addFlags(fs *flagSet) {
	fs.StringVar(&o.dir, "db", "", "the index `DIR`: a directory, a postgres:// connection string (with --schema) or http(s)://HOST:PORT, a urlhash serve, whose bearer token (serve --token-file) is read from the URLHASH_TOKEN environment variable (required)")
	fs.DurationVar(&o.wait, "wait", 0, "queue behind another urlhash using the index for up to `DURATION` (default 0: fail at once)")
	fs.StringVar(&o.schema, "schema", "", "the PostgreSQL `SCHEMA` of the index, with --db postgres://... (default urlhash)")
	addCAFile(fs, &o.caFile)
}

// addCAFile declares --ca-file into caFile.
func addCAFile(fs *flagSet, caFile *string) {
	fs.StringVar(caFile, "ca-file", "", "trust the CA certificates in `FILE` (PEM) for an https:// server's certificate, in place of the system's (default: the system's, which the SSL_CERT_FILE and SSL_CERT_DIR environment variables replace on Linux and the BSDs)")
}

// readCAFile returns the certificates of a --ca-file.
func readCAFile(name string) (*x509.CertPool, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", name)
	}
	return pool, nil
}

// addIdentity declares the identity flags, --profile naming one of the
// identities an index keys by.
func (o *dbFlags) addIdentity(fs *flagSet) {
	o.id.addFlags(fs, indexProfiles)
}

// addCompression declares --compression, of the commands that write
// tables.
func (o *dbFlags) addCompression(fs *flagSet) {
	fs.StringVar(&o.compression, "compression", "", "`CODEC` of the tables written: none (fast lookups, about 53 bytes an entry on disk), snappy (42) or zstd (about 40) (default: the index's, none for a new index)")
	fs.enum("compression", "none", "snappy", "zstd")
}

// addKeyTable declares --key-table, of the commands that write an index
// directory.
func (o *dbFlags) addKeyTable(fs *flagSet) {
	fs.StringVar(&o.keyTable, "key-table", "", "`MODE` of the key table that holds entries without a value (about 33 bytes an entry on disk): on upgrades an index without one (format 2, which older urlhash refuse), off creates a new index without one (format 1) (default: a new index has one, an existing index keeps what it has)")
	fs.enum("key-table", "on", "off")
}

// access is how a command opens an index.
type access struct {
	write    bool // read-write, creating the index unless mustExist
	storeURL bool // keep each URL's text in its entry (query.Options.StoreURL)
}

// open opens the index through package query. Unless an identity flag was
// given, the profile recorded in the index is used (the default profile
// for a new index). A command that only reads refuses a location that
// holds no index.
func (o *dbFlags) open(e *env, a access) (*query.Index, error) {
	// A command that only reads opens read-only: it changes no byte of the
	// index (no compaction, no filter snapshot), runs beside other readers
	// and works on read-only media.
	bo := &backend.Options{ReadOnly: !a.write, MustExist: o.mustExist, Wait: o.wait}
	bo.Postgres.Schema = o.schema
	qo := &query.Options{StoreURL: a.storeURL, Profile: o.profile}
	if o.id.changed() {
		var err error
		if qo.Profile, err = o.id.profile(); err != nil {
			return nil, err
		}
	}
	b, err := o.openStore(e, bo)
	if err != nil {
		return nil, err
	}
	return query.New(e.ctx, b, qo)
}

// openReader opens the store for a command that reads hashes and entries
// and computes no identity (export, stats, verify, scan): it opens an
// index of any profile or tables.
func (o *dbFlags) openReader(e *env) (store.Backend, error) {
	bo := &backend.Options{ReadOnly: true, Wait: o.wait}
	bo.Postgres.Schema = o.schema
	return o.openStore(e, bo)
}

// serveFile is the file in an index directory where "urlhash serve"
// records the address it serves the index on, while it does: another
// command that finds the index locked names it.
const serveFile = "urlhash.serve"

// openStore opens the backend itself, for the commands that work below
// the URL profiles (backup, restore, recover). Every command opens its
// index here.
func (o *dbFlags) openStore(e *env, bo *backend.Options) (store.Backend, error) {
	if o.dir == "" {
		return nil, usagef("--db DIR is required")
	}
	if o.schema != "" && !backend.IsPostgres(o.dir) {
		return nil, usagef("--schema %s applies to a postgres:// index only", o.schema)
	}
	writesDir := !bo.ReadOnly && !backend.IsPostgres(o.dir) && !remote.IsLocation(o.dir)
	if o.compression != "" && !writesDir {
		return nil, usagef("--compression applies to a command that writes an index directory")
	}
	if o.keyTable != "" && !writesDir {
		return nil, usagef("--key-table applies to a command that writes an index directory")
	}
	if o.caFile != "" {
		if !strings.HasPrefix(o.dir, "https://") {
			return nil, usagef("--ca-file applies to an https:// server")
		}
		pool, err := readCAFile(o.caFile)
		if err != nil {
			return nil, err
		}
		bo.Remote.RootCAs = pool
	}
	if err := backend.CheckLocation(o.dir); err != nil {
		return nil, err
	}
	if err := checkNewDir(o.dir, bo); err != nil {
		return nil, err
	}
	bo.Index.Compression = o.compression
	bo.Index.LoadMemory = o.loadMemory
	bo.Remote.Token = os.Getenv("URLHASH_TOKEN") // a server's bearer token
	bo.Index.KeyTable = o.keyTable == "on"
	bo.Index.NoKeyTable = o.keyTable == "off"
	b, err := backend.Open(e.ctx, o.dir, bo)
	switch {
	case errors.Is(err, store.ErrLocked):
		if addr, ok := servedAt(o.dir); ok {
			return nil, fmt.Errorf("%w\nurlhash: hint: urlhash serve is serving it: use --db %s", err, addr)
		}
		return nil, fmt.Errorf("%w\nurlhash: hint: another urlhash holds it; --wait DURATION queues behind it", err)
	case errors.Is(err, store.ErrNoIndex) && backend.IsPostgres(o.dir):
		return nil, fmt.Errorf("%s holds no index in schema %s (commands that write, such as import or add, create one; --schema names another)", backend.Display(o.dir), o.schemaName())
	case errors.Is(err, store.ErrNoIndex):
		return nil, fmt.Errorf("%s holds no index (commands that write, such as import or add, create one)", backend.Display(o.dir))
	case errors.Is(err, store.ErrNeedsRecovery):
		return nil, fmt.Errorf("%w\nurlhash: hint: the last writer did not close it (a crash); the next command that writes recovers it (urlhash verify does not), or copy it with urlhash recover", err)
	}
	return b, err
}

// remoteHint adds to a command's error from a server what to do about it:
// a token to send, a CA to trust.
func remoteHint(err error) error {
	var unknownCA x509.UnknownAuthorityError
	switch {
	case errors.Is(err, remote.ErrUnauthorized) && os.Getenv("URLHASH_TOKEN") == "":
		return fmt.Errorf("%w\nurlhash: hint: set URLHASH_TOKEN to the token in the server's --token-file", err)
	case errors.Is(err, remote.ErrUnauthorized):
		return fmt.Errorf("%w\nurlhash: hint: URLHASH_TOKEN is not the token in the server's --token-file", err)
	case errors.As(err, &unknownCA):
		return fmt.Errorf("%w\nurlhash: hint: --ca-file FILE trusts the CA that signed the server's certificate", err)
	}
	return err
}

// checkNewDir refuses to create an index directory whose parent does not
// exist: a misspelt path must not grow a tree of directories.
func checkNewDir(dir string, bo *backend.Options) error {
	if bo.ReadOnly || bo.MustExist || backend.IsPostgres(dir) || remote.IsLocation(dir) {
		return nil
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return fmt.Errorf("--db %s: the parent directory %s does not exist (a new index's directory is created, its parents are not)", dir, parent)
	}
	return nil
}

// servedAt returns the address a "urlhash serve" serving the index in dir
// recorded, as a --db location.
func servedAt(dir string) (string, bool) {
	if backend.IsPostgres(dir) || remote.IsLocation(dir) {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(dir, serveFile))
	addr := strings.TrimSpace(string(b))
	if err != nil || !remote.IsLocation(addr) {
		return "", false
	}
	return addr, true
}

// resolved is one input with its key, or the reason it has none.
type resolved struct {
	r     input
	entry store.Entry
	err   error
}

// resolve turns a batch of inputs into keys, read as in says: URLs
// through the index's profile (on every core), hashes or keys (full hashes
// and hex prefixes) by parsing them.
func resolve(ix *query.Index, batch []input, in query.Input) []resolved {
	out := make([]resolved, len(batch))
	for i, res := range ix.Resolve(texts(batch), in) {
		out[i] = resolved{r: batch[i], entry: res.Entry, err: res.Err}
		if batch[i].err != nil {
			out[i] = resolved{r: batch[i], err: batch[i].err} // refused as read
		}
	}
	return out
}

// texts returns the records' texts.
func texts(batch []input) []string {
	out := make([]string, len(batch))
	for i, r := range batch {
		out[i] = r.text
	}
	return out
}

// inputFailed reports a failed input at once.
func (e *env) inputFailed(r input, err error) {
	io.WriteString(e.stderr, r.diagnostic(err))
}

// hexKey is the hex of the bytes an entry keys.
func hexKey(en *store.Entry) string { return hex.EncodeToString(en.Key()) }

// syncWrites makes the writes made so far durable: Sync, except on a
// server, whose writes are durable when they are answered (a /v1/sync
// after them would only cost a round trip, and an fsync). An interrupt
// does not cancel it: what was answered must become durable.
func syncWrites(ctx context.Context, st store.Backend) error {
	if _, ok := st.(*remote.DB); ok {
		return nil
	}
	return st.Sync(context.WithoutCancel(ctx))
}

// journalID names the index for dedupe's journals: the location, and the
// schema of a PostgreSQL index (one database holds many), after a NUL.
func (o *dbFlags) journalID() string {
	if !backend.IsPostgres(o.dir) {
		return strings.TrimSuffix(o.dir, "/") // as remote.Open reads it
	}
	return o.dir + "\x00" + o.schemaName()
}

// schemaName is the PostgreSQL schema of the index: --schema, or
// pgindex's default.
func (o *dbFlags) schemaName() string {
	if o.schema == "" {
		return "urlhash"
	}
	return o.schema
}

// newDir is the index directory of a command that may create it, and
// whether this run is the one that does: a run that fails removes what it
// made, and nothing else.
type newDir struct {
	path    string
	created bool // it did not exist when the run began
}

// noteNewDir notes, before the index at location is opened, whether it
// is a directory this run is about to create.
func noteNewDir(location string) newDir {
	return newDir{path: location, created: isNewDir(location)}
}

// abandon ends a run that failed with the index st it opened (nil when
// the open failed): it closes st and, when this run created the
// directory, removes it while the index holds no entry. A directory that
// existed before, or that holds an entry, is never removed; after a failed
// open only an empty directory is (os.Remove). Another process that
// opened the index between the close and the removal would lose it: it
// holds nothing, and the window is a few system calls.
func (d newDir) abandon(e *env, st store.Backend) {
	if st != nil {
		var full, prefixes int64 = -1, -1
		if d.created {
			var err error
			if full, prefixes, err = st.Count(context.WithoutCancel(e.ctx), nil, 0); err != nil {
				full = -1
			}
		}
		st.Close()
		if full != 0 || prefixes != 0 {
			return
		}
		if err := os.RemoveAll(d.path); err != nil {
			e.warnf("removing the empty index %s this run created: %v", d.path, err)
		}
		return
	}
	if d.created {
		os.Remove(d.path) // only when empty: whatever the open left
	}
}
