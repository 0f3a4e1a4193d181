package dedupe

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
)

// setup is an index a test's clients share, and the journal options of
// its clients.
type setup struct {
	name string
	// open returns a new index for the test: a query.Index to open a
	// client with (a new one each call, as a restarted client opens it)
	// and the index behind it, to check what it holds.
	open func(t *testing.T) (client func() *query.Index, db *index.DB)
	opts func(dir string) Options
}

// setups are the ways a client reaches its index: a directory with one
// journal file, a server with a directory of journals (two batches in
// flight), a server with one journal file.
var setups = []setup{
	{"directory", openDir, func(dir string) Options { return Options{Journal: filepath.Join(dir, "urlhash.dedupe")} }},
	{"server", openServed, func(dir string) Options { return Options{JournalDir: filepath.Join(dir, "journals")} }},
	{"server, journal file", openServed, func(dir string) Options { return Options{Journal: filepath.Join(dir, "j")} }},
}

func openDir(t *testing.T) (func() *query.Index, *index.DB) {
	db, err := index.Open(filepath.Join(t.TempDir(), "idx"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := query.New(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return func() *query.Index { return ix }, db
}

func openServed(t *testing.T) (func() *query.Index, *index.DB) {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ts := httptest.NewServer(server.New(db, nil))
	t.Cleanup(ts.Close)
	return func() *query.Index {
		rdb, err := remote.Open(context.Background(), ts.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := query.New(context.Background(), rdb, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}, db
}

// reports counts what a Handler was given.
type reports struct {
	mu        sync.Mutex
	news      map[string]int // inputs reported new
	failed    []string       // inputs handed back with an error
	recovered int            // recovered batches
	order     []string       // every input, in the order reported
}

func (r *reports) handle(b *Batch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.news == nil {
		r.news = map[string]int{}
	}
	if b.Recovered {
		r.recovered++
	}
	for i, in := range b.Inputs {
		switch {
		case in.Err != nil:
			r.failed = append(r.failed, in.Text)
		case b.New[i]:
			r.news[in.Text]++
		}
		r.order = append(r.order, in.Text)
	}
	return nil
}

// TestClient: each identity is reported new once, its first input, over
// batches and repeats within them; an input without identity comes back
// with its error in its place; the answers arrive in input order; a
// second client reports nothing of it again; the finished clients leave
// no journal file.
func TestClient(t *testing.T) {
	batches := [][]string{
		{"https://a.example/", "https://b.example/", "https://A.example/", "http://[::1"},
		{"https://b.example:443/", "https://c.example/", "https://c.example/#x"},
		{"https://d.example/"},
	}
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			client, _ := s.open(t)
			dir := t.TempDir()
			o := s.opts(dir)
			var r reports
			c, err := Open(ctx, client(), &o, r.handle)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range batches {
				if err := c.SendURLs(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			want := map[string]int{"https://a.example/": 1, "https://b.example/": 1, "https://c.example/": 1, "https://c.example/#x": 1, "https://d.example/": 1}
			if fmt.Sprint(r.news) != fmt.Sprint(want) {
				t.Errorf("reported new: %v, want %v", r.news, want)
			}
			if !slices.Equal(r.failed, []string{"http://[::1"}) {
				t.Errorf("handed back with an error: %q", r.failed)
			}
			if got, want := r.order, slices.Concat(batches...); !slices.Equal(got, want) {
				t.Errorf("reported in the order %q, want %q", got, want)
			}
			var again reports
			c, err = Open(ctx, client(), &o, again.handle)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.SendURLs(ctx, batches[0]); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if len(again.news) != 0 || again.recovered != 0 {
				t.Errorf("a second client reported %v new, %d batches recovered; want none", again.news, again.recovered)
			}
			if left := files(t, dir); len(left) != 0 {
				t.Errorf("journal files left by finished clients: %v", left)
			}
		})
	}
}

// files lists the files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// TestCrash: a client killed at each step of a batch (its journal
// written; the batch stored; its answer committed; the answer delivered)
// and a client started after it over the same inputs: every identity the
// index holds was reported new at least once, and every one reported new
// is held. The kill is the crash hook: the client stops as kill -9 stops
// it, its journals as they are.
func TestCrash(t *testing.T) {
	var urls []string
	for i := range 300 {
		urls = append(urls, fmt.Sprintf("https://site%d.example/%d", i%7, i))
	}
	for _, s := range setups {
		for _, step := range []string{"begin", "write", "commit", "deliver"} {
			t.Run(s.name+"/"+step, func(t *testing.T) {
				ctx := context.Background()
				client, db := s.open(t)
				o := s.opts(t.TempDir())
				var r reports
				var mu sync.Mutex
				seen := 0
				killed := o
				killed.crash = func(st string) bool {
					mu.Lock()
					defer mu.Unlock()
					if st == step {
						seen++
						return seen == 2 // the second batch's
					}
					return false
				}
				c, err := Open(ctx, client(), &killed, r.handle)
				if err != nil {
					t.Fatal(err)
				}
				var sendErr error
				for i := 0; i < len(urls) && sendErr == nil; i += 100 {
					sendErr = c.SendURLs(ctx, urls[i:i+100])
				}
				if err := c.Close(); !errors.Is(err, errKilled) && !errors.Is(sendErr, errKilled) {
					t.Fatalf("the client was not killed: Send %v, Close %v", sendErr, err)
				}
				before := len(r.news)
				c, err = Open(ctx, client(), &o, r.handle)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(urls); i += 100 {
					if err := c.SendURLs(ctx, urls[i:i+100]); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				hs := make([]hashkey.Hash, len(urls))
				for i, u := range urls {
					hs[i] = hashkey.Sum([]byte(u)) // the URLs are canonical
				}
				held, err := db.HasBatch(ctx, hs)
				if err != nil {
					t.Fatal(err)
				}
				lost, ghosts := 0, 0
				for i, u := range urls {
					switch {
					case held[i] && r.news[u] == 0:
						lost++
					case !held[i] && r.news[u] > 0:
						ghosts++
					case !held[i]:
						t.Fatalf("%s neither stored nor reported after the second client", u)
					}
				}
				if lost != 0 || ghosts != 0 {
					t.Fatalf("%d identities stored and never reported, %d reported and not stored (%d reported before the kill, %d recovered batches)", lost, ghosts, before, r.recovered)
				}
			})
		}
	}
}

// TestHandlerError: a Handler that fails stops the client and keeps its
// batch in the journal; the next client delivers the batch's new inputs
// again, marked Recovered (and those of a batch that was in flight behind
// it, stored and never delivered).
func TestHandlerError(t *testing.T) {
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			client, db := s.open(t)
			o := s.opts(t.TempDir())
			full := errors.New("the frontier is full")
			var first reports
			calls := 0
			c, err := Open(ctx, client(), &o, func(b *Batch) error {
				if calls++; calls == 2 {
					return full
				}
				return first.handle(b)
			})
			if err != nil {
				t.Fatal(err)
			}
			sendErr := c.SendURLs(ctx, []string{"https://a.example/"})
			if sendErr == nil {
				sendErr = c.SendURLs(ctx, []string{"https://b.example/", "https://a.example/"})
			}
			if sendErr == nil {
				sendErr = c.SendURLs(ctx, []string{"https://c.example/"})
			}
			if err := c.Close(); !errors.Is(err, full) && !errors.Is(sendErr, full) {
				t.Fatalf("Send %v, Close %v; want the Handler's error", sendErr, err)
			}
			var r reports
			c, err = Open(ctx, client(), &o, r.handle)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if r.recovered == 0 || r.news["https://b.example/"] != 1 || r.news["https://a.example/"] != 0 {
				t.Fatalf("after the failed Handler: %d recovered batches, %v new; want b's batch again", r.recovered, r.news)
			}
			held, err := db.HasBatch(ctx, []hashkey.Hash{hashkey.Sum([]byte("https://c.example/"))})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.news["https://c.example/"] + first.news["https://c.example/"]; held[0] != (got == 1) {
				t.Fatalf("c stored %v, reported %d times", held[0], got)
			}
		})
	}
}

// TestOtherIndex: a journal left by a client of one index is refused by
// a client of another (an *IndexError naming both and the journal), which
// neither reports nor stores its inputs and leaves it; a client of the
// first index finishes it.
func TestOtherIndex(t *testing.T) {
	ctx := context.Background()
	clientA, dbA := openServed(t)
	clientB, dbB := openServed(t)
	o := Options{Journal: filepath.Join(t.TempDir(), "j")}
	killed := o
	killed.crash = func(step string) bool { return step == "write" }
	c, err := Open(ctx, clientA(), &killed, func(*Batch) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	c.SendURLs(ctx, []string{"https://a.example/"})
	c.Close()

	var r reports
	_, err = Open(ctx, clientB(), &o, r.handle)
	var ie *IndexError
	if !errors.As(err, &ie) || !errors.Is(err, ErrOtherIndex) {
		t.Fatalf("a client of B: %v, want an *IndexError", err)
	}
	if ie.Want != dbA.Identity() || ie.Have != dbB.Identity() || ie.Journal != o.Journal || ie.Inputs != 1 {
		t.Errorf("IndexError %+v, want A %s, B %s, journal %s", ie, dbA.Identity(), dbB.Identity(), o.Journal)
	}
	for _, want := range []string{dbA.Identity(), dbB.Identity(), o.Journal} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if len(r.news) != 0 {
		t.Errorf("reported %v", r.news)
	}
	if held, _ := dbB.HasBatch(ctx, []hashkey.Hash{hashkey.Sum([]byte("https://a.example/"))}); held[0] {
		t.Error("A's input stored in B")
	}
	c, err = Open(ctx, clientA(), &o, r.handle)
	if err != nil {
		t.Fatalf("a client of A: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if r.recovered != 1 || r.news["https://a.example/"] != 1 {
		t.Fatalf("a client of A: %d recovered, %v", r.recovered, r.news)
	}
}

// TestJournalV1: a journal an older urlhash left (no key, no entries) is
// finished: its stored inputs are reported, the invalid one with its
// error.
func TestJournalV1(t *testing.T) {
	ctx := context.Background()
	client, db := openDir(t)
	if _, err := client().Add(ctx, "https://a.example/"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "urlhash.dedupe")
	if err := os.WriteFile(path, v1Journal("https://a.example/", "https://b.example/", "http://[::1"), 0o644); err != nil {
		t.Fatal(err)
	}
	var r reports
	c, err := Open(ctx, client(), &Options{Journal: path}, r.handle)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if r.recovered != 1 || fmt.Sprint(r.news) != "map[https://a.example/:1]" || !slices.Equal(r.failed, []string{"http://[::1"}) {
		t.Fatalf("after a v1 journal: %d recovered, new %v, failed %q", r.recovered, r.news, r.failed)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the finished journal is still there: %v", err)
	}
	_ = db
}

// TestRevisit: with RevisitAfter, an input is new again once it was last
// reported new that long ago, by the index's clock.
func TestRevisit(t *testing.T) {
	ctx := context.Background()
	client, _ := openDir(t)
	var r reports
	c, err := Open(ctx, client(), &Options{RevisitAfter: time.Hour}, r.handle)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.SendURLs(ctx, []string{"https://a.example/"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if r.news["https://a.example/"] != 1 {
		t.Fatalf("reported new %d times within the hour, want 1", r.news["https://a.example/"])
	}
}

// TestOptions: options that exclude each other are refused.
func TestOptions(t *testing.T) {
	client, _ := openDir(t)
	for _, o := range []Options{
		{Journal: "a", JournalDir: "b"},
		{RevisitAfter: -time.Second},
	} {
		if _, err := Open(context.Background(), client(), &o, func(*Batch) error { return nil }); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Open(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := Open(context.Background(), client(), nil, nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Open without a Handler = %v, want ErrInvalidOptions", err)
	}
}

// TestFlush: Flush returns once the answers to every batch sent before it
// have reached the Handler (two batches in flight to a server), and
// returns the Handler's error.
func TestFlush(t *testing.T) {
	ctx := context.Background()
	client, _ := openServed(t)
	fail := errors.New("handler failed")
	var mu sync.Mutex
	delivered := 0
	c, err := Open(ctx, client(), &Options{JournalDir: t.TempDir()}, func(b *Batch) error {
		time.Sleep(10 * time.Millisecond) // answers come late
		mu.Lock()
		defer mu.Unlock()
		if delivered++; delivered == 5 {
			return fail
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := c.SendURLs(ctx, []string{fmt.Sprintf("https://example.com/%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := delivered
	mu.Unlock()
	if got != 3 {
		t.Fatalf("after Flush, %d batches delivered, want 3", got)
	}
	for i := range 2 {
		c.SendURLs(ctx, []string{fmt.Sprintf("https://example.net/%d", i)})
	}
	if err := c.Flush(); !errors.Is(err, fail) {
		t.Fatalf("Flush after a failed Handler: %v, want its error", err)
	}
	c.Close()
}
