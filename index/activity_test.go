package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// waitActivity polls db.Activity until done accepts it, for at most 30 s
// (merges and compactions run in the background).
func waitActivity(t *testing.T, db *DB, what string, done func(a Activity) bool) Activity {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, err := db.Activity(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if done(a) {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s: %+v", what, a)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestActivityKeyTableMerges: the key table's merges are counted, with
// their time and the bytes of the key files they wrote.
func TestActivityKeyTableMerges(t *testing.T) {
	db := mustOpen(t, t.TempDir(), &Options{KeyTable: true, keyTableDelta: 50})
	defer db.Close()
	a, err := db.Activity(context.Background())
	if err != nil || a.KeyTableMerges != 0 || a.FreeBytes <= 0 || a.ReserveBytes <= 0 || len(a.Compactions) != 1 || a.Compactions[0] != 0 {
		t.Fatalf("fresh index: %+v, %v; want no merge, free space, a reserve and no compaction of level 0", a, err)
	}
	for i := range 10 {
		es := make([]store.Entry, 100)
		for j := range es {
			es[j] = store.FullEntry(hashkey.Sum(fmt.Appendf(nil, "%d-%d", i, j)), store.Value{})
		}
		if _, err := db.AddBatch(context.Background(), es); err != nil {
			t.Fatal(err)
		}
	}
	a = waitActivity(t, db, "key-table merge", func(a Activity) bool { return a.KeyTableMerges > 0 })
	if a.KeyTableMergeTime <= 0 || a.KeyTableMergeBytes < 32*50 {
		t.Fatalf("after %d merges: time %v, bytes %d; want both counted (at least 50 keys of 32 bytes)", a.KeyTableMerges, a.KeyTableMergeTime, a.KeyTableMergeBytes)
	}
}

// TestActivityCompactions: Badger's compactions are counted by level (the
// count reads Badger's debug line compactionDone: a Badger upgrade that
// changes it fails here).
func TestActivityCompactions(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 8 MB")
	}
	db := mustOpen(t, t.TempDir(), &Options{MemTableSize: 1 << 20, NoKeyTable: true})
	defer db.Close()
	text := bytes.Repeat([]byte("x"), 900)
	for i := range 80 {
		es := make([]store.Entry, 100)
		for j := range es {
			es[j] = store.FullEntry(hashkey.Sum(fmt.Appendf(nil, "%d-%d", i, j)), store.Value{Text: text})
		}
		if err := db.PutBatch(context.Background(), es); err != nil {
			t.Fatal(err)
		}
	}
	// Level 0's tables are the first compacted.
	waitActivity(t, db, "compaction", func(a Activity) bool { return len(a.Compactions) > 0 && a.Compactions[0] > 0 })
}

// TestActivityInMemory: an index in memory has no filesystem figures, and
// a closed one answers store.ErrClosed.
func TestActivityInMemory(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	a, err := db.Activity(context.Background())
	if err != nil || a.FreeBytes != 0 || a.ReserveBytes != 0 || a.Compactions != nil {
		t.Fatalf("in memory: %+v, %v", a, err)
	}
	db.Close()
	if _, err := db.Activity(context.Background()); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("closed: %v, want store.ErrClosed", err)
	}
}
