package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// mountTmpfs mounts a tmpfs of size bytes under t.TempDir and unmounts it
// at the end of the test. It skips the test, saying why, when it cannot
// (not root, or no mount permission).
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("skipped: cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func remount(t *testing.T, dir, opts string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+opts, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, opts, err, out)
	}
}

// makeStale writes a key behind the index's back (plain Badger), so that
// its filter snapshot is stale and the next Open rebuilds the filter.
func makeStale(t *testing.T, dir string) {
	t.Helper()
	bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	h := hashOf("written behind the index's back")
	k := fullKey(&h)
	if err := bdb.Update(func(txn *badger.Txn) error { return txn.Set(k[:], nil) }); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
}

// readEverything runs every read operation once.
func readEverything(t *testing.T, db *DB, hs []hashkey.Hash) {
	ctx := context.Background()
	t.Helper()
	for _, h := range hs[:10] {
		if ok, err := db.Has(ctx, h); err != nil || !ok {
			t.Fatalf("Has = %v, %v", ok, err)
		}
	}
	if _, err := db.HasBatch(ctx, hs); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Match(ctx, hs[0]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Count(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.ForEach(ctx, func(store.Entry) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// A read-only index changes no byte of its directory, also when it must
// rebuild the filter (stale or damaged snapshot), and works on a read-only
// filesystem.
func TestReadOnlyWritesNothing(t *testing.T) {
	ctx := context.Background()
	hs := randHashes(rand.New(rand.NewPCG(71, 72)), 20000)
	build := func(t *testing.T, dir string) {
		db := mustOpen(t, dir, &Options{MemTableSize: 1 << 20})
		defer db.Close()
		if _, err := db.Load(ctx, slices.Values(entriesOf(hs[:15000]))); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AddBatch(ctx, entriesOf(hs[15000:])); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, stale := range []bool{false, true} {
		name := "current snapshot"
		if stale {
			name = "stale snapshot"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			build(t, dir)
			if stale {
				makeStale(t, dir)
			}
			before := snapshotDir(t, dir)
			info, _ := os.Stat(dir)
			db := mustOpen(t, dir, &Options{ReadOnly: true})
			if db.snapshotUsed() == stale {
				t.Fatalf("loadedSnapshot = %v", db.snapshotUsed())
			}
			readEverything(t, db, hs)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if after := snapshotDir(t, dir); after != before {
				t.Errorf("a read-only session changed the directory:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if info2, _ := os.Stat(dir); !info2.ModTime().Equal(info.ModTime()) {
				t.Error("a read-only session changed the directory's mtime")
			}
		})
	}
	t.Run("read-only filesystem", func(t *testing.T) {
		mnt := mountTmpfs(t, 512<<20) // above the free-space reserve of the default options
		dir := filepath.Join(mnt, "index")
		build(t, dir)
		makeStale(t, dir) // the filter is rebuilt, in memory only
		remount(t, mnt, "ro")
		defer remount(t, mnt, "rw")
		db := mustOpen(t, dir, &Options{ReadOnly: true})
		defer db.Close()
		readEverything(t, db, hs)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		// A writable Open says why it cannot.
		if _, err := Open(dir, nil); err == nil {
			t.Fatal("writable Open on a read-only filesystem succeeded")
		} else if !errors.Is(err, syscall.EROFS) {
			t.Logf("writable Open: %v", err)
		}
	})
}

// Open creates an index only in a new or empty directory; ReadOnly and
// MustExist never create anything.
func TestOpenCreatesOnlyWhereAllowed(t *testing.T) {
	t.Run("foreign directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("notes"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshotDir(t, dir)
		_, err := Open(dir, nil)
		if !errors.Is(err, store.ErrNotIndex) || !strings.Contains(err.Error(), "README.md") {
			t.Fatalf("Open of a directory holding README.md = %v, want store.ErrNotIndex naming it", err)
		}
		for _, o := range []*Options{{ReadOnly: true}, {MustExist: true}} {
			if _, err := Open(dir, o); !errors.Is(err, store.ErrNoIndex) {
				t.Fatalf("Open(%+v) = %v, want store.ErrNoIndex", o, err)
			}
		}
		if after := snapshotDir(t, dir); after != before {
			t.Errorf("refused Opens changed the directory:\n%s", after)
		}
	})
	t.Run("empty or missing directory", func(t *testing.T) {
		for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "a", "b")} {
			db, err := Open(dir, nil)
			if err != nil {
				t.Fatalf("Open(%s): %v", dir, err)
			}
			db.Close()
		}
	})
	t.Run("read-only and must-exist create nothing", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "none")
		for _, o := range []*Options{{ReadOnly: true}, {MustExist: true}} {
			if _, err := Open(dir, o); !errors.Is(err, store.ErrNoIndex) {
				t.Fatalf("Open(%+v) = %v, want store.ErrNoIndex", o, err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Open(%+v) created the directory", o)
			}
			empty := t.TempDir()
			if _, err := Open(empty, o); !errors.Is(err, store.ErrNoIndex) {
				t.Fatalf("Open(%+v) of an empty directory = %v", o, err)
			}
			if ents, _ := os.ReadDir(empty); len(ents) != 0 {
				t.Fatalf("Open(%+v) wrote %v", o, ents)
			}
		}
	})
	t.Run("data files without a MANIFEST", func(t *testing.T) {
		dir := t.TempDir()
		mustOpen(t, dir, nil).Close()
		hs := randHashes(rand.New(rand.NewPCG(1, 1)), 1000)
		db := mustOpen(t, dir, nil)
		if _, err := db.Load(context.Background(), slices.Values(entriesOf(hs))); err != nil {
			t.Fatal(err)
		}
		db.Close()
		os.Remove(filepath.Join(dir, badger.ManifestFilename))
		before := snapshotDir(t, dir)
		for _, o := range []*Options{nil, {ReadOnly: true}, {MustExist: true}} {
			if _, err := Open(dir, o); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "MANIFEST") {
				t.Fatalf("Open(%+v) = %v, want store.ErrCorrupt naming MANIFEST", o, err)
			}
		}
		if after := snapshotDir(t, dir); after != before {
			t.Errorf("refused Opens changed the directory")
		}
	})
}

// After a crash, a table newer than every listed one is an interrupted
// flush, compaction or load: a writable Open lets Badger remove it. The
// same file after a clean Close, an older one, or any under a read-only
// Open is refused.
func TestCrashLeftoverTables(t *testing.T) {
	ctx := context.Background()
	hs := randHashes(rand.New(rand.NewPCG(3, 4)), 5000)
	if os.Getenv("URLHASH_INDEX_CHILD") == "leftover" {
		db, err := Open(os.Getenv("URLHASH_INDEX_DIR"), nil)
		if err == nil {
			_, err = db.AddBatch(ctx, entriesOf(hs[4000:]))
		}
		fmt.Println("open", err)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	if _, err := db.Load(ctx, slices.Values(entriesOf(hs[:4000]))); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(largestTable(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	leftover := table.NewFilename(500, dir)
	if err := os.WriteFile(leftover, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, nil); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "000500.sst") {
		t.Fatalf("Open with an unlisted table after a clean Close = %v, want store.ErrCorrupt naming it", err)
	}
	os.Remove(leftover)

	cmd, out := startChild(t, "TestCrashLeftoverTables", "leftover", dir)
	if line, _ := out.ReadString('\n'); strings.TrimSpace(line) != "open <nil>" {
		t.Fatalf("child: %q", line)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if err := os.WriteFile(leftover, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, &Options{ReadOnly: true}); !errors.Is(err, store.ErrNeedsRecovery) || !strings.Contains(err.Error(), "000500.sst") {
		t.Fatalf("read-only Open after a crash with an unlisted table = %v, want store.ErrNeedsRecovery naming it (Badger would delete it; a writable open recovers)", err)
	}
	db = mustOpen(t, dir, nil)
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the leftover table is still there: %v", err)
	}
	got, err := db.HasBatch(ctx, hs)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("key %d lost", i)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// The integrity checks cost an absent-key lookup nothing when the filter
// answers it (no allocation, no table read); a false positive of the
// filter, which Badger does not find, has the tables that could hold it
// verified (a damaged block reads as "absent") and is answered "absent".
func TestAbsentLookupAllocs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hs := randHashes(rand.New(rand.NewPCG(121, 122)), 20000)
	// Every entry in Badger's tables: the tables the guard verifies.
	db := mustOpen(t, dir, &Options{NoKeyTable: true})
	if _, err := db.Load(ctx, slices.Values(entriesOf(hs[:10000]))); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = mustOpen(t, dir, &Options{ReadOnly: true})
	defer db.Close()
	var absent []hashkey.Hash
	db.waitFilter()
	db.fmu.RLock()
	for _, h := range hs[10000:] {
		if !db.f.MayHaveFull(&h) {
			absent = append(absent, h)
		}
	}
	db.fmu.RUnlock()
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		db.Has(ctx, absent[i%len(absent)])
		db.Get(ctx, absent[i%len(absent)])
		db.Match(ctx, absent[i%len(absent)])
		i++
	}); n != 0 {
		t.Errorf("Has+Get+Match of a key the filter rejects: %.1f allocations, want 0", n)
	}
	// The tables are not verified yet (a read-only Open verifies none):
	// the false positive below goes through the guard's check.
	if db.st.guard.IsIdle() {
		t.Fatal("the guard has no table to verify")
	}
	// A twin of a stored key (the same leading bits, another last byte)
	// is a false positive of the filter, whatever its width.
	twin := hs[0]
	twin[hashkey.Size-1] ^= 0xff
	db.fmu.RLock()
	maybe := db.f.MayHaveFull(&twin)
	db.fmu.RUnlock()
	if !maybe {
		t.Fatal("the filter rejects a twin of a stored key")
	}
	for _, lookup := range []func() (bool, error){
		func() (bool, error) { return db.Has(ctx, twin) },
		func() (bool, error) { _, err := db.Get(ctx, twin); return false, ignoreNotFound(err) },
		func() (bool, error) { _, ok, err := db.Match(ctx, twin); return ok, err },
	} {
		if ok, err := lookup(); ok || err != nil {
			t.Fatalf("lookup of a false positive = %v, %v; want absent", ok, err)
		}
	}
}

// ignoreNotFound returns err unless it is store.ErrNotFound.
func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// Verify lists every problem it finds, not the first: two damaged
// tables, wrong counts, a filter that misses keys.
//
// Its index is built for it, two loads of 6,000 entries (Load writes
// sorted tables, the same at every run), and each table is damaged in the
// middle of its data: a block neither its last (Open reads it) nor the
// one holding the metadata keys. It used the shared damage index, whose
// tables come from memtable flushes and Close's compaction: under load
// one table (no second to damage) or a second so small that a third of
// its size fell in its last block, which Open refuses: 1 run in 6.
func TestVerifyListsEveryProblem(t *testing.T) {
	ctx := context.Background()
	c := damageConfigs[0]
	dir := t.TempDir()
	o := damageOptions(c, false)
	o.NoKeyTable = true
	hs := randHashes(rand.New(rand.NewPCG(71, 72)), 12000)
	for _, part := range [][]hashkey.Hash{hs[:6000], hs[6000:]} {
		db := mustOpen(t, dir, o)
		if _, err := db.Load(ctx, slices.Values(entriesOf(part))); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	slices.SortFunc(ssts, func(a, b string) int {
		ia, _ := os.Stat(a)
		ib, _ := os.Stat(b)
		return int(ib.Size() - ia.Size())
	})
	if len(ssts) < 2 {
		t.Fatalf("%d tables, want 2 or more", len(ssts))
	}
	for _, p := range ssts[:2] {
		blocks, data := 0, 0
		err := integrity.WithTable(p, c.compression, o.Badger.BlockSize, options.OnBlockRead, func(tb *table.Table) error {
			blocks = len(tb.KeySplits(math.MaxInt32, nil))
			data = int(tb.Size()) - tb.IndexSize()
			return nil
		})
		if err != nil || blocks < 3 {
			t.Fatalf("%s: %d blocks, %v; want 3 or more", filepath.Base(p), blocks, err)
		}
		rewriteFile(t, p, func(b []byte) []byte {
			for i := range 64 {
				b[data/2+i] ^= 0x3c
			}
			return b
		})
	}
	db := mustOpen(t, dir, damageOptions(c, true))
	defer db.Close()
	// And two problems of the metadata: wrong counts, a filter that
	// misses keys.
	db.waitFilter()
	db.entries.Add(5)
	db.f = filter.New(db.f.Bits())
	err := db.Verify(ctx)
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Verify = %v, want store.ErrCorrupt", err)
	}
	msg := err.Error()
	for _, want := range []string{filepath.Base(ssts[0]), filepath.Base(ssts[1]), "counted", "the filter misses", "blocks fail their checksum"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Verify's error does not mention %q:\n%s", want, msg)
		}
	}
}

// TestWritableOpenOfDamagedTable: Badger compacts as soon as it opens
// writable, and a compaction keeps what it could read of a damaged table
// and deletes the table. A writable Open must therefore refuse a damaged
// table before Badger runs, and leave every file as it was.
func TestWritableOpenOfDamagedTable(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var entries []store.Entry
	for i := range 200000 {
		entries = append(entries, store.FullEntry(hashOf(fmt.Sprint("url", i)), store.Value{}))
	}
	if _, err := db.Load(context.Background(), slices.Values(entries)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var largest string
	var size int64
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	for _, f := range ssts {
		if fi, err := os.Stat(f); err == nil && fi.Size() > size {
			largest, size = f, fi.Size()
		}
	}
	f, err := os.OpenFile(largest, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, 64), size/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := snapshotDir(t, dir)
	_, err = Open(dir, nil)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(largest)) {
		t.Fatalf("writable Open of a damaged table: %v, want ErrCorrupt naming %s", err, filepath.Base(largest))
	}
	if after := snapshotDir(t, dir); after != before {
		t.Fatalf("the refused Open changed the directory:\n%s\n%s", before, after)
	}
}

// TestEmptyMemtableLog: a crash between creating a memtable log and
// sizing it leaves a file of zero bytes, which Badger cannot open past. A
// writable Open removes it (it holds no record) and opens with every
// entry; a read-only one reports that the index needs recovery.
func TestEmptyMemtableLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	h := hashOf("kept")
	if err := db.Put(ctx, h, store.Value{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "00099.mem")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, &Options{ReadOnly: true}); !errors.Is(err, store.ErrNeedsRecovery) {
		t.Fatalf("read-only Open with an empty memtable log: %v, want ErrNeedsRecovery", err)
	}
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("writable Open with an empty memtable log: %v", err)
	}
	defer db.Close()
	if ok, err := db.Has(ctx, h); !ok || err != nil {
		t.Fatalf("Has after the Open = %v, %v", ok, err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the empty log is still there: %v", err)
	}
}
