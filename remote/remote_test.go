package remote

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
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
	ix, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	h := hashkey.Sum([]byte("a"))
	if err := ix.PutBatch([]store.Entry{store.FullEntry(h, store.Value{})}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.New(ix, nil))
	defer ts.Close()
	db, err := Open(context.Background(), ts.URL, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := store.FullEntry(hashkey.Sum([]byte("b")), store.Value{})
	for name, write := range map[string]func() error{
		"PutBatch":     func() error { return db.PutBatch([]store.Entry{e}) },
		"AddBatch":     func() error { _, err := db.AddBatch([]store.Entry{e}); return err },
		"VisitBatch":   func() error { _, err := db.VisitBatch([]store.Entry{e}, 1); return err },
		"Delete":       func() error { return db.Delete(e) },
		"DeletePrefix": func() error { _, _, err := db.DeletePrefix(h[:4], 32); return err },
		"Load":         func() error { _, err := db.Load(slices.Values([]store.Entry{e})); return err },
		"SetProfile":   func() error { return db.SetProfile("other") },
	} {
		if err := write(); !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("%s: %v, want store.ErrReadOnly", name, err)
		}
	}
	if err := db.SetProfile(""); err != nil {
		t.Errorf("SetProfile(\"\") = %v: nothing to record", err)
	}
	found, err := db.HasBatch([]hashkey.Hash{h, e.Hash})
	if err != nil || !found[0] || found[1] {
		t.Errorf("HasBatch = %v, %v", found, err)
	}
}

// TestOnceKeyReused: a key sent with another batch is refused with
// wire.ErrKeyReused; a malformed key is refused before it is sent.
func TestOnceKeyReused(t *testing.T) {
	ix, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ts := httptest.NewServer(server.New(ix, nil))
	defer ts.Close()
	db, err := Open(context.Background(), ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := []store.Entry{store.FullEntry(hashkey.Sum([]byte("a")), store.Value{})}
	b := []store.Entry{store.FullEntry(hashkey.Sum([]byte("b")), store.Value{})}
	if got, err := db.VisitBatchOnce(a, time.Hour, "k"); err != nil || !got[0] {
		t.Fatalf("VisitBatchOnce = %v, %v", got, err)
	}
	if got, err := db.VisitBatchOnce(a, time.Hour, "k"); err != nil || !got[0] {
		t.Fatalf("VisitBatchOnce again = %v, %v; want the first answer", got, err)
	}
	if _, err := db.AddBatchOnce(b, "k"); !errors.Is(err, wire.ErrKeyReused) {
		t.Errorf("another batch with the key: %v, want wire.ErrKeyReused", err)
	}
	if _, err := db.AddBatchOnce(b, "bad\nkey"); err == nil {
		t.Error("a key with a line break was sent")
	}
	// A key is checked as it is sent (quoted), not as a header value.
	if _, err := db.AddBatchOnce(b, `"half-quoted`); err != nil {
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
