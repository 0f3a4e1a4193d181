package index

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Every write is refused with store.ErrDiskFull below the reserve, and
// Close still works (without the filter snapshot).
func TestDiskFullRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	hs := randHashes(rand.New(rand.NewPCG(81, 82)), 100)
	if err := db.Put(hs[0], store.Value{}); err != nil {
		t.Fatal(err)
	}
	var free int64 = 1 << 40
	db.space.free = func(string) (int64, error) { return free, nil }
	db.space.budget.Store(-1) // read the hook now
	free = db.reserve() - 1
	pe, _ := store.PrefixEntry(hs[3][:5], store.Value{})
	for name, write := range map[string]func() error{
		"Put":        func() error { return db.Put(hs[1], store.Value{}) },
		"PutPrefix":  func() error { return db.PutPrefix(hs[1][:4], store.Value{}) },
		"PutBatch":   func() error { return db.PutBatch(entriesOf(hs[1:3])) },
		"Add":        func() error { _, err := db.Add(hs[1], store.Value{}); return err },
		"AddBatch":   func() error { _, err := db.AddBatch([]store.Entry{pe}); return err },
		"Delete":     func() error { return db.Delete(store.FullEntry(hs[0], store.Value{})) },
		"Load":       func() error { _, err := db.Load(slices.Values(entriesOf(hs[10:]))); return err },
		"SetProfile": func() error { return db.SetProfile("p") },
	} {
		err := write()
		if !errors.Is(err, store.ErrDiskFull) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s below the reserve = %v, want store.ErrDiskFull naming the directory", name, err)
		}
	}
	if ok, err := db.Has(hs[0]); err != nil || !ok {
		t.Fatalf("Has after refusals = %v, %v", ok, err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close below the reserve: %v", err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	if db.loadedSnapshot {
		t.Error("Close below the reserve wrote the snapshot")
	}
	if ok, _ := db.Has(hs[1]); ok {
		t.Error("a refused write was stored")
	}
	if ok, _ := db.Has(hs[0]); !ok {
		t.Error("the write before the refusals was lost")
	}
}

// On a small tmpfs, imports go on until the index refuses one with
// store.ErrDiskFull (never SIGBUS); Close succeeds; after the filesystem
// grows, every acknowledged (synced) entry is there.
func TestDiskFullTmpfs(t *testing.T) {
	const size = 160 << 20
	mnt := mountTmpfs(t, size)
	dir := filepath.Join(mnt, "index")
	o := &Options{MemTableSize: 1 << 20}
	d := o.withDefaults()
	bo := d.badgerOptions("")
	bo.ValueLogFileSize = 1 << 20
	o.Badger = &bo
	db := mustOpen(t, dir, o)
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	r := rand.New(rand.NewPCG(91, 92))
	var acked []hashkey.Hash
	var refusal error
	// Loads and batches until the first refusal (a load, which needs room
	// for the tree it rewrites), then batches until one is refused too.
	loads := true
	for i := 0; ; i++ {
		hs := randHashes(r, 10_000)
		es := make([]store.Entry, len(hs))
		for j, h := range hs {
			v := make([]byte, 200) // incompressible
			for k := range v {
				v[k] = byte(r.Uint32())
			}
			es[j] = store.FullEntry(h, store.Value{Data: v})
		}
		var err error
		if loads && i%2 == 0 {
			_, err = db.Load(slices.Values(es))
		} else {
			_, err = db.AddBatch(es)
		}
		if err == nil {
			err = db.Sync()
		}
		switch {
		case err == nil:
			acked = append(acked, hs...)
			continue
		case !errors.Is(err, store.ErrDiskFull):
			t.Fatalf("batch %d: %v", i, err)
		}
		t.Logf("batch %d refused: %v", i, err)
		refusal = err
		if !loads {
			break
		}
		loads = false
		if i > 200 {
			t.Fatal("the disk never filled")
		}
	}
	free, _ := statfsFree(mnt)
	t.Logf("%d bytes free of %d after the last refusal", free, int64(size))
	t.Logf("refused after %d acknowledged entries: %v", len(acked), refusal)
	if !strings.Contains(refusal.Error(), dir) {
		t.Errorf("the refusal does not name the index: %v", refusal)
	}
	closed = true
	if err := db.Close(); err != nil {
		t.Fatalf("Close on a full disk: %v", err)
	}
	remount(t, mnt, "size=1g")
	db = mustOpen(t, dir, o)
	defer db.Close()
	got, err := db.HasBatch(acked)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, ok := range got {
		if !ok {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged entries lost", lost, len(acked))
	}
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	if s, _ := db.Stats(); s.Entries != int64(len(acked)) {
		t.Errorf("Entries = %d, want %d", s.Entries, len(acked))
	}
}
