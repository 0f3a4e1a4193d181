package query

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/iri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/store"
)

// Options configures New. A nil *Options means the defaults.
type Options struct {
	// Profile computes URL identities. Its record (ProfileRecord: name and
	// Unicode version) must be the profile the backend records (else an
	// error wrapping store.ErrProfileMismatch),
	// and is recorded in a writable backend that records none. Default:
	// the recorded profile, or urlhash.Default when the backend records
	// none.
	Profile hashkey.Profile

	// StoreURL keeps each added URL's text in its entry (store.Value.Text),
	// so that Get, Scan and export can show it. Default false: hashes only.
	StoreURL bool

	// Workers is the number of goroutines that hash a batch. Default
	// runtime.GOMAXPROCS(0).
	Workers int
}

// Index is an index of URL identities: a store.Backend and the profile its
// identities are made with. It is safe for concurrent use.
type Index struct {
	st       store.Backend
	profile  hashkey.Profile
	storeURL bool
	workers  int
}

// New returns an Index over the open backend st, which it owns from then
// on: Close closes it, also when New fails. ctx bounds reading and
// recording the profile; a backend that cannot say which profile it
// records (a server that does not answer) fails New rather than getting
// the default one.
func New(ctx context.Context, st store.Backend, opts *Options) (*Index, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	recorded, err := st.Profile(ctx)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: profile: %w", st.Path(), err)
	}
	if o.Profile == nil {
		o.Profile = urlhash.Default
		if recorded != "" {
			p, err := ParseProfile(recorded)
			if err != nil {
				st.Close()
				return nil, fmt.Errorf("%s: %w", st.Path(), err)
			}
			o.Profile = p
		}
	}
	record := ProfileRecord(o.Profile)
	if recorded != "" && recorded != record {
		st.Close()
		return nil, mismatch(st.Path(), recorded, record)
	}
	// Record the profile in an index that records none, so that no index
	// holds identities of an unnamed profile; a read-only one stays as is.
	if err := st.SetProfile(ctx, record); err != nil && !(recorded == "" && errors.Is(err, store.ErrReadOnly)) {
		st.Close()
		return nil, err
	}
	return &Index{st: st, profile: o.Profile, storeURL: o.StoreURL, workers: o.Workers}, nil
}

// unicodeVersioned is a profile whose identities depend on Unicode tables
// (it maps hosts through UTS 46): its record names their version.
type unicodeVersioned interface{ UnicodeVersion() string }

// ProfileRecord returns what an index records of profile p: its name and,
// for a profile that maps hosts through UTS 46, the Unicode version of
// its tables, as "urlhash+sha256;unicode=17.0.0". An index refuses a
// profile whose record differs, so that identities made with other tables
// are never mixed with these.
func ProfileRecord(p hashkey.Profile) string {
	if v, ok := p.(unicodeVersioned); ok {
		return p.Name() + ";unicode=" + v.UnicodeVersion()
	}
	return p.Name()
}

// mismatch is the error for an index that records another profile, or the
// same one with other Unicode tables: it names both, and how to move on.
func mismatch(path, recorded, record string) error {
	rBase, rVer, _ := strings.Cut(recorded, ";unicode=")
	base, ver, _ := strings.Cut(record, ";unicode=")
	if rBase != base {
		return fmt.Errorf("%w: %s was built with %s, not %s", store.ErrProfileMismatch, path, recorded, record)
	}
	if rVer == "" {
		rVer = "unrecorded (built before urlhash pinned its tables: those of the Go toolchain's golang.org/x/net/idna)"
	}
	return fmt.Errorf("%w: %s was built with %s identities from IDNA tables of Unicode %s; this build's are Unicode %s, so some URLs' identities differ: rebuild the index from its URLs (README, \"Migrating an index\")",
		store.ErrProfileMismatch, path, base, rVer, ver)
}

// ParseProfile returns the profile a name recorded in an index stands for:
// a url-hash profile ("urlhash+sha256", "urlhash-nofragment+url-hash-0.1.0",
// see urlhash.ParseProfile) or a Safe Browsing one ("webrisk",
// "safebrowsing-v5"), whose identity of a URL is the hash of its exact
// expression, or "iri" (an RDF IRI exactly as written, see hashkey/iri).
// The name "urlhash" alone is the default profile.
func ParseProfile(name string) (hashkey.Profile, error) {
	name, _, _ = strings.Cut(name, ";unicode=") // New checks the version
	switch name {
	case "urlhash":
		return urlhash.Default, nil
	case iri.IRI.Name():
		return iri.IRI, nil
	}
	if p, err := safebrowsing.ParseProfile(name); err == nil {
		return p, nil
	}
	p, err := urlhash.ParseProfile(name)
	if err != nil {
		return nil, fmt.Errorf("query: unknown profile %q (want urlhash[-nofragment]+DIGEST, webrisk, safebrowsing-v5 or iri)", name)
	}
	return p, nil
}

// Store returns the backend, for callers that work on hashes and entries
// rather than URLs (hash lists, prefix entries, bulk loads, statistics).
func (ix *Index) Store() store.Backend { return ix.st }

// Profile returns the profile the index's identities are made with.
func (ix *Index) Profile() hashkey.Profile { return ix.profile }

// Close syncs and closes the index.
func (ix *Index) Close() error { return ix.st.Close() }

// Sync makes every write so far durable.
func (ix *Index) Sync(ctx context.Context) error { return ix.st.Sync(ctx) }

// Hash returns the identity of rawURL under the index's profile.
func (ix *Index) Hash(rawURL string) (hashkey.Hash, error) { return ix.profile.Hash(rawURL) }

// value is what rawURL's identity stores: its text when Options.StoreURL.
func (ix *Index) value(rawURL string) store.Value {
	if ix.storeURL {
		return store.Value{Text: []byte(rawURL)}
	}
	return store.Value{}
}

func (ix *Index) entry(h hashkey.Hash, rawURL string) store.Entry {
	return store.FullEntry(h, ix.value(rawURL))
}

// Has reports whether rawURL's identity is stored.
func (ix *Index) Has(ctx context.Context, rawURL string) (bool, error) {
	h, err := ix.profile.Hash(rawURL)
	if err != nil {
		return false, err
	}
	found, err := ix.st.HasBatch(ctx, []hashkey.Hash{h})
	if err != nil {
		return false, err
	}
	return found[0], nil
}

// Get returns the value stored for rawURL, or an error wrapping
// store.ErrNotFound.
func (ix *Index) Get(ctx context.Context, rawURL string) (store.Value, error) {
	h, err := ix.profile.Hash(rawURL)
	if err != nil {
		return store.Value{}, err
	}
	return ix.st.Get(ctx, h)
}

// Put stores rawURL's identity (and its text when Options.StoreURL),
// replacing the value of a stored one.
func (ix *Index) Put(ctx context.Context, rawURL string) error {
	h, err := ix.profile.Hash(rawURL)
	if err != nil {
		return err
	}
	return store.Put(ctx, ix.st, h, ix.value(rawURL))
}

// Add stores rawURL's identity unless it is stored already (a stored value
// is kept), and reports whether it was new. Among concurrent callers adding
// the same identity exactly one sees true.
func (ix *Index) Add(ctx context.Context, rawURL string) (bool, error) {
	h, err := ix.profile.Hash(rawURL)
	if err != nil {
		return false, err
	}
	return store.Add(ctx, ix.st, h, ix.value(rawURL))
}

// Delete removes rawURL's identity; an absent one gives an error wrapping
// store.ErrNotFound.
func (ix *Index) Delete(ctx context.Context, rawURL string) error {
	h, err := ix.profile.Hash(rawURL)
	if err != nil {
		return err
	}
	return ix.st.Delete(ctx, store.FullEntry(h, store.Value{}))
}

// Result is the answer for one URL of a batch.
type Result struct {
	Hash hashkey.Hash
	// OK is the answer: present (HasBatch) or newly added (AddBatch).
	// PutBatch leaves it false.
	OK bool
	// Err is the URL's canonicalisation error, if any; such a URL is
	// neither looked up nor stored.
	Err error
}

// HashBatch hashes urls on Options.Workers goroutines; out[i] belongs to
// urls[i].
func (ix *Index) HashBatch(urls []string) []Result {
	out := make([]Result, len(urls))
	ix.parallel(len(urls), func(i int) { out[i].Hash, out[i].Err = ix.profile.Hash(urls[i]) })
	return out
}

// parallel calls fn(i) for i in 0..n-1, split across the workers when n is
// large enough to pay for the goroutines.
func (ix *Index) parallel(n int, fn func(i int)) {
	const minPerWorker = 256
	workers := min(ix.workers, (n+minPerWorker-1)/minPerWorker)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		wg.Go(func() {
			for i := lo; i < min(lo+per, n); i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// HasBatch answers Has for every URL in one ordered pass over the index.
func (ix *Index) HasBatch(ctx context.Context, urls []string) ([]Result, error) {
	return ix.HasInputs(ctx, urls, URLs)
}

// HasInputs is HasBatch for inputs read as in says: URLs, hashed through
// the profile, or Hashes, parsed (full hashes; Keys is refused). Inputs
// are hashed or parsed on Options.Workers goroutines.
func (ix *Index) HasInputs(ctx context.Context, inputs []string, in Input) ([]Result, error) {
	var rs []Result
	switch in {
	case URLs:
		rs = ix.HashBatch(inputs)
	case Hashes:
		rs = make([]Result, len(inputs))
		ix.parallel(len(inputs), func(i int) { rs[i].Hash, rs[i].Err = hashkey.ParseHash(inputs[i]) })
	default:
		return nil, fmt.Errorf("query: HasInputs of input kind %d", in)
	}
	hs, pos := valid(rs)
	found, err := ix.st.HasBatch(ctx, hs)
	if err != nil {
		return nil, err
	}
	for i, p := range pos {
		rs[p].OK = found[i]
	}
	return rs, nil
}

// PutBatch is Put for every valid URL of urls.
func (ix *Index) PutBatch(ctx context.Context, urls []string) ([]Result, error) {
	rs := ix.HashBatch(urls)
	entries, _ := ix.entries(urls, rs)
	return rs, ix.st.PutBatch(ctx, entries)
}

// AddBatch is Add for every URL of urls, atomically per URL. A URL
// repeated within the batch is new at most once.
func (ix *Index) AddBatch(ctx context.Context, urls []string) ([]Result, error) {
	rs := ix.HashBatch(urls)
	entries, pos := ix.entries(urls, rs)
	added, err := ix.st.AddBatch(ctx, entries)
	if err != nil {
		return nil, err
	}
	for i, p := range pos {
		rs[p].OK = added[i]
	}
	return rs, nil
}

func (ix *Index) entries(urls []string, rs []Result) ([]store.Entry, []int) {
	entries := make([]store.Entry, 0, len(rs))
	pos := make([]int, 0, len(rs))
	for i := range rs {
		if rs[i].Err == nil {
			entries = append(entries, ix.entry(rs[i].Hash, urls[i]))
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

// Input says how Resolve reads its strings.
type Input uint8

const (
	// URLs are hashed with the index's profile.
	URLs Input = iota
	// Hashes are full hashes in hex or the decimal form (hashkey.ParseHash).
	Hashes
	// Keys are full hashes, or an even number of hex digits naming a
	// prefix entry of store.MinPrefixEntryLen..store.MaxPrefixEntryLen
	// bytes (hashkey.ParseKey).
	Keys
)

// Resolved is one input of Resolve as a store entry, or the reason it has
// none.
type Resolved struct {
	Entry store.Entry
	Err   error
}

// Resolve turns inputs into store entries on every core;
// out[i] belongs to inputs[i]. A URL's entry holds its text when
// Options.StoreURL.
func (ix *Index) Resolve(inputs []string, in Input) []Resolved {
	out := make([]Resolved, len(inputs))
	switch in {
	case URLs:
		ix.parallel(len(inputs), func(i int) {
			h, err := ix.profile.Hash(inputs[i])
			out[i] = Resolved{Entry: ix.entry(h, inputs[i]), Err: err}
		})
	case Hashes:
		ix.parallel(len(inputs), func(i int) {
			h, err := hashkey.ParseHash(inputs[i])
			out[i] = Resolved{Entry: store.FullEntry(h, store.Value{}), Err: err}
		})
	default:
		ix.parallel(len(inputs), func(i int) {
			h, n, err := hashkey.ParseKey(inputs[i], store.MinPrefixEntryLen)
			out[i] = Resolved{Entry: store.Entry{Hash: h, Len: n}, Err: err}
		})
	}
	return out
}
