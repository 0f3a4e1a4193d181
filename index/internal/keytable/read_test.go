package keytable

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// clusterKey returns keyOf(i) with the leading 32 bits of keyOf(0).
func clusterKey(i uint64) Key {
	k, k0 := keyOf(i), keyOf(0)
	copy(k[:4], k0[:4])
	return k
}

// writeTestFile writes a key file of the sorted distinct keys (and the
// tombstones dead) under dir and opens it, with the fingerprints writeFile
// returns when withFP, and its reads counted in reads.
func writeTestFile(t testing.TB, dir string, keys, dead []Key, withFP bool, reads *int) *keyFile {
	t.Helper()
	name := filepath.Join(dir, "000001.keys")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	_, fps, err := writeFile(f, uint64(len(keys)), entriesOf(keys, dead))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	kf, err := openFile(osFS{}, name, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kf.release() })
	if withFP {
		kf.setFingerprints(fps)
		if kf.fp.Load() == nil {
			t.Fatalf("writeFile returned %d fingerprints for %d keys", len(fps), len(keys))
		}
	}
	kf.r = countingReader{kf.r, reads}
	return kf
}

// countingReader counts the reads through it in *n.
type countingReader struct {
	r io.ReaderAt
	n *int
}

func (c countingReader) ReadAt(p []byte, off int64) (int, error) {
	*c.n++
	return c.r.ReadAt(p, off)
}

// TestFindBatch runs testdata/lookups.txt (cockroachdb/datadriven): batch
// lookups against one key file, checked against the file's keys and
// against single lookups, with and without the file's fingerprints; and,
// for large enough files, that with them a lookup of an absent key seldom
// reads.
func TestFindBatch(t *testing.T) {
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
	datadriven.RunTest(t, filepath.Join("testdata", "lookups.txt"), func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "batch" {
			t.Fatalf("unknown command %q", td.Cmd)
		}
		var tc lookupCase
		td.ScanArgs(t, "keys", &tc.keys)
		td.MaybeScanArgs(t, "cluster", &tc.cluster)
		var order string
		td.ScanArgs(t, "order", &order)
		if tc.cluster > tc.keys || order != "sorted" && order != "shuffled" {
			t.Fatalf("bad case %s", td.Pos)
		}
		tc.shuffled = order == "shuffled"
		var b strings.Builder
		for _, withFP := range []bool{false, true} {
			fmt.Fprintf(&b, "fingerprints=%v: %s\n", withFP, testFindBatch(t, tc, withFP))
		}
		return b.String()
	})
}

// lookupCase is a case of testdata/lookups.txt: the keys in the file, how
// many of them share their leading 32 bits (a hostile cluster: one bucket
// of them), and the order of the batch.
type lookupCase struct {
	keys, cluster int
	shuffled      bool
}

// testFindBatch runs a case and returns what the batch found, and the
// reads of absent keys by single lookups.
func testFindBatch(t *testing.T, tc lookupCase, withFP bool) string {
	{
		{
			in := map[Key]bool{}
			var keys, dead []Key
			for i := range tc.keys {
				k := keyOf(uint64(i))
				if i < tc.cluster {
					k = clusterKey(uint64(i))
				}
				keys = append(keys, k)
				in[k] = true
			}
			// A few tombstones of keys not live in the file.
			for i := range 3 {
				dead = append(dead, keyOf(uint64(1<<40+i)))
			}
			slices.SortFunc(keys, compareKeys)
			slices.SortFunc(dead, compareKeys)
			var reads int
			kf := writeTestFile(t, t.TempDir(), keys, dead, withFP, &reads)
			batch := slices.Clone(keys)
			for i := range tc.keys {
				if i < tc.cluster {
					batch = append(batch, clusterKey(uint64(1<<32+i)))
				} else {
					batch = append(batch, keyOf(uint64(1<<32+i)))
				}
			}
			batch = append(batch, dead...)
			if tc.shuffled {
				rand.New(rand.NewPCG(1, 2)).Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
			} else {
				slices.SortFunc(batch, compareKeys)
			}
			pending := make([]int, len(batch))
			for i := range pending {
				pending[i] = i
			}
			got := make([]int, len(batch)) // 1 live, -1 deleted, 0 absent
			rest, err := kf.findBatch(batch, pending, &lookupBufs{}, func(i, st int, _ []byte) {
				if got[i] != 0 {
					t.Fatalf("key %d found twice", i)
				}
				got[i] = -1
				if st == stRow {
					got[i] = 1
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSorted(rest) && !tc.shuffled {
				t.Error("the keys not found are out of their order")
			}
			for _, i := range rest {
				if got[i] != 0 {
					t.Fatalf("key %d found and returned as not found", i)
				}
			}
			nFound, absentReads := 0, 0
			for i := range batch {
				want := 0
				switch {
				case in[batch[i]]:
					want = 1
				case slices.Contains(dead, batch[i]):
					want = -1
				}
				if want != 0 {
					nFound++
				}
				if got[i] != want {
					t.Fatalf("findBatch: key %x = %d, want %d", batch[i][:8], got[i], want)
				}
				before := reads
				st, _, _, err := kf.find(&batch[i], nil)
				single := map[int]int{stRow: 1, stDead: -1, stAbsent: 0}[st]
				if err != nil || single != want {
					t.Fatalf("find: key %x = %d, %v, want %d", batch[i][:8], single, err, want)
				}
				if want == 0 {
					absentReads += reads - before
				}
			}
			if len(rest) != len(batch)-nFound {
				t.Fatalf("%d keys returned as not found, want %d", len(rest), len(batch)-nFound)
			}
			// An absent key's bucket holds 4 to 8 keys (1 to 2 in small
			// files): without fingerprints it is read unless empty; with
			// them, when one of its keys shares the absent key's 8 bits.
			absent := len(batch) - nFound
			if tc.cluster == 0 && absent >= 1000 {
				rate := float64(absentReads) / float64(absent)
				if withFP && rate > 0.1 || !withFP && rate < 0.5 {
					t.Errorf("%d reads for %d absent keys (%.3f a key) with fingerprints %v", absentReads, absent, rate, withFP)
				}
			}
			live, deleted := 0, 0
			for _, g := range got {
				switch g {
				case 1:
					live++
				case -1:
					deleted++
				}
			}
			return fmt.Sprintf("%d live, %d deleted, %d absent; %d reads for the absent ones", live, deleted, absent, absentReads)
		}
	}
}

// TestReadError: a key file cut short under an open table makes lookups,
// scans and Verify fail with an error that names it, never answer
// "absent".
func TestReadError(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{DeltaKeys: 1000})
	keys := make([]Key, 3000)
	for i := range keys {
		keys[i] = keyOf(uint64(i))
	}
	if _, err := tb.Add(&Batch{Added: keys}, nil, nil); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	tb = openTest(t, dir, &Options{noMerge: true})
	files, _ := filepath.Glob(filepath.Join(dir, "*.keys"))
	if len(files) != 1 {
		t.Fatalf("%d key files, want 1", len(files))
	}
	if err := os.Truncate(files[0], headerSize+KeySize*10); err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(files[0])
	wantErr := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), base) {
			t.Errorf("%s = %v, want an unexpected EOF naming %s", what, err, base)
		}
	}
	slices.SortFunc(keys, compareKeys)
	k := keys[len(keys)-1]
	_, _, err := tb.Has(&k)
	wantErr("Has", err)
	_, err = tb.HasBatch(keys, make([]bool, len(keys)))
	wantErr("HasBatch", err)
	_, err = tb.Add(&Batch{Added: keys[len(keys)-5:]}, nil, nil)
	wantErr("Add", err)
	wantErr("Scan", tb.Scan(nil, 0, func(*Key) error { return nil }))
	wantErr("Verify", tb.Verify())
}

// TestAddAfter: keys found absent in a view, some added since (then
// merged into a new file, or still in the delta), are added once by
// AddAfter.
func TestAddAfter(t *testing.T) {
	for _, merged := range []bool{false, true} {
		tb := openTest(t, t.TempDir(), &Options{DeltaKeys: 100})
		old := make([]Key, 300)
		for i := range old {
			old[i] = keyOf(uint64(i))
		}
		if _, err := tb.Add(&Batch{Added: old}, nil, nil); err != nil {
			t.Fatal(err)
		}
		waitMerges(tb)
		keys := make([]Key, 50)
		for i := range keys {
			keys[i] = keyOf(uint64(1000 + i))
		}
		slices.SortFunc(keys, compareKeys)
		found := make([]bool, len(keys))
		_, view, err := tb.HasBatchView(keys, found)
		if err != nil || slices.Contains(found, true) {
			t.Fatalf("HasBatchView: %v, %v", found, err)
		}
		// Another writer adds every other key meanwhile.
		var between []Key
		for i := 0; i < len(keys); i += 2 {
			between = append(between, keys[i])
		}
		if _, err := tb.Add(&Batch{Added: between}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if merged {
			more := make([]Key, 200)
			for i := range more {
				more[i] = keyOf(uint64(5000 + i))
			}
			if _, err := tb.Add(&Batch{Added: more}, nil, nil); err != nil {
				t.Fatal(err)
			}
			waitMerges(tb)
			if tb.delta.len() != 0 || tb.frozen != nil {
				t.Fatal("the keys added between are not all in files")
			}
		}
		added := make([]bool, len(keys))
		if _, err := tb.AddAfter(&Batch{Added: keys}, view, added, nil); err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			if want := i%2 == 1; added[i] != want {
				t.Fatalf("merged %v: added[%d] = %v, want %v", merged, i, added[i], want)
			}
		}
		want := int64(len(old) + len(keys))
		if merged {
			want += 200
		}
		if got := tb.Len(); got != want {
			t.Fatalf("merged %v: Len = %d, want %d", merged, got, want)
		}
	}
}

// waitMerges waits until no merge runs and the delta is merged.
func waitMerges(tb *Table) {
	tb.wmu.Lock()
	defer tb.wmu.Unlock()
	for tb.merging {
		tb.mergeDone.Wait()
	}
	if tb.delta.len() > 0 {
		tb.rotateLocked(false)
		for tb.merging {
			tb.mergeDone.Wait()
		}
	}
}

// TestHasAllocs: a single lookup in the files allocates nothing (its
// read buffer is pooled).
func TestHasAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers")
	}
	tb := openTest(t, t.TempDir(), &Options{DeltaKeys: 100})
	keys := make([]Key, 500)
	for i := range keys {
		keys[i] = keyOf(uint64(i))
	}
	if _, err := tb.Add(&Batch{Added: keys}, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitMerges(tb)
	absent := keyOf(1 << 40)
	tb.Has(&keys[0]) // fills the pool
	if n := testing.AllocsPerRun(100, func() {
		if ok, _, err := tb.Has(&keys[7]); !ok || err != nil {
			t.Fatal("a key lost")
		}
		if ok, _, err := tb.Has(&absent); ok || err != nil {
			t.Fatal("an absent key found")
		}
	}); n != 0 {
		t.Fatalf("%v allocations a lookup, want 0", n)
	}
}

// TestLookupBufList: a lookup's buffers outlive a collection (a sync.Pool
// would have let them go), at most lookupBufsKept of them, and a batch's
// outsized candidate ranges are not kept.
func TestLookupBufList(t *testing.T) {
	var l lookupBufList
	// Outsized buffers are let go, even into an empty list.
	l.put(&lookupBufs{spans: make([]span, 0, lookupBufsMaxSpans+1)})
	l.put(&lookupBufs{keys: make([]byte, 0, 2*maxReadKeys*KeySize+1)})
	if lb := l.get(); lb != nil {
		t.Fatalf("kept a buffer of %d spans and %d key bytes", cap(lb.spans), cap(lb.keys))
	}
	var put []*lookupBufs
	for range lookupBufsKept + 2 {
		lb := &lookupBufs{keys: make([]byte, 0, maxReadKeys*KeySize)}
		put = append(put, lb)
		l.put(lb)
	}
	runtime.GC()
	runtime.GC()
	var got []*lookupBufs
	for lb := l.get(); lb != nil; lb = l.get() {
		got = append(got, lb)
	}
	if len(got) != lookupBufsKept {
		t.Fatalf("%d buffers kept, want %d", len(got), lookupBufsKept)
	}
	for _, lb := range got {
		if !slices.Contains(put[:lookupBufsKept], lb) {
			t.Fatalf("got buffers that were not put, or past the first %d", lookupBufsKept)
		}
	}
}
