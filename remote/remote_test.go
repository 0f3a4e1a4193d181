package remote

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// A read-only client refuses every write before sending it, and reads.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	ix, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	h := hashkey.Sum([]byte("a"))
	if err := ix.PutBatch(ctx, []store.Entry{store.FullEntry(h, store.Value{})}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.New(ix, nil))
	defer ts.Close()
	db, err := Open(ctx, ts.URL, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := store.FullEntry(hashkey.Sum([]byte("b")), store.Value{})
	for name, write := range map[string]func() error{
		"PutBatch":     func() error { return db.PutBatch(ctx, []store.Entry{e}) },
		"AddBatch":     func() error { _, err := db.AddBatch(ctx, []store.Entry{e}); return err },
		"VisitBatch":   func() error { _, err := db.VisitBatch(ctx, []store.Entry{e}, 1); return err },
		"Delete":       func() error { return db.Delete(ctx, e) },
		"DeletePrefix": func() error { _, _, err := db.DeletePrefix(ctx, h[:4], 32); return err },
		"Load":         func() error { _, err := db.Load(ctx, slices.Values([]store.Entry{e})); return err },
		"SetProfile":   func() error { return db.SetProfile(ctx, "other") },
	} {
		if err := write(); !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("%s: %v, want store.ErrReadOnly", name, err)
		}
	}
	if err := db.SetProfile(ctx, ""); err != nil {
		t.Errorf("SetProfile(\"\") = %v: nothing to record", err)
	}
	found, err := db.HasBatch(ctx, []hashkey.Hash{h, e.Hash})
	if err != nil || !found[0] || found[1] {
		t.Errorf("HasBatch = %v, %v", found, err)
	}
}

// TestOnceKeyReused: a key sent with another batch is refused with
// wire.ErrKeyReused; a malformed key is refused before it is sent.
func TestOnceKeyReused(t *testing.T) {
	ctx := context.Background()
	ix, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ts := httptest.NewServer(server.New(ix, nil))
	defer ts.Close()
	db, err := Open(ctx, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := []store.Entry{store.FullEntry(hashkey.Sum([]byte("a")), store.Value{})}
	b := []store.Entry{store.FullEntry(hashkey.Sum([]byte("b")), store.Value{})}
	if got, err := db.VisitBatchOnce(ctx, a, time.Hour, "k"); err != nil || !got[0] {
		t.Fatalf("VisitBatchOnce = %v, %v", got, err)
	}
	if got, err := db.VisitBatchOnce(ctx, a, time.Hour, "k"); err != nil || !got[0] {
		t.Fatalf("VisitBatchOnce again = %v, %v; want the first answer", got, err)
	}
	if _, err := db.AddBatchOnce(ctx, b, "k"); !errors.Is(err, wire.ErrKeyReused) {
		t.Errorf("another batch with the key: %v, want wire.ErrKeyReused", err)
	}
	if _, err := db.AddBatchOnce(ctx, b, "bad\nkey"); err == nil {
		t.Error("a key with a line break was sent")
	}
	// A key is checked as it is sent (quoted), not as a header value.
	if _, err := db.AddBatchOnce(ctx, b, `"half-quoted`); err != nil {
		t.Errorf("a key starting with a quote: %v", err)
	}
}

// TestProfileUnreachable: a server that stops answering makes Profile an
// error, and query.New fails rather than taking the default profile for
// an index that records another.
func TestProfileUnreachable(t *testing.T) {
	ix, err := index.Open("", &index.Options{InMemory: true, Profile: "webrisk"})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ts := httptest.NewServer(server.New(ix, nil))
	ctx := context.Background()
	// Read-only: query.New then records nothing, and took "" for none.
	db, err := Open(ctx, ts.URL, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.Profile(ctx); got != "webrisk" || err != nil {
		t.Fatalf("Profile = %q, %v; want webrisk", got, err)
	}
	ts.Close()
	if got, err := db.Profile(ctx); err == nil {
		t.Errorf("Profile of an unreachable server = %q, nil; want an error", got)
	}
	if qx, err := query.New(ctx, db, nil); err == nil {
		t.Errorf("query.New over an unreachable server took profile %s; want an error", qx.Profile().Name())
	}
	if got, err := db.Profile(ctx); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Profile after query.New closed it = %q, %v; want store.ErrClosed", got, err)
	}
}

// TestCancelBlocked: a request the server does not answer ends when its
// context is cancelled, promptly, with context.Canceled; so does a call
// made with a context already cancelled, before anything is sent.
func TestCancelBlocked(t *testing.T) {
	release := make(chan struct{})
	var sent atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/health" {
			w.Write([]byte(`{"status":"ok","profile":""}` + "\n"))
			return
		}
		sent.Add(1)
		select { // an answer that never comes
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	db, err := Open(context.Background(), ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := hashkey.Sum([]byte("a"))
	e := store.FullEntry(h, store.Value{})
	for name, call := range map[string]func(context.Context) error{
		"HasBatch": func(ctx context.Context) error { _, err := db.HasBatch(ctx, []hashkey.Hash{h}); return err },
		"AddBatch": func(ctx context.Context) error { _, err := db.AddBatch(ctx, []store.Entry{e}); return err },
		"Scan": func(ctx context.Context) error {
			return db.Scan(ctx, nil, 0, 0, func(store.Entry) error { return nil })
		},
		"Load":    func(ctx context.Context) error { _, err := db.Load(ctx, slices.Values([]store.Entry{e})); return err },
		"Profile": func(ctx context.Context) error { _, err := db.Profile(ctx); return err },
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := call(ctx)
		if took := time.Since(start); !errors.Is(err, context.Canceled) || took > 5*time.Second {
			t.Errorf("%s, cancelled after 100ms: %v after %v; want context.Canceled at once", name, err, took)
		}
		before := sent.Load()
		if err := call(ctx); !errors.Is(err, context.Canceled) || sent.Load() != before {
			t.Errorf("%s with a cancelled context: %v (%d requests sent); want context.Canceled and none", name, err, sent.Load()-before)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:7411", "http://127.0.0.1:7411"},
		{"HTTP://127.0.0.1:7411", "HTTP://127.0.0.1:7411"},
		{"http://crawler@host:1", "http://crawler@host:1"},
		{"http://crawler:pw@host:1", "http://crawler:xxxxx@host:1"},
		{"https://crawler:p%40w@host:1/", "https://crawler:xxxxx@host:1/"},
		{"http://crawler:pw@host:1:2:3", "http://crawler:xxxxx@host:1:2:3"}, // no URL: the pattern
		{"http://crawler:pw@[::1", "http://crawler:xxxxx@[::1"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// countingServer serves ix, answering the paths in refuse 404
// no_endpoint as a server without them does, and counts the requests by
// path.
func countingServer(t *testing.T, ix store.Backend, refuse ...string) (*httptest.Server, *sync.Map) {
	var counts sync.Map
	srv := server.New(ix, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := counts.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		if slices.Contains(refuse, r.URL.Path) {
			w.Header().Set("Content-Type", wire.ContentTypeJSON)
			w.WriteHeader(http.StatusNotFound)
			w.Write(wire.AppendErrorBody(nil, "no_endpoint", "no endpoint "+r.URL.Path))
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &counts
}

func requests(counts *sync.Map, path string) int64 {
	if n, ok := counts.Load(path); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// TestGetBatch: a batch get is one request (/v1/get-batch), answered in
// input order as Get answers each hash; from a server older than the
// endpoint (no_endpoint), one Get a hash, and the batch endpoint is not
// asked again.
func TestGetBatch(t *testing.T) {
	ctx := context.Background()
	ix, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	a, b, absent := hashkey.Sum([]byte("a")), hashkey.Sum([]byte("b")), hashkey.Sum([]byte("absent"))
	stored := []store.Entry{
		store.FullEntry(a, store.Value{Text: []byte("https://a.example/")}),
		store.FullEntry(b, store.Value{Data: []byte{1, 2}, Expires: time.Now().Add(time.Hour).Truncate(time.Second)}),
	}
	if err := ix.PutBatch(ctx, stored); err != nil {
		t.Fatal(err)
	}
	hs := []hashkey.Hash{b, absent, a, b}
	want := []store.Value{stored[1].Value, {}, stored[0].Value, stored[1].Value}
	for _, tc := range []struct {
		name             string
		refuse           []string
		batches, singles int64 // requests to /v1/get-batch and /v1/get, of two calls
	}{
		{"server", nil, 2, 0},
		{"older server", []string{wire.PathGetBatch}, 1, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, counts := countingServer(t, ix, tc.refuse...)
			db, err := Open(ctx, ts.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for range 2 {
				vs, found, err := db.GetBatch(ctx, hs)
				if err != nil {
					t.Fatal(err)
				}
				for i := range hs {
					if found[i] != (i != 1) || !sameValue(vs[i], want[i]) {
						t.Errorf("hash %d: %v %+v, want %v %+v", i, found[i], vs[i], i != 1, want[i])
					}
				}
			}
			if got := requests(counts, wire.PathGetBatch); got != tc.batches {
				t.Errorf("%d requests to %s, want %d", got, wire.PathGetBatch, tc.batches)
			}
			if got := requests(counts, wire.PathGet); got != tc.singles {
				t.Errorf("%d requests to %s, want %d", got, wire.PathGet, tc.singles)
			}
		})
	}
}

func sameValue(a, b store.Value) bool {
	return bytes.Equal(a.Text, b.Text) && bytes.Equal(a.Data, b.Data) && a.FirstSeen.Equal(b.FirstSeen) &&
		a.LastSeen.Equal(b.LastSeen) && a.Expires.Equal(b.Expires)
}

// TestGetBatchParts: a batch of more than wire.MaxGetBatch hashes goes
// in parts (a server refuses more in one request), answered in order.
func TestGetBatchParts(t *testing.T) {
	ctx := context.Background()
	ix, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hs := make([]hashkey.Hash, wire.MaxGetBatch+3)
	var stored []store.Entry
	for i := range hs {
		hs[i] = hashkey.Sum([]byte(strconv.Itoa(i)))
		if i%1000 == 7 {
			stored = append(stored, store.FullEntry(hs[i], store.Value{Text: []byte(strconv.Itoa(i))}))
		}
	}
	if err := ix.PutBatch(ctx, stored); err != nil {
		t.Fatal(err)
	}
	ts, counts := countingServer(t, ix)
	db, err := Open(ctx, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vs, found, err := db.GetBatch(ctx, hs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range hs {
		if want := i%1000 == 7; found[i] != want || want && string(vs[i].Text) != strconv.Itoa(i) {
			t.Fatalf("hash %d: %v %q, want %v", i, found[i], vs[i].Text, want)
		}
	}
	if got := requests(counts, wire.PathGetBatch); got != 2 {
		t.Errorf("%d requests to %s, want 2", got, wire.PathGetBatch)
	}
	// The server refuses a larger request whole.
	resp, err := http.Post(ts.URL+wire.PathGetBatch, "application/octet-stream", bytes.NewReader(wire.AppendHashes(nil, hs)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a get-batch of %d hashes: %s, want 400", len(hs), resp.Status)
	}
}
