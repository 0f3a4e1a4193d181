package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
)

// storeBatch is how many inputs a store command hands the index at once.
const storeBatch = 4096

// dedupeBatch is storeBatch for dedupe: each batch costs a few fsyncs
// (journal, index), so a batch filled from a file is larger. Interactive
// input is answered as it arrives whatever the size (see streamBatches).
const dedupeBatch = 1 << 15

// lookupBatch is storeBatch for has: the index answers a large sorted
// batch by stepping from key to key rather than seeking each one, which
// pays once the batch is dense among the stored keys. Two batches are in
// flight at a time, each holding its texts, records and keys.
const lookupBatch = 1 << 17

// dbFlags are the flags of every command that opens an index.
type dbFlags struct {
	dir    string
	schema string
	wait   time.Duration
	id     identityFlags
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
}

func (o *dbFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.dir, "db", "", "index directory (required)")
	fs.DurationVar(&o.wait, "wait", 0, "wait this long for another process to release the index")
	fs.StringVar(&o.schema, "schema", "", "PostgreSQL schema of the index (with --db postgres://...)")
	fs.StringVar(&o.compression, "compression", "", "codec of the tables written: none, snappy or zstd (default: the index's, none for a new one)")
	o.id.addFlags(fs, "urlhash, webrisk, safebrowsing-v5 or iri")
}

// open opens the index. Unless an identity flag was given (and
// useIdentity), the profile recorded in the index is used (the default
// profile for a new index). A command that only reads refuses a location
// that holds no index.
func (o *dbFlags) open(e *env, write, storeURL, useIdentity bool) (*query.Index, error) {
	// A command that only reads opens read-only: it changes no byte of the
	// index (no compaction, no filter snapshot), runs beside other readers
	// and works on read-only media.
	bo := &backend.Options{ReadOnly: !write, MustExist: o.mustExist, Wait: o.wait}
	bo.Postgres.Schema = o.schema
	qo := &query.Options{StoreURL: storeURL, Profile: o.profile}
	if useIdentity && o.id.changed() {
		var err error
		if qo.Profile, err = o.id.profile(); err != nil {
			return nil, err
		}
	}
	b, err := o.openStore(e, bo)
	if err != nil {
		return nil, err
	}
	return query.New(b, qo)
}

// openReader opens the store for a command that reads hashes and entries
// and computes no identity (export, stats, verify, scan): it opens an
// index of any profile or tables, and refuses identity flags, which would
// have no effect.
func (o *dbFlags) openReader(e *env) (store.Backend, error) {
	if o.id.changed() {
		return nil, usagef("--profile, --digest and --drop-fragment do not apply: this command computes no identity")
	}
	bo := &backend.Options{ReadOnly: true, Wait: o.wait}
	bo.Postgres.Schema = o.schema
	return o.openStore(e, bo)
}

// openStore opens the backend itself, for the commands that work below
// the URL profiles (backup, restore, recover).
func (o *dbFlags) openStore(e *env, bo *backend.Options) (store.Backend, error) {
	if o.dir == "" {
		return nil, usagef("--db DIR is required")
	}
	if o.schema != "" && !backend.IsPostgres(o.dir) {
		return nil, usagef("--schema applies to a postgres:// index only")
	}
	if o.compression != "" && (bo.ReadOnly || backend.IsPostgres(o.dir) || remote.IsLocation(o.dir)) {
		return nil, usagef("--compression applies to a command that writes an index directory")
	}
	bo.Index.Compression = o.compression
	bo.Index.LoadMemory = o.loadMemory
	b, err := backend.Open(e.ctx, o.dir, bo)
	switch {
	case errors.Is(err, store.ErrLocked):
		return nil, fmt.Errorf("%w\nurlhash: hint: another urlhash holds it; --wait DURATION queues behind it", err)
	case errors.Is(err, store.ErrNoIndex):
		return nil, fmt.Errorf("%s holds no index (commands that write, such as import or add, create one)", backend.Display(o.dir))
	case errors.Is(err, store.ErrNeedsRecovery):
		return nil, fmt.Errorf("%w\nurlhash: hint: the last writer did not close it (a crash); the next command that writes recovers it (urlhash verify does not), or copy it with urlhash recover", err)
	}
	return b, err
}

// resolved is one input with its key, or the reason it has none.
type resolved struct {
	r     record
	entry store.Entry
	err   error
}

// resolve turns a batch of inputs into keys: URLs through the index's
// profile (on every core), hashes (and, when prefixOK, hex prefixes) by
// parsing them.
func resolve(ix *query.Index, batch []record, hashes, prefixOK bool) []resolved {
	in := inputKind(hashes)
	if hashes && prefixOK {
		in = query.Keys
	}
	out := make([]resolved, len(batch))
	for i, res := range ix.Resolve(texts(batch), in) {
		out[i] = resolved{r: batch[i], entry: res.Entry, err: res.Err}
	}
	return out
}

// inputKind is how the index reads a command's inputs: URLs, or full
// hashes with --hashes.
func inputKind(hashes bool) query.Input {
	if hashes {
		return query.Hashes
	}
	return query.URLs
}

// texts returns the records' texts.
func texts(batch []record) []string {
	out := make([]string, len(batch))
	for i, r := range batch {
		out[i] = r.text
	}
	return out
}

// inputFailed reports a failed input at once.
func (e *env) inputFailed(r record, err error) {
	io.WriteString(e.stderr, r.diagnostic(err))
}

// hexKey is the hex of the bytes an entry keys.
func hexKey(en *store.Entry) string { return hex.EncodeToString(en.Key()) }

// syncWrites makes the writes made so far durable: Sync, except on a
// server, whose writes are durable when they are answered (a /v1/sync
// after them would only cost a round trip, and an fsync).
func syncWrites(st store.Backend) error {
	if _, ok := st.(*remote.DB); ok {
		return nil
	}
	return st.Sync()
}

// journalID names the index for dedupe's journals: the location, and the
// schema of a PostgreSQL index (one database holds many), after a NUL.
func (o *dbFlags) journalID() string {
	if !backend.IsPostgres(o.dir) {
		return strings.TrimSuffix(o.dir, "/") // as remote.Open reads it
	}
	schema := o.schema
	if schema == "" {
		schema = "urlhash"
	}
	return o.dir + "\x00" + schema
}
