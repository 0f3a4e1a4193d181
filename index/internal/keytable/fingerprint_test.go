package keytable

import (
	"slices"
	"testing"
	"time"
)

// TestFingerprintsBuilt: a merge installs the fingerprints of the file
// it writes; a file opened from disk gets them once lookups have searched
// it fpAfter times, the same bytes, and lookups answer the same before
// and after.
func TestFingerprintsBuilt(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{DeltaKeys: 4000})
	keys := make([]Key, 30000)
	in := map[Key]bool{}
	for i := range keys {
		keys[i] = keyOf(uint64(i))
		in[keys[i]] = true
	}
	for i := 0; i < len(keys); i += 1000 {
		if _, err := tb.Add(&Batch{Added: keys[i : i+1000]}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	tb = openTest(t, dir, &Options{noMerge: true}) // the files as opened
	if len(tb.files) == 0 {
		t.Fatal("no key files")
	}
	for _, f := range tb.files {
		if f.fp.Load() != nil {
			t.Fatalf("%s has fingerprints as it is opened", f.name)
		}
	}
	// Present and absent keys, until every file is searched enough.
	batch := slices.Clone(keys)
	for i := range len(keys) {
		batch = append(batch, keyOf(uint64(1<<40+i)))
	}
	slices.SortFunc(batch, compareKeys)
	deadline := time.Now().Add(20 * time.Second)
	for {
		found := make([]bool, len(batch))
		if _, err := tb.HasBatch(batch, found); err != nil {
			t.Fatal(err)
		}
		for i := range batch {
			if found[i] != in[batch[i]] {
				t.Fatalf("HasBatch: key %x = %v", batch[i][:8], found[i])
			}
		}
		built := 0
		for _, f := range tb.files {
			if f.fp.Load() != nil {
				built++
			}
		}
		if built == len(tb.files) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d files have fingerprints after lookups", built, len(tb.files))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, f := range tb.files {
		w := &keyWindow{f: f}
		fps := *f.fp.Load()
		for i := range int(f.hdr.count) {
			if got, want := fps[i], fingerprint((*Key)(w.at(i))); got != want {
				t.Fatalf("%s: key %d: fingerprint %#x, want %#x", f.name, i, got, want)
			}
		}
	}
	// A merge installs the fingerprints of the file it writes (a few
	// keys, so that no lookup builds them): the newest.
	tb.Close()
	tb = openTest(t, dir, nil)
	if _, err := tb.Add(&Batch{Added: []Key{keyOf(1 << 41)}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitMerges(tb)
	tb.mu.RLock()
	defer tb.mu.RUnlock()
	if f := tb.files[len(tb.files)-1]; f.fp.Load() == nil {
		t.Errorf("%s, written by a merge, has no fingerprints", f.name)
	}
}

// TestCloseWhileBuilding: Close stops a fingerprint build and waits for
// it (the race detector and the goroutine's reads of a closed file are the
// test).
func TestCloseWhileBuilding(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{DeltaKeys: 20000})
	keys := make([]Key, 40000)
	for i := range keys {
		keys[i] = keyOf(uint64(i))
	}
	if _, err := tb.Add(&Batch{Added: keys}, nil, nil); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	for range 5 {
		tb = openTest(t, dir, nil)
		found := make([]bool, len(keys))
		if _, err := tb.HasBatch(keys, found); err != nil {
			t.Fatal(err)
		}
		if err := tb.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeltaKeys: by default the delta grows with the table, between its
// bounds; a size given in Options is kept at every size.
func TestDeltaKeys(t *testing.T) {
	for _, tc := range []struct {
		opt  int
		live int64
		want int
	}{
		{0, 0, DefaultDeltaKeys},
		{0, 500_000, DefaultDeltaKeys},
		{0, 1_600_000, 100_000},
		{0, 4_194_304, maxAutoDeltaKeys},
		{0, 100_000_000, maxAutoDeltaKeys},
		{1000, 0, 1000},
		{1000, 100_000_000, 1000},
	} {
		tb := &Table{opts: Options{DeltaKeys: tc.opt}}
		if got := tb.deltaKeysFor(tc.live); got != tc.want {
			t.Errorf("DeltaKeys %d, %d keys: delta of %d, want %d", tc.opt, tc.live, got, tc.want)
		}
	}
}
