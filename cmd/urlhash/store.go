package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/pgindex"
	"github.com/urlhash/urlhash/query"
)

// storeBatch is how many inputs a store command hands the index at once.
const storeBatch = 4096

// dbFlags are the flags of every command that opens an index.
type dbFlags struct {
	dir    string
	schema string
	wait   time.Duration
	id     identityFlags
}

func (o *dbFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.dir, "db", "", "index directory (required)")
	fs.DurationVar(&o.wait, "wait", 0, "wait this long for another process to release the index")
	fs.StringVar(&o.schema, "schema", "", "PostgreSQL schema of the index (with --db postgres://...)")
	o.id.addFlags(fs, "urlhash, webrisk or safebrowsing-v5")
}

// open opens the index. Unless an identity flag was given (and
// useIdentity), the profile recorded in the index is used (the default
// profile for a new index). A command that only reads refuses a directory
// that holds no index.
func (o *dbFlags) open(e *env, write, storeURL, useIdentity bool) (*query.Index, error) {
	if o.dir == "" {
		return nil, usagef("--db DIR is required")
	}
	opts := &query.Options{StoreURL: storeURL}
	opts.Index.MustExist = !write
	opts.Postgres.Schema = o.schema
	if useIdentity && o.id.changed() {
		var err error
		if opts.Profile, opts.SafeBrowsing, err = o.id.identity(); err != nil {
			return nil, err
		}
	}
	ix, err := query.Open(o.dir, opts)
	// One process at a time holds an index; --wait queues behind it, so
	// that concurrent dedupe runs take turns instead of failing.
	for deadline := time.Now().Add(o.wait); errors.Is(err, index.ErrLocked) && time.Now().Before(deadline); {
		select {
		case <-e.ctx.Done():
			return nil, e.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		ix, err = query.Open(o.dir, opts)
	}
	if errors.Is(err, index.ErrLocked) {
		return nil, fmt.Errorf("%w\nurlhash: hint: another urlhash holds it; --wait DURATION queues behind it", err)
	}
	if errors.Is(err, index.ErrNoIndex) {
		where := o.dir
		if query.IsPostgres(where) {
			where = pgindex.Redact(where)
		}
		return nil, fmt.Errorf("%s holds no index (commands that write, such as import or add, create one)", where)
	}
	return ix, err
}

// parseHashInput reads a --hashes input: a full hash in hex or decimal
// display form, or, when prefixes are allowed, 8..62 hex digits.
func parseHashInput(s string, prefixOK bool) (index.Entry, error) {
	if h, err := hashkey.ParseHash(s); err == nil {
		return index.Entry{Hash: h, Len: hashkey.Size}, nil
	}
	if prefixOK && len(s)%2 == 0 && len(s) >= 2*index.MinPrefixLen && len(s) <= 2*index.MaxPrefixLen {
		if b, err := hex.DecodeString(s); err == nil {
			return index.PrefixEntry(b, index.Value{})
		}
	}
	if prefixOK {
		return index.Entry{}, fmt.Errorf("invalid hash %q: want 64 hex digits, the decimal form w0-w1-w2-w3, or an even 8..62 hex digits for a prefix entry", s)
	}
	return index.Entry{}, fmt.Errorf("invalid hash %q: want 64 hex digits or the decimal form w0-w1-w2-w3", s)
}

// resolved is one input with its key, or the reason it has none.
type resolved struct {
	r     record
	entry index.Entry
	err   error
}

// resolve turns a batch of inputs into keys: URLs through the index's
// profile (on every core), hashes by parsing them.
func resolve(ix *query.Index, batch []record, hashes, prefixOK bool) []resolved {
	out := make([]resolved, len(batch))
	if hashes {
		for i, r := range batch {
			out[i] = resolved{r: r}
			out[i].entry, out[i].err = parseHashInput(r.text, prefixOK)
		}
		return out
	}
	urls := make([]string, len(batch))
	for i, r := range batch {
		urls[i] = r.text
	}
	for i, res := range ix.HashBatch(urls) {
		out[i] = resolved{r: batch[i], entry: index.Entry{Hash: res.Hash, Len: hashkey.Size}, err: res.Err}
	}
	return out
}

// inputFailed reports a failed input at once.
func (e *env) inputFailed(r record, err error) {
	io.WriteString(e.stderr, r.diagnostic(err))
}

// hexKey is the hex of the bytes an entry keys.
func hexKey(en *index.Entry) string { return hex.EncodeToString(en.Key()) }
