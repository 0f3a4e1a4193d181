package keytable

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// damagedTable writes n keys merged into one key file, closes the table
// and flips the last byte of the keys picked (indexes into the file's
// sorted keys); it returns the directory, the keys and the file's name.
func damagedTable(t *testing.T, n int, picked []int, more []Key) (string, []Key, string) {
	t.Helper()
	dir := t.TempDir()
	tb, err := Open(dir, &Options{DeltaKeys: n})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = keyOf(uint64(i))
	}
	if _, err := tb.Add(&Batch{Added: keys}, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitMerges(tb)
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if len(more) > 0 {
		// Logged, not merged.
		tb := openTest(t, dir, &Options{noMerge: true})
		if _, err := tb.Add(&Batch{Added: more}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := tb.Close(); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.keys"))
	if len(files) != 1 {
		t.Fatalf("%d key files, want 1", len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(keys, compareKeys)
	f, err := readFile(strings.NewReader(string(b)), int64(len(b)), files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range picked {
		// The key's last byte, wherever the format puts it.
		h := &f.hdr
		off := int64(headerSize1 + i*KeySize + KeySize - 1)
		if h.pageShift != 0 {
			off = h.pageOff(uint64(i)>>h.pageShift) + int64(i&(1<<h.pageShift-1)*h.lay.rw) + KeySize - 1
		}
		b[off] ^= 0x01
	}
	if err := os.WriteFile(files[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, keys, filepath.Base(files[0])
}

// wantCorrupt fails unless err wraps store.ErrCorrupt and names file.
func wantCorrupt(t *testing.T, what string, err error, file string) {
	t.Helper()
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), file) {
		t.Errorf("%s = %v, want store.ErrCorrupt naming %s", what, err, file)
	}
}

// TestDamagedKeysReported (issue 34, item 1): the last byte of 64 keys of
// a key file flipped. Every read of them, one at a time, in a batch, in a
// scan, and a write that looks them up, is an error naming the file,
// never "absent"; keys in undamaged pages still answer.
func TestDamagedKeysReported(t *testing.T) {
	picked := make([]int, 64)
	for i := range picked {
		picked[i] = 100 + 97*i
	}
	dir, keys, name := damagedTable(t, 10000, picked, nil)
	tb := openTest(t, dir, &Options{noMerge: true})
	for _, i := range picked {
		ok, _, err := tb.Has(&keys[i])
		if err == nil {
			t.Fatalf("Has of damaged key %d = %v, no error", i, ok)
		}
		wantCorrupt(t, "Has", err, name)
		_, _, err = tb.Get(&keys[i], nil, true)
		wantCorrupt(t, "Get", err, name)
	}
	found := make([]bool, len(keys))
	_, err := tb.HasBatch(keys, found)
	wantCorrupt(t, "HasBatch", err, name)
	_, err = tb.Add(&Batch{Added: keys[picked[0] : picked[0]+1]}, nil, nil)
	wantCorrupt(t, "Add", err, name)
	wantCorrupt(t, "Scan", tb.Scan(nil, 0, func(*Key) error { return nil }), name)
	wantCorrupt(t, "Verify", tb.Verify(), name)
	// A key in an undamaged page answers.
	if ok, _, err := tb.Has(&keys[0]); !ok || err != nil {
		t.Errorf("Has(an undamaged key) = %v, %v", ok, err)
	}
}

// TestMergeRefusesDamage (issue 34, item 2): a merge that reads a damaged
// key file fails naming it, installs nothing, and later writes report
// the failure; the damaged file stays (read-only opens name it); nothing
// is laundered into a file that verifies.
func TestMergeRefusesDamage(t *testing.T) {
	// Keys enough for the merge to join the damaged file (a third of
	// it), logged before the damage.
	more := make([]Key, 150)
	for i := range more {
		more[i] = keyOf(uint64(1<<40 + i))
	}
	dir, keys, name := damagedTable(t, 300, []int{7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, more)
	// A writable open merges the log it replayed with the file.
	tb, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	wantCorrupt(t, "the merge", mergeError(tb), name)
	_, err = tb.Add(&Batch{Added: []Key{keyOf(1 << 41)}}, nil, nil)
	wantCorrupt(t, "a write after the merge failed", err, name)
	files, _ := filepath.Glob(filepath.Join(dir, "*.keys"))
	if len(files) != 1 || filepath.Base(files[0]) != name {
		t.Fatalf("key files %v after a failed merge, want only %s", files, name)
	}
	ro, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	wantCorrupt(t, "Verify", ro.Verify(), name)
	_, err = ro.HasBatch(keys, make([]bool, len(keys)))
	wantCorrupt(t, "HasBatch", err, name)
}

// TestMergeRefusesDamagedVersion1: a version 1 file (one checksum for its
// keys) with a flipped key is refused by the merge that would rewrite it,
// once the merge has read it whole.
func TestMergeRefusesDamagedVersion1(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "v1.keys"))
	if err != nil {
		t.Fatal(err)
	}
	b[headerSize1+5*KeySize+31] ^= 1
	if err := os.WriteFile(fileName(dir, 1), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(osFS{}, dir, &manifest{logStart: 1, nextNum: 2, files: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	// A writable open starts the merge that rewrites version 1 files.
	tb, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	wantCorrupt(t, "the merge", mergeError(tb), "000001.keys")
	if files, _ := filepath.Glob(filepath.Join(dir, "*.keys")); len(files) != 1 {
		t.Fatalf("key files %v after a failed merge", files)
	}
}

// mergeError waits for the merge running, if any, and returns the error
// that stopped merges (nil: none).
func mergeError(tb *Table) error {
	tb.wmu.Lock()
	defer tb.wmu.Unlock()
	for tb.merging {
		tb.mergeDone.Wait()
	}
	return tb.mergeErr
}
