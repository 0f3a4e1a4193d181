package index

import (
	"context"
	"errors"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

func TestDeleteBatch(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a, b, c := hashkey.Sum([]byte("a")), hashkey.Sum([]byte("b")), hashkey.Sum([]byte("c"))
	pa, _ := store.PrefixEntry(a[:4], store.Value{})
	pc, _ := store.PrefixEntry(c[:6], store.Value{})
	if err := db.PutBatch(ctx, []store.Entry{store.FullEntry(a, store.Value{}), store.FullEntry(b, store.Value{}), pa}); err != nil {
		t.Fatal(err)
	}
	// a's full entry and prefix, b's twice; c is not stored.
	n, err := db.DeleteBatch(ctx, []store.Entry{store.FullEntry(a, store.Value{}), pa, store.FullEntry(b, store.Value{}), store.FullEntry(b, store.Value{}), pc, store.FullEntry(c, store.Value{})})
	if err != nil || n != 3 {
		t.Fatalf("DeleteBatch = %d, %v; want 3", n, err)
	}
	full, prefixes, err := db.Count(ctx, nil, 0)
	if err != nil || full != 0 || prefixes != 0 {
		t.Fatalf("left %d full, %d prefix entries, %v", full, prefixes, err)
	}
	st, err := db.Stats(ctx)
	if err != nil || st.Entries != 0 || st.PrefixEntries != 0 {
		t.Fatalf("stats %+v %v", st, err)
	}
	if _, err := db.DeleteBatch(ctx, []store.Entry{{Hash: a, Len: 2}}); !errors.Is(err, store.ErrPrefixLength) {
		t.Fatalf("bad length: %v", err)
	}
}
