package query

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/pgindex"
)

// Options configures Open. A nil *Options means the defaults.
type Options struct {
	// Profile computes URL identities. Its Name is recorded in (and
	// checked against) the index. Default: the profile recorded in an
	// existing index, else hashkey.URLHash (URL Standard serialisation,
	// SHA-256, fragment kept).
	Profile *hashkey.Profile

	// SafeBrowsing, when set, makes this a Safe Browsing list index: the
	// recorded profile is its name, and a URL's identity (for Has, Add and
	// the rest) is the hash of its exact expression, host and path with
	// query, as a list entry for that URL would be. Profile is then
	// ignored. Lookup works with either kind of index.
	SafeBrowsing *safebrowsing.Profile

	// StoreURL keeps each added URL's text in its entry (index.Value.Text),
	// so that Get, Scan and export can show it. Default false: hashes only.
	StoreURL bool

	// Index is passed to index.Open; its Profile field is overwritten with
	// Profile.Name(). Default: index defaults.
	Index index.Options

	// Postgres is passed to pgindex.Open when the location given to Open is
	// a postgres:// or postgresql:// connection string; its Profile is
	// overwritten and Index.ReadOnly and Index.MustExist carry over.
	// Default: pgindex defaults (schema "urlhash").
	Postgres pgindex.Options

	// Workers is the number of goroutines that hash a batch. Default
	// runtime.GOMAXPROCS(0).
	Workers int
}

// Index is an index of URL identities. It is safe for concurrent use.
type Index struct {
	db       store
	identity identity
	storeURL bool
	workers  int
}

// Open opens (or, unless opts.Index.ReadOnly or MustExist, creates) the
// index at location: a directory for the embedded Badger index, or a
// postgres:// connection string for an index in PostgreSQL (see pgindex).
func Open(location string, opts *Options) (*Index, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Profile == nil && o.SafeBrowsing == nil {
		return openRecorded(location, o)
	}
	var id identity = o.Profile
	if o.SafeBrowsing != nil {
		id = listIdentity{o.SafeBrowsing}
	}
	return open(location, o, id)
}

func open(dir string, o Options, id identity) (*Index, error) {
	db, err := openStore(dir, o, id.Name())
	if err != nil {
		return nil, err
	}
	return &Index{db: db, identity: id, storeURL: o.StoreURL, workers: o.Workers}, nil
}

// IsPostgres reports whether location names a PostgreSQL index (a
// postgres:// or postgresql:// connection string) rather than a directory.
func IsPostgres(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// openStore opens the backend that location names, recording or checking
// profile ("" means any).
func openStore(location string, o Options, profile string) (store, error) {
	if IsPostgres(location) {
		po := o.Postgres
		po.Profile = profile
		po.ReadOnly = po.ReadOnly || o.Index.ReadOnly
		po.MustExist = po.MustExist || o.Index.MustExist
		return pgindex.Open(context.Background(), location, &po)
	}
	io := o.Index
	io.Profile = profile
	return index.Open(location, &io)
}

// openRecorded opens an index with the profile recorded in it, or creates
// one with the default profile.
func openRecorded(dir string, o Options) (*Index, error) {
	db, err := openStore(dir, o, "")
	if err != nil {
		return nil, err
	}
	name := db.Profile()
	if name == "" {
		if err := db.Close(); err != nil {
			return nil, err
		}
		return open(dir, o, hashkey.URLHash)
	}
	id, err := parseIdentity(name)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Index{db: db, identity: id, storeURL: o.StoreURL, workers: o.Workers}, nil
}

// parseIdentity returns the identity named by an index's recorded profile:
// a hashkey profile name ("urlhash+sha256", ...) or a Safe Browsing
// profile name ("webrisk", "safebrowsing-v5").
func parseIdentity(name string) (identity, error) {
	if p, err := safebrowsing.ParseProfile(name); err == nil {
		return listIdentity{p}, nil
	}
	return hashkey.ParseProfile(name)
}

// identity turns a URL into the hash an index keys it by.
type identity interface {
	Name() string
	Hash(rawURL string) (hashkey.Hash, error)
}

// listIdentity keys a URL by its exact Safe Browsing expression.
type listIdentity struct{ p *safebrowsing.Profile }

func (l listIdentity) Name() string { return l.p.Name() }

func (l listIdentity) Hash(rawURL string) (hashkey.Hash, error) {
	es, err := l.p.Hashes(rawURL)
	if err != nil {
		return hashkey.Hash{}, err
	}
	return es[0].Hash, nil
}

// store is what an Index needs of its backend: *index.DB (Badger, the
// embedded default) and *pgindex.DB (PostgreSQL and compatible engines).
type store interface {
	Put(h hashkey.Hash, v index.Value) error
	PutPrefix(p []byte, v index.Value) error
	PutBatch(entries []index.Entry) error
	Get(h hashkey.Hash) (index.Value, error)
	Has(h hashkey.Hash) (bool, error)
	HasBatch(hs []hashkey.Hash) ([]bool, error)
	Delete(h hashkey.Hash) error
	DeletePrefix(p []byte) error
	AddIfAbsent(h hashkey.Hash, v index.Value) (bool, error)
	AddIfAbsentBatch(entries []index.Entry) ([]bool, error)
	Match(h hashkey.Hash) (index.Match, bool, error)
	Scan(prefix []byte, bits, limit int, fn func(index.Entry) error) error
	ForEach(fn func(index.Entry) error) error
	Count(prefix []byte, bits int) (full, prefixes int64, err error)
	Load(seq iter.Seq[index.Entry]) (index.LoadResult, error)
	Stats() (index.Stats, error)
	Verify() error
	Sync() error
	Close() error
	Profile() string
}

var (
	_ store = (*index.DB)(nil)
	_ store = (*pgindex.DB)(nil)
)

// ProfileName returns the name of the profile recorded in the index.
func (ix *Index) ProfileName() string { return ix.identity.Name() }

// Close syncs and closes the index.
func (ix *Index) Close() error { return ix.db.Close() }

// Sync makes every write so far durable.
func (ix *Index) Sync() error { return ix.db.Sync() }

// Hash returns the identity of rawURL under the index's profile.
func (ix *Index) Hash(rawURL string) (hashkey.Hash, error) { return ix.identity.Hash(rawURL) }

func (ix *Index) value(rawURL string) index.Value {
	if !ix.storeURL {
		return index.Value{}
	}
	return index.Value{Text: []byte(rawURL)}
}

// Has reports whether rawURL's identity is stored.
func (ix *Index) Has(rawURL string) (bool, error) {
	h, err := ix.identity.Hash(rawURL)
	if err != nil {
		return false, err
	}
	return ix.db.Has(h)
}

// Get returns the value stored for rawURL, or an error wrapping
// index.ErrNotFound.
func (ix *Index) Get(rawURL string) (index.Value, error) {
	h, err := ix.identity.Hash(rawURL)
	if err != nil {
		return index.Value{}, err
	}
	return ix.db.Get(h)
}

// Add stores rawURL's identity (and its text when Options.StoreURL).
func (ix *Index) Add(rawURL string) error {
	h, err := ix.identity.Hash(rawURL)
	if err != nil {
		return err
	}
	return ix.db.Put(h, ix.value(rawURL))
}

// AddIfAbsent stores rawURL's identity unless it is stored already, and
// reports whether it was new. Among concurrent callers adding the same
// identity exactly one sees true.
func (ix *Index) AddIfAbsent(rawURL string) (bool, error) {
	h, err := ix.identity.Hash(rawURL)
	if err != nil {
		return false, err
	}
	return ix.db.AddIfAbsent(h, ix.value(rawURL))
}

// Delete removes rawURL's identity; an absent one gives an error wrapping
// index.ErrNotFound.
func (ix *Index) Delete(rawURL string) error {
	h, err := ix.identity.Hash(rawURL)
	if err != nil {
		return err
	}
	return ix.db.Delete(h)
}

// Result is the answer for one URL of a batch.
type Result struct {
	Hash hashkey.Hash
	// OK is the answer: present (HasBatch) or newly added
	// (AddIfAbsentBatch). AddBatch leaves it false.
	OK bool
	// Err is the URL's canonicalisation error, if any; such a URL is
	// neither looked up nor stored.
	Err error
}

// HashBatch hashes urls on Options.Workers goroutines; out[i] belongs to
// urls[i].
func (ix *Index) HashBatch(urls []string) []Result {
	out := make([]Result, len(urls))
	work := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i].Hash, out[i].Err = ix.identity.Hash(urls[i])
		}
	}
	const minPerWorker = 256
	workers := min(ix.workers, (len(urls)+minPerWorker-1)/minPerWorker)
	if workers <= 1 {
		work(0, len(urls))
		return out
	}
	var wg sync.WaitGroup
	per := (len(urls) + workers - 1) / workers
	for lo := 0; lo < len(urls); lo += per {
		wg.Go(func() { work(lo, min(lo+per, len(urls))) })
	}
	wg.Wait()
	return out
}

// HasBatch answers Has for every URL in one ordered pass over the index.
func (ix *Index) HasBatch(urls []string) ([]Result, error) {
	rs := ix.HashBatch(urls)
	hs, pos := valid(rs)
	found, err := ix.db.HasBatch(hs)
	if err != nil {
		return nil, err
	}
	for i, p := range pos {
		rs[p].OK = found[i]
	}
	return rs, nil
}

// AddBatch stores every valid URL of urls.
func (ix *Index) AddBatch(urls []string) ([]Result, error) {
	rs := ix.HashBatch(urls)
	entries, _ := ix.entries(urls, rs)
	return rs, ix.db.PutBatch(entries)
}

// AddIfAbsentBatch is AddIfAbsent for every URL of urls, atomically per
// URL. A URL repeated within the batch is new at most once.
func (ix *Index) AddIfAbsentBatch(urls []string) ([]Result, error) {
	rs := ix.HashBatch(urls)
	entries, pos := ix.entries(urls, rs)
	added, err := ix.db.AddIfAbsentBatch(entries)
	if err != nil {
		return nil, err
	}
	for i, p := range pos {
		rs[p].OK = added[i]
	}
	return rs, nil
}

func (ix *Index) entries(urls []string, rs []Result) ([]index.Entry, []int) {
	entries := make([]index.Entry, 0, len(rs))
	pos := make([]int, 0, len(rs))
	for i := range rs {
		if rs[i].Err == nil {
			entries = append(entries, index.Entry{Hash: rs[i].Hash, Len: hashkey.Size, Value: ix.value(urls[i])})
			pos = append(pos, i)
		}
	}
	return entries, pos
}

func valid(rs []Result) ([]hashkey.Hash, []int) {
	hs := make([]hashkey.Hash, 0, len(rs))
	pos := make([]int, 0, len(rs))
	for i := range rs {
		if rs[i].Err == nil {
			hs = append(hs, rs[i].Hash)
			pos = append(pos, i)
		}
	}
	return hs, pos
}

// ParseHexPrefix reads a hash prefix written as 1..64 hex digits, either
// case; an odd number of digits is a half-byte prefix. It returns the prefix
// bytes (the last half byte's low bits zero) and its length in bits.
// Short and very-short hashes in the url-hash decimal form are read with
// hashkey.ParseShort and hashkey.ParseVeryShort.
func ParseHexPrefix(s string) ([]byte, int, error) {
	if s == "" || len(s) > 2*hashkey.Size {
		return nil, 0, fmt.Errorf("%w %q: want 1..64 hex digits", ErrBadPrefix, s)
	}
	b := make([]byte, (len(s)+1)/2)
	for i := 0; i < len(s); i++ {
		v, ok := unhex(s[i])
		if !ok {
			return nil, 0, fmt.Errorf("%w %q: %q is not a hex digit", ErrBadPrefix, s, s[i])
		}
		if i%2 == 0 {
			b[i/2] = v << 4
		} else {
			b[i/2] |= v
		}
	}
	return b, 4 * len(s), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Scan calls fn for the stored entries whose key starts with the first
// bits of prefix, in key order, at most limit of them (limit <= 0: all).
func (ix *Index) Scan(prefix []byte, bits, limit int, fn func(index.Entry) error) error {
	return ix.db.Scan(prefix, bits, limit, fn)
}
