package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestKeyTableMoveCrash: a crash in the middle of a move into the key
// table (an entry Badger holds, as a restored backup of format 2 leaves
// it, written again: the key table's row written, Badger's not yet
// deleted) leaves the key in both stores. The counts stay exact: Badger's
// copy is the entry (the write failed); Verify reports the copy; a backup
// restores right; a writable Open after the crash deletes the key table's
// copy (and moves Badger's into the key table), and a delete then deletes
// the key.
func TestKeyTableMoveCrash(t *testing.T) {
	ctx := context.Background()
	hs := randHashes(rand.New(rand.NewPCG(23, 3)), 10)
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{KeyTable: true})
	if _, err := db.AddBatch(ctx, entriesOf(append(hs[:3:3], hs[4:]...))); err != nil {
		t.Fatal(err)
	}
	old := store.Value{Text: []byte("https://example.com/old")}
	putLegacy(t, db, hs[3], old)
	errCrash := errors.New("crash")
	db.st.testMoveCrash = func() error { return errCrash }
	v := store.Value{Text: []byte("https://example.com/moved")}
	if err := db.PutBatch(ctx, []store.Entry{store.FullEntry(hs[3], v)}); !errors.Is(err, errCrash) {
		t.Fatalf("PutBatch = %v, want the crash", err)
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, dir) // the process dies here
	db.st.testMoveCrash = nil
	defer db.Close()

	check := func(t *testing.T, db *DB, entries int64) {
		t.Helper()
		s, err := db.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		full, _, err := db.Count(ctx, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Entries != entries || full != entries {
			t.Errorf("Entries = %d, Count = %d, want %d", s.Entries, full, entries)
		}
		if got, err := db.Get(ctx, hs[3]); err != nil || !bytes.Equal(got.Text, old.Text) {
			t.Errorf("Get(moved) = %q, %v; want its value", got.Text, err)
		}
	}
	// The process that failed there (a crashed index opens only writable,
	// which repairs it) holds the key in both stores.
	t.Run("Verify reports the copy", func(t *testing.T) {
		check(t, db, 10)
		err := db.Verify(ctx)
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("%x", hs[3][:])) || !strings.Contains(err.Error(), "both") {
			t.Fatalf("Verify = %v, want the key in both stores reported", err)
		}
	})
	t.Run("backup and restore", func(t *testing.T) {
		var buf bytes.Buffer
		if _, err := db.Backup(&buf, 0); err != nil {
			t.Fatal(err)
		}
		dst := mustOpen(t, t.TempDir(), nil)
		defer dst.Close()
		if _, err := dst.Restore(&buf); err != nil {
			t.Fatal(err)
		}
		check(t, dst, 10)
		if err := dst.Verify(ctx); err != nil {
			t.Errorf("Verify of the restored index: %v", err)
		}
	})
	t.Run("delete in the failed process", func(t *testing.T) {
		dir := copyDir(t, dir)
		db := mustOpen(t, dir, &Options{KeyTable: true})
		defer db.Close()
		db.st.testMoveCrash = func() error { return errCrash }
		h := hashkey.Sum([]byte("moved in a failed write"))
		putLegacy(t, db, h, old)
		if err := db.PutBatch(ctx, []store.Entry{store.FullEntry(h, v)}); !errors.Is(err, errCrash) {
			t.Fatalf("PutBatch = %v, want the crash", err) // in both stores
		}
		if err := db.Delete(ctx, store.FullEntry(h, store.Value{})); err != nil {
			t.Fatal(err)
		}
		if ok, err := db.Has(ctx, h); ok || err != nil {
			t.Errorf("Has(deleted) = %v, %v", ok, err)
		}
		if err := db.Verify(ctx); err != nil {
			t.Errorf("Verify: %v", err)
		}
	})
	t.Run("writable Open repairs", func(t *testing.T) {
		dir := copyDir(t, crashed)
		db := mustOpen(t, dir, nil)
		check(t, db, 10)
		if err := db.Verify(ctx); err != nil {
			t.Errorf("Verify after a writable Open: %v", err)
		}
		if err := db.Delete(ctx, store.FullEntry(hs[3], store.Value{})); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = mustOpen(t, dir, nil)
		defer db.Close()
		if ok, err := db.Has(ctx, hs[3]); ok || err != nil {
			t.Errorf("Has(deleted) = %v, %v", ok, err)
		}
		if s, _ := db.Stats(ctx); s.Entries != 9 {
			t.Errorf("Entries after the delete = %d, want 9", s.Entries)
		}
		if err := db.Verify(ctx); err != nil {
			t.Errorf("Verify: %v", err)
		}
	})
}
