package remote

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// TestIdentity: Open learns the served index's identity; every answer
// names it; a batch sent with a key after another index came to be served
// at the address is refused (wire.ErrIndexMismatch) and stores nothing
// there, while a write without a key goes to whatever index is served.
func TestIdentity(t *testing.T) {
	ctx := context.Background()
	open := func() *index.DB {
		ix, err := index.Open("", &index.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	a, b := open(), open()
	var served atomic.Pointer[http.Handler]
	serve := func(ix *index.DB) {
		var h http.Handler = server.New(ix, nil)
		served.Store(&h)
	}
	serve(a)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*served.Load()).ServeHTTP(w, r) }))
	defer ts.Close()
	db, err := Open(ctx, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Identity() != a.Identity() || a.Identity() == "" {
		t.Fatalf("Identity() = %q, want the served index's %q", db.Identity(), a.Identity())
	}
	resp, err := http.Get(ts.URL + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(wire.HeaderIndex); got != a.Identity() {
		t.Errorf("%s of an answer = %q, want %q", wire.HeaderIndex, got, a.Identity())
	}
	e := []store.Entry{store.FullEntry(hashkey.Sum([]byte("x")), store.Value{})}
	if _, err := db.AddBatchOnce(ctx, e, "k1"); err != nil {
		t.Fatal(err)
	}
	serve(b) // another index at the same address
	e2 := []store.Entry{store.FullEntry(hashkey.Sum([]byte("y")), store.Value{})}
	if _, err := db.AddBatchOnce(ctx, e2, "k2"); !errors.Is(err, wire.ErrIndexMismatch) {
		t.Fatalf("a keyed batch sent to another index: %v, want wire.ErrIndexMismatch", err)
	}
	if found, err := b.HasBatch(ctx, []hashkey.Hash{e2[0].Hash}); err != nil || found[0] {
		t.Fatalf("the refused batch was stored in the other index: %v, %v", found, err)
	}
	if added, err := db.AddBatch(ctx, e2); err != nil || !added[0] {
		t.Errorf("a write without a key: %v, %v", added, err)
	}
}
