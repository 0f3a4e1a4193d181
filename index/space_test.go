package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Every write is refused with store.ErrDiskFull below the reserve, and
// Close still works (without the filter snapshot).
func TestDiskFullRefusesWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	hs := randHashes(rand.New(rand.NewPCG(81, 82)), 100)
	if err := db.Put(ctx, hs[0], store.Value{}); err != nil {
		t.Fatal(err)
	}
	var free int64 = 1 << 40
	db.space.free = func(string) (int64, error) { return free, nil }
	db.space.budget.Store(-1) // read the hook now
	free = db.reserve() - 1
	pe, _ := store.PrefixEntry(hs[3][:5], store.Value{})
	for name, write := range map[string]func() error{
		"Put":        func() error { return db.Put(ctx, hs[1], store.Value{}) },
		"PutPrefix":  func() error { return db.PutPrefix(ctx, hs[1][:4], store.Value{}) },
		"PutBatch":   func() error { return db.PutBatch(ctx, entriesOf(hs[1:3])) },
		"Add":        func() error { _, err := db.Add(ctx, hs[1], store.Value{}); return err },
		"AddBatch":   func() error { _, err := db.AddBatch(ctx, []store.Entry{pe}); return err },
		"Delete":     func() error { return db.Delete(ctx, store.FullEntry(hs[0], store.Value{})) },
		"Load":       func() error { _, err := db.Load(ctx, slices.Values(entriesOf(hs[10:]))); return err },
		"SetProfile": func() error { return db.SetProfile(ctx, "p") },
	} {
		err := write()
		if !errors.Is(err, store.ErrDiskFull) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s below the reserve = %v, want store.ErrDiskFull naming the directory", name, err)
		}
	}
	if ok, err := db.Has(ctx, hs[0]); err != nil || !ok {
		t.Fatalf("Has after refusals = %v, %v", ok, err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close below the reserve: %v", err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	if db.snapshotUsed() {
		t.Error("Close below the reserve wrote the snapshot")
	}
	if ok, _ := db.Has(ctx, hs[1]); ok {
		t.Error("a refused write was stored")
	}
	if ok, _ := db.Has(ctx, hs[0]); !ok {
		t.Error("the write before the refusals was lost")
	}
}

// On a small tmpfs, imports go on until the index refuses one with
// store.ErrDiskFull (never SIGBUS); Close succeeds; after the filesystem
// grows, every acknowledged (synced) entry is there.
func TestDiskFullTmpfs(t *testing.T) {
	ctx := context.Background()
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
			_, err = db.Load(ctx, slices.Values(es))
		} else {
			_, err = db.AddBatch(ctx, es)
		}
		if err == nil {
			err = db.Sync(ctx)
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
	got, err := db.HasBatch(ctx, acked)
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
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != int64(len(acked)) {
		t.Errorf("Entries = %d, want %d", s.Entries, len(acked))
	}
}

// TestDiskFilledByAnotherProcess: another process (the parent) fills the
// filesystem of a writing index (the child) to the last byte; the child's
// writes are refused with store.ErrDiskFull, never SIGBUS, its reads go
// on, and once the space returns its writes succeed again (issue 21, item
// 7).
func TestDiskFilledByAnotherProcess(t *testing.T) {
	if os.Getenv("URLHASH_INDEX_CHILD") == "fill" {
		diskFillChild()
		return
	}
	mnt := mountTmpfs(t, 200<<20)
	ctl := t.TempDir()
	t.Setenv("URLHASH_FILL_CONTROL", ctl)
	cmd, out := startChild(t, "TestDiskFilledByAnotherProcess", "fill", filepath.Join(mnt, "index"))
	expect := func(want ...string) string {
		t.Helper()
		line, err := out.ReadString('\n')
		line = strings.TrimSpace(line)
		if err != nil {
			cmd.Wait()
			t.Fatalf("the child died (%v, %v) where it should say %q", err, cmd.ProcessState, want)
		}
		if !slices.Contains(want, line) {
			t.Fatalf("the child says %q, want one of %q", line, want)
		}
		return line
	}
	expect("ack")
	// Fill the filesystem to its last byte.
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1 << 20, 4 << 10} {
		b := make([]byte, chunk)
		for {
			if _, err := f.Write(b); err != nil {
				break
			}
		}
	}
	f.Close()
	if free, _ := statfsFree(mnt); free != 0 {
		t.Logf("%d bytes still free", free)
	}
	os.WriteFile(filepath.Join(ctl, "filled"), nil, 0o644)
	full := 0
	for range 20 {
		if expect("ack", "full") == "full" {
			full++
		}
	}
	if full == 0 {
		t.Error("no write was refused on a full disk")
	}
	expect("read ok")
	os.Remove(filler)
	os.WriteFile(filepath.Join(ctl, "freed"), nil, 0o644)
	expect("ack")
	expect("closed")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
}

// diskFillChild is the child of TestDiskFilledByAnotherProcess: it writes
// a batch, then 20 more once the disk is full, reads, and writes again once
// the space is back, saying how each went on stdout.
func diskFillChild() {
	ctx := context.Background()
	ctl := os.Getenv("URLHASH_FILL_CONTROL")
	o := &Options{MemTableSize: 4 << 20}
	d := o.withDefaults()
	bo := d.badgerOptions("")
	bo.ValueLogFileSize = 1 << 20
	o.Badger = &bo
	db, err := Open(os.Getenv("URLHASH_INDEX_DIR"), o)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	r := rand.New(rand.NewPCG(7, 7))
	first := randHashes(r, 2000)
	write := func(hs []hashkey.Hash) string {
		_, err := db.AddBatch(ctx, entriesOf(hs))
		if err == nil {
			err = db.Sync(ctx)
		}
		switch {
		case err == nil:
			return "ack"
		case errors.Is(err, store.ErrDiskFull):
			return "full"
		}
		return "error " + err.Error()
	}
	waitFor := func(name string) {
		for {
			if _, err := os.Stat(filepath.Join(ctl, name)); err == nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	fmt.Println(write(first))
	waitFor("filled")
	for range 20 {
		fmt.Println(write(randHashes(r, 2000)))
	}
	if got, err := db.HasBatch(ctx, first); err != nil || !got[0] || !got[len(got)-1] {
		fmt.Println("read failed", err)
	} else {
		fmt.Println("read ok")
	}
	waitFor("freed")
	time.Sleep(50 * time.Millisecond) // the free space is read again
	fmt.Println(write(randHashes(r, 2000)))
	if err := db.Close(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("closed")
	os.Exit(0)
}
