package extsort

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

const (
	testFullTag   = 1
	testPrefixTag = 2
)

// testConfig sorts in dir within budget; a value is its Data, and an
// entry costs its key and value bytes.
func testConfig(dir string, budget int64) Config {
	return Config{Dir: dir, Budget: budget, Room: func(int64) error { return nil },
		FullTag: testFullTag, PrefixTag: testPrefixTag,
		AppendValue: func(b []byte, v *store.Value) []byte { return append(b, v.Data...) },
		Cost:        func(n, vlen int) int64 { return int64(n + vlen) }}
}

// modelSort is the obviously correct sort: the first entry of each key,
// as tagged key and value, in key order.
func modelSort(in []store.Entry) [][2]string {
	first := map[string]string{}
	for _, e := range in {
		tag := byte(testFullTag)
		if e.IsPrefix() {
			tag = testPrefixTag
		}
		k := string(append([]byte{tag}, e.Key()...))
		if _, ok := first[k]; !ok {
			first[k] = string(e.Value.Data)
		}
	}
	var out [][2]string
	for k, v := range first {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// randEntries returns n entries drawn from a pool of n/repeat keys (so
// that keys repeat), mixing key-only full entries with full entries with
// a value and prefix entries as mixed says.
func randEntries(r *rand.Rand, n, repeat int, mixed bool) []store.Entry {
	pool := make([]hashkey.Hash, max(n/repeat, 1))
	for i := range pool {
		for j := 0; j < hashkey.Size; j += 8 {
			binary.LittleEndian.PutUint64(pool[i][j:], r.Uint64())
		}
	}
	out := make([]store.Entry, n)
	for i := range out {
		h := pool[r.IntN(len(pool))]
		e := store.Entry{Hash: h}
		if mixed {
			switch r.IntN(4) {
			case 0:
				e.Value.Data = []byte(fmt.Sprint(i))
			case 1:
				e.Len = store.MinPrefixEntryLen + int(h[31])%(store.MaxPrefixEntryLen-store.MinPrefixEntryLen+1)
				e.Value.Data = []byte(fmt.Sprint(i))
			}
		}
		out[i] = e
	}
	return out
}

// The merged output is the model's, whether everything stays in memory or
// spills to several runs, for key-only and mixed input, with repeats
// within and across chunks; Close removes every run file.
func TestSorterAgreesWithModel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		repeat   int
		mixed    bool
		budget   int64
		inMemory bool
		spills   bool
	}{
		{name: "empty", n: 0, repeat: 1, budget: 8192},
		{name: "memory/keys", n: 5000, repeat: 2, inMemory: true},
		{name: "memory/mixed", n: 5000, repeat: 3, mixed: true, inMemory: true},
		// Enough full entries with values for sortRich's buckets.
		{name: "memory/mixed/buckets", n: 60_000, repeat: 3, mixed: true, inMemory: true},
		{name: "one chunk/mixed/buckets", n: 60_000, repeat: 2, mixed: true, budget: 64 << 20},
		{name: "one chunk/mixed", n: 1000, repeat: 2, mixed: true, budget: 1 << 20},
		{name: "runs/keys", n: 20_000, repeat: 2, budget: 8192, spills: true},
		{name: "runs/mixed", n: 20_000, repeat: 3, mixed: true, budget: 8192, spills: true},
		{name: "runs/one key", n: 5000, repeat: 5000, mixed: true, budget: 8192, spills: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.inMemory {
				dir = ""
			}
			in := randEntries(rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.repeat))), tc.n, tc.repeat, tc.mixed)
			s := New(testConfig(dir, tc.budget))
			for i := range in {
				if err := s.Add(&in[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Finish(); err != nil {
				t.Fatal(err)
			}
			if got := len(s.runs) > 0; got != tc.spills {
				t.Fatalf("spilled = %v (%d runs), want %v", got, len(s.runs), tc.spills)
			}
			got := mergeAll(t, s)
			want := modelSort(in)
			if !slices.Equal(got, want) {
				t.Fatalf("merged %d entries, the model %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			var full int64
			for _, kv := range want {
				if kv[0][0] == testFullTag {
					full++
				}
			}
			if s.Full() < full {
				t.Errorf("Full = %d, below the %d unique full entries", s.Full(), full)
			}
			s.Close()
			if dir != "" {
				if names, _ := filepath.Glob(filepath.Join(dir, RunPrefix+"*"+RunSuffix)); len(names) > 0 {
					t.Errorf("run files left after Close: %v", names)
				}
			}
		})
	}
}

// mergeAll returns every key and value s's merger yields, in order.
func mergeAll(t *testing.T, s *Sorter) [][2]string {
	t.Helper()
	m, err := s.Merge()
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]string
	for {
		k, v, ok, err := m.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return got
		}
		got = append(got, [2]string{string(k), string(v)})
	}
}

func firstDiff(a, b [][2]string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A run file cut short fails the merge with an error naming it, and a
// run the gate refuses room for fails Add or Finish with the gate's error.
func TestSorterErrors(t *testing.T) {
	in := randEntries(rand.New(rand.NewPCG(1, 2)), 5000, 1, true)
	t.Run("cut run", func(t *testing.T) {
		dir := t.TempDir()
		s := New(testConfig(dir, 8192))
		defer s.Close()
		for i := range in {
			if err := s.Add(&in[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Finish(); err != nil {
			t.Fatal(err)
		}
		cut := s.runs[len(s.runs)/2].f.Name()
		if err := os.Truncate(cut, int64(runHeaderLen)+40); err != nil {
			t.Fatal(err)
		}
		m, err := s.Merge()
		for err == nil {
			var ok bool
			if _, _, ok, err = m.Next(); !ok && err == nil {
				t.Fatal("the merge ended without an error")
			}
		}
		if !strings.Contains(err.Error(), filepath.Base(cut)) {
			t.Fatalf("error %q does not name %s", err, filepath.Base(cut))
		}
	})
	t.Run("no room", func(t *testing.T) {
		full := errors.New("disk full")
		cfg := testConfig(t.TempDir(), 8192)
		cfg.Room = func(int64) error { return full }
		s := New(cfg)
		defer s.Close()
		var err error
		for i := 0; i < len(in) && err == nil; i++ {
			err = s.Add(&in[i])
		}
		if err == nil {
			err = s.Finish()
		}
		if !errors.Is(err, full) {
			t.Fatalf("err = %v, want the gate's", err)
		}
	})
}

// RemoveRuns removes run files and nothing else.
func TestRemoveRuns(t *testing.T) {
	dir := t.TempDir()
	names := map[string]bool{ // name: removed
		RunPrefix + "123" + RunSuffix:       true,
		RunPrefix + RunSuffix:               true,
		RunPrefix + "123" + RunSuffix + "x": false,
		"urlhash.keep":                      false,
		"urlhash.load.run":                  false,
	}
	for name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveRuns(dir); err != nil {
		t.Fatal(err)
	}
	for name, removed := range names {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := errors.Is(err, os.ErrNotExist); gone != removed {
			t.Errorf("%s: gone = %v, want %v", name, gone, removed)
		}
	}
	if err := RemoveRuns(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("RemoveRuns(missing dir) = %v", err)
	}
}

// richEntrySize is what the chunk's accounting counts a rich entry.
func TestRichEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(richEntry{}); n != richEntrySize {
		t.Errorf("a richEntry takes %d bytes, richEntrySize says %d", n, richEntrySize)
	}
}

// Values fill several slabs, some larger than a slab, and come out whole
// and in key order, kept in memory (gathered into new slabs) and spilled.
func TestSorterSlabs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	in := randEntries(r, 8000, 2, true)
	for i := range in {
		switch {
		case i == 100 || i == 7000:
			in[i].Value.Data = make([]byte, slabSize+1000)
		case len(in[i].Value.Data) > 0:
			in[i].Value.Data = make([]byte, r.IntN(4000))
		}
		for j := range in[i].Value.Data {
			in[i].Value.Data[j] = byte(i + j)
		}
	}
	for _, tc := range []struct {
		name   string
		dir    string
		budget int64
	}{{"memory", "", 0}, {"runs", t.TempDir(), 4 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(testConfig(tc.dir, tc.budget))
			defer s.Close()
			for i := range in {
				if err := s.Add(&in[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Finish(); err != nil {
				t.Fatal(err)
			}
			if tc.dir == "" && len(s.last.vals) < 4 {
				t.Fatalf("%d slabs", len(s.last.vals))
			}
			got := mergeAll(t, s)
			if want := modelSort(in); !slices.Equal(got, want) {
				t.Fatalf("merged %d entries, the model %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}
