package query

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// openTestIndex opens a fresh index under t.TempDir, closed at cleanup.
func openTestIndex(t testing.TB, opts *Options) (*Index, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "idx")
	ix, err := openDir(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, dir
}

// openDir opens the embedded index in dir as an Index.
func openDir(dir string, opts *Options) (*Index, error) {
	db, err := index.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	return New(context.Background(), db, opts)
}

// noFragment is the url-hash profile that drops fragments.
var noFragment = func() *urlhash.Profile {
	p, err := urlhash.New(urlhash.DropFragment())
	if err != nil {
		panic(err)
	}
	return p
}()

func TestMembership(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTestIndex(t, &Options{StoreURL: true})
	if err := ix.Put(ctx, "HTTPS://Example.COM:443/a/../b"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"https://example.com/b", true},
		{"https://EXAMPLE.com/./b", true},
		{"https://example.com/b#frag", false}, // the default profile keeps fragments
		{"https://example.com/c", false},
	} {
		got, err := ix.Has(ctx, tc.url)
		if err != nil || got != tc.want {
			t.Errorf("Has(%q) = %v, %v; want %v", tc.url, got, err, tc.want)
		}
	}
	v, err := ix.Get(ctx, "https://example.com/b")
	if err != nil || string(v.Text) != "HTTPS://Example.COM:443/a/../b" {
		t.Errorf("Get = %q, %v; want the URL as added", v.Text, err)
	}
	if _, err := ix.Get(ctx, "https://example.com/c"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(absent) error = %v, want store.ErrNotFound", err)
	}
	if _, err := ix.Has(ctx, "not a url"); err == nil {
		t.Error("Has(not a url) succeeded")
	}
	if err := ix.Delete(ctx, "https://example.com/b"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := ix.Has(ctx, "https://example.com/b"); ok {
		t.Error("Has after Delete = true")
	}
}

func TestBatches(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTestIndex(t, &Options{Profile: noFragment, Workers: 2})
	var urls []string
	for i := range 3000 {
		urls = append(urls, fmt.Sprintf("https://example.com/p/%d#s%d", i%1000, i))
	}
	urls = append(urls, "bad url")
	rs, err := ix.AddBatch(ctx, urls)
	if err != nil {
		t.Fatal(err)
	}
	added := 0
	for i, r := range rs[:3000] {
		if r.Err != nil {
			t.Fatalf("url %d: %v", i, r.Err)
		}
		if r.OK {
			added++
			if i >= 1000 {
				t.Errorf("url %d (a repeat) reported new", i)
			}
		}
	}
	if added != 1000 {
		t.Errorf("added %d, want 1000 (fragments dropped)", added)
	}
	if rs[3000].Err == nil {
		t.Error("bad url has no error")
	}
	has, err := ix.HasBatch(ctx, []string{"https://example.com/p/5", "https://example.com/p/5000", "bad url"})
	if err != nil {
		t.Fatal(err)
	}
	if !has[0].OK || has[1].OK || has[2].Err == nil {
		t.Errorf("HasBatch = %+v", has)
	}
	// The same lookups by hash: the present one's, an absent one, a bad one.
	byHash, err := ix.HasInputs(ctx, []string{has[0].Hash.String(), has[1].Hash.String(), "abc"}, Hashes)
	if err != nil {
		t.Fatal(err)
	}
	if !byHash[0].OK || byHash[1].OK || byHash[2].Err == nil || byHash[0].Hash != has[0].Hash {
		t.Errorf("HasInputs(Hashes) = %+v", byHash)
	}
	if _, err := ix.HasInputs(ctx, nil, Keys); err == nil {
		t.Error("HasInputs(Keys) accepted")
	}
}

// TestConcurrentAdd: among goroutines adding overlapping URLs,
// each URL is reported new exactly once.
func TestConcurrentAdd(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTestIndex(t, nil)
	const workers, n = 8, 500
	counts := make([]int, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range n {
				j := (i + w*37) % n
				u := fmt.Sprintf("https://example.com/%d", j)
				var ok bool
				var err error
				if w%2 == 0 {
					ok, err = ix.Add(ctx, u)
				} else {
					var rs []Result
					rs, err = ix.AddBatch(ctx, []string{u})
					if err == nil {
						ok = rs[0].OK
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					counts[j]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for j, c := range counts {
		if c != 1 {
			t.Errorf("url %d reported new %d times", j, c)
		}
	}
}

func TestProfileRecorded(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	ix, err := openDir(dir, &Options{Profile: noFragment})
	if err != nil {
		t.Fatal(err)
	}
	ix.Put(ctx, "https://example.com/a#x")
	ix.Close()

	// No profile given: the recorded one is used.
	ix, err = openDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.Profile().Name(); got != "urlhash-nofragment+sha256" {
		t.Errorf("Profile().Name() = %q", got)
	}
	if ok, _ := ix.Has(ctx, "https://example.com/a#y"); !ok {
		t.Error("recorded profile not used: fragment not dropped")
	}
	ix.Close()

	// Another profile is refused.
	for _, o := range []*Options{{Profile: urlhash.Default}, {Profile: safebrowsing.WebRisk}} {
		if _, err := openDir(dir, o); !errors.Is(err, store.ErrProfileMismatch) {
			t.Errorf("Open with another profile: error %v, want ErrProfileMismatch", err)
		}
	}
}

func TestLookup(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTestIndex(t, &Options{Profile: safebrowsing.V5})
	full := hashkey.Sum([]byte("bank.example.net/login/"))
	prefix := hashkey.Sum([]byte("malware.example/"))
	pe, err := store.PrefixEntry(prefix[:4], store.Value{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Store().PutBatch(ctx, []store.Entry{store.FullEntry(full, store.Value{Data: []byte("phishing")}), pe}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want []Hit
	}{
		{"http://www.malware.example/x/y.exe", []Hit{{Expression: "malware.example/", Hash: prefix, Len: 4}}},
		{"https://bank.example.net/login/step?a=1", []Hit{{Expression: "bank.example.net/login/", Hash: full, Len: 32}}},
		{"https://bank.example.net/about", nil},
		{"https://example.org/", nil},
	} {
		got, err := ix.Lookup(ctx, tc.url, safebrowsing.V5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("Lookup(%q) = %+v, want %+v", tc.url, got, tc.want)
			continue
		}
		for i := range got {
			if got[i].Expression != tc.want[i].Expression || got[i].Hash != tc.want[i].Hash || got[i].Len != tc.want[i].Len {
				t.Errorf("Lookup(%q)[%d] = %+v, want %+v", tc.url, i, got[i], tc.want[i])
			}
		}
	}
	// A list index keys a URL by its exact expression.
	if err := ix.Put(ctx, "http://evil.example/a?b"); err != nil {
		t.Fatal(err)
	}
	hits, _ := ix.Lookup(ctx, "https://evil.example/a?b", safebrowsing.V5)
	if len(hits) != 1 || hits[0].Expression != "evil.example/a?b" || !hits[0].IsFull() {
		t.Errorf("Lookup after Add = %+v", hits)
	}
	if _, err := ix.Lookup(ctx, "mailto:x@example.com", safebrowsing.V5); !errors.Is(err, hashkey.ErrUnsupportedURL) {
		t.Errorf("Lookup(mailto) error = %v", err)
	}
}

func TestMatchHashed(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTestIndex(t, nil)
	var stored []hasheduri.URI
	for _, g := range []struct {
		url  string
		alg  hasheduri.Alg
		keep hasheduri.Keep
	}{
		{"http://a.example/x", hasheduri.MD5, hasheduri.KeepNone},
		{"http://b.example/y?q=1", hasheduri.SHA1, hasheduri.KeepQuery},
		{"http://c.example/z", hasheduri.SHA256, hasheduri.KeepNone},
	} {
		u, err := hasheduri.Generate(g.url, g.alg, g.keep, hasheduri.N)
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.AddHashedURI(ctx, u); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, u)
	}
	for _, tc := range []struct {
		url  string
		want int // index into stored, or -1
	}{
		{"HTTP://A.EXAMPLE:80/x?ignored#ignored", 0},
		{"http://b.example/y?q=1", 1},
		{"http://b.example/y?q=2", -1}, // the query is part of that entry
		{"http://c.example/z", 2},
		{"http://d.example/", -1},
	} {
		got, err := ix.MatchHashed(ctx, tc.url, hasheduri.N)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want < 0 && len(got) != 0:
			t.Errorf("MatchHashed(%q) = %v, want none", tc.url, got)
		case tc.want >= 0 && (len(got) != 1 || !got[0].Equal(stored[tc.want])):
			t.Errorf("MatchHashed(%q) = %v, want %v", tc.url, got, stored[tc.want])
		}
	}
	if _, err := ix.MatchHashed(ctx, "no scheme", hasheduri.N); err == nil {
		t.Error("MatchHashed(bad url) succeeded")
	}
}

// TestOtherUnicodeTables: an index recorded by a build with other IDNA
// tables (or by one before they were recorded) is refused, naming both.
func TestOtherUnicodeTables(t *testing.T) {
	ctx := context.Background()
	for _, recorded := range []string{"urlhash+sha256", "urlhash+sha256;unicode=15.0.0", "webrisk;unicode=16.0.0"} {
		db, err := index.Open("", &index.Options{InMemory: true, Profile: recorded})
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(ctx, db, nil)
		if !errors.Is(err, store.ErrProfileMismatch) || !strings.Contains(err.Error(), "Unicode 17.0.0") || !strings.Contains(err.Error(), "rebuild the index") {
			t.Errorf("index recording %q: %v, want a mismatch naming both table versions", recorded, err)
		}
	}
	db, err := index.Open("", &index.Options{InMemory: true, Profile: "iri"})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := New(ctx, db, nil)
	if err != nil || ix.Profile().Name() != "iri" {
		t.Fatalf("iri index: %v", err) // iri maps no hosts: no tables to record
	}
	ix.Close()
}
