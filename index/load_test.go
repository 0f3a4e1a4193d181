package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/extsort"
	"github.com/urlhash/urlhash/store"
)

// loadModel is the obviously correct Load: a map, the first of repeated
// keys winning, stored values kept.
type loadModel map[string]store.Value

func (m loadModel) load(in []store.Entry) store.LoadResult {
	var res store.LoadResult
	for i := range in {
		k := string(in[i].Key()) + fmt.Sprint(in[i].IsPrefix())
		if _, ok := m[k]; ok {
			res.Present++
			continue
		}
		m[k] = store.Value{Text: bytes.Clone(in[i].Value.Text), Data: bytes.Clone(in[i].Value.Data)}
		res.Added++
	}
	return res
}

// contents returns what the index holds, keyed as loadModel.
func contents(t *testing.T, db *DB) loadModel {
	t.Helper()
	got := loadModel{}
	err := db.ForEach(context.Background(), func(e store.Entry) error {
		got[string(e.Key())+fmt.Sprint(e.IsPrefix())] = store.Value{Text: bytes.Clone(e.Value.Text), Data: bytes.Clone(e.Value.Data)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (m loadModel) counts() (full, prefix int64) {
	for k := range m {
		if k[len(k)-4:] == "true" {
			prefix++
		} else {
			full++
		}
	}
	return full, prefix
}

// loadInput returns n entries: new keys and repeats (of this input and of
// pool), key-only or (when mixed) with values, and prefix entries.
func loadInput(r *rand.Rand, pool *[]hashkey.Hash, n int, mixed bool) []store.Entry {
	out := make([]store.Entry, 0, n)
	for i := range n {
		var h hashkey.Hash
		if len(*pool) > 0 && r.IntN(10) < 3 {
			h = (*pool)[r.IntN(len(*pool))]
		} else {
			h = randHashes(r, 1)[0]
			*pool = append(*pool, h)
		}
		e := store.Entry{Hash: h}
		if mixed {
			switch r.IntN(10) {
			case 0, 1:
				e.Value = store.Value{Text: fmt.Appendf(nil, "v%d", i), Data: []byte{byte(i)}}
			case 2:
				pe, _ := store.PrefixEntry(h[:4+r.IntN(28)], store.Value{})
				if r.IntN(2) == 0 {
					pe.Value.Text = fmt.Appendf(nil, "p%d", i)
				}
				e = pe
			}
		}
		out = append(out, e)
	}
	return out
}

func runFiles(t *testing.T, dir string) []string {
	t.Helper()
	if dir == "" {
		return nil
	}
	names, err := filepath.Glob(filepath.Join(dir, extsort.RunPrefix+"*"+extsort.RunSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A Load larger than its memory (many runs on disk) gives the same index
// as one in memory and as the model: entries, values (first wins, stored
// values kept), counts and results.
func TestLoadExternalSort(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		mem    bool
		budget int64
		mixed  bool
	}{
		{name: "keys/spilled", budget: 4096},
		{name: "mixed/spilled", budget: 4096, mixed: true},
		{name: "mixed/one-chunk", mixed: true},
		{name: "mixed/in-memory", mem: true, mixed: true},
		{name: "keys/spilled-larger", budget: 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t, tc.mem, &Options{LoadMemory: tc.budget})
			r := rand.New(rand.NewPCG(41, 42))
			var pool []hashkey.Hash
			model := loadModel{}
			for step := range 3 {
				in := loadInput(r, &pool, 3000, tc.mixed)
				want := model.load(in)
				var yielded int
				res, err := db.Load(ctx, func(yield func(store.Entry) bool) {
					for _, e := range in {
						if yielded++; yielded == len(in) && tc.budget > 0 && tc.budget < 1<<20 && len(runFiles(t, db.Path())) == 0 {
							t.Error("no run file while loading more than the budget")
						}
						if !yield(e) {
							return
						}
					}
				})
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if res.Added != want.Added || res.Present != want.Present {
					t.Fatalf("step %d: Load = %+v, want added %d present %d", step, res, want.Added, want.Present)
				}
				if got := contents(t, db); !modelEqual(got, model) {
					t.Fatalf("step %d: the index holds %d keys, not the model's %d (or other values)", step, len(got), len(model))
				}
				full, prefix := model.counts()
				if s, _ := db.Stats(ctx); s.Entries != full || s.PrefixEntries != prefix {
					t.Fatalf("step %d: counts %d/%d, want %d/%d", step, s.Entries, s.PrefixEntries, full, prefix)
				}
				if names := runFiles(t, db.Path()); len(names) > 0 {
					t.Fatalf("step %d: run files left: %v", step, names)
				}
				// An ordinary write between loads leaves a memtable with
				// data: the next load reopens Badger or falls back.
				extra := randHashes(r, 1)[0]
				pool = append(pool, extra)
				model.load([]store.Entry{{Hash: extra, Value: store.Value{Text: []byte("put")}}})
				if _, err := db.Add(ctx, extra, store.Value{Text: []byte("put")}); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Verify(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func modelEqual(a, b loadModel) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !bytes.Equal(v.Text, w.Text) || !bytes.Equal(v.Data, w.Data) {
			return false
		}
	}
	return true
}

// A bad entry late in the input, after runs were spilled, fails the load
// with nothing written into the index and no run file left.
func TestLoadBadEntryLateWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{LoadMemory: 4096})
	defer db.Close()
	hs := randHashes(rand.New(rand.NewPCG(43, 44)), 5000)
	if err := db.Put(ctx, hs[0], store.Value{}); err != nil {
		t.Fatal(err)
	}
	spilled := 0
	_, err := db.Load(ctx, func(yield func(store.Entry) bool) {
		for _, h := range hs[1:] {
			if !yield(store.Entry{Hash: h}) {
				return
			}
		}
		spilled = len(runFiles(t, dir))
		yield(store.Entry{Hash: hs[1], Len: 3}) // a 3-byte prefix entry
	})
	if !errors.Is(err, store.ErrPrefixLength) {
		t.Fatalf("Load with a bad last entry = %v, want store.ErrPrefixLength", err)
	}
	if spilled == 0 {
		t.Fatal("the load spilled no run before the bad entry")
	}
	if got := contents(t, db); len(got) != 1 {
		t.Fatalf("the index holds %d entries after a failed load, want 1", len(got))
	}
	if s, _ := db.Stats(ctx); s.Entries != 1 {
		t.Fatalf("Entries = %d after a failed load, want 1", s.Entries)
	}
	if names := runFiles(t, dir); len(names) > 0 {
		t.Fatalf("run files left: %v", names)
	}
}

// A spill is refused under the free-space reserve, with nothing written.
func TestLoadSpillDiskFull(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{LoadMemory: 4096})
	defer db.Close()
	var free int64 = 1 << 40
	db.space.free = func(string) (int64, error) { return free, nil }
	db.space.budget.Store(-1)
	free = db.reserve() + 1000 // room for a run or two, not for all
	hs := randHashes(rand.New(rand.NewPCG(45, 46)), 2000)
	_, err := db.Load(context.Background(), slices.Values(entriesOf(hs)))
	if !errors.Is(err, store.ErrDiskFull) {
		t.Fatalf("Load = %v, want store.ErrDiskFull", err)
	}
	if got := contents(t, db); len(got) != 0 {
		t.Fatalf("the index holds %d entries after a refused load", len(got))
	}
	if names := runFiles(t, dir); len(names) > 0 {
		t.Fatalf("run files left: %v", names)
	}
}

// Run files a crash left are removed by the next writable Open, and
// nothing else is; a read-only Open removes nothing.
func TestLoadRunLeftovers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	if err := db.Put(ctx, hashOf("a"), store.Value{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{ // name: removed by a writable Open
		extsort.RunPrefix + "123" + extsort.RunSuffix:       true,
		extsort.RunPrefix + "456" + extsort.RunSuffix:       true,
		extsort.RunPrefix + "123" + extsort.RunSuffix + "x": false,
		"urlhash.keep":     false,
		"urlhash.load.run": false,
	}
	for name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(stage string, writable bool) {
		t.Helper()
		for name, removed := range names {
			_, err := os.Stat(filepath.Join(dir, name))
			if gone := errors.Is(err, os.ErrNotExist); gone != (removed && writable) {
				t.Errorf("%s: %s gone = %v", stage, name, gone)
			}
		}
	}
	ro := mustOpen(t, dir, &Options{ReadOnly: true})
	ro.Close()
	check("after a read-only Open", false)
	db = mustOpen(t, dir, nil)
	defer db.Close()
	check("after a writable Open", true)
	if ok, _ := db.Has(ctx, hashOf("a")); !ok {
		t.Error("the entry is gone")
	}
}

// A load into an index with no entries leaves every table in the last
// level: Badger has nothing to compact afterwards (no rewrite at the
// first writable Open), and the metadata is kept.
func TestLoadSettled(t *testing.T) {
	ctx := context.Background()
	if testing.Short() {
		t.Skip("loads 2.5 million keys")
	}
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{Profile: "p", NoKeyTable: true}) // Badger's tables
	hs := make([]hashkey.Hash, 2_600_000)
	r := rand.New(rand.NewPCG(47, 48))
	for i := range hs {
		for j := 0; j < hashkey.Size; j += 8 {
			binary.LittleEndian.PutUint64(hs[i][j:], r.Uint64())
		}
	}
	res, err := db.Load(ctx, slices.Values(entriesOf(hs)))
	if err != nil || !res.Streamed {
		t.Fatalf("Load = %+v, %v", res, err)
	}
	lv := db.st.bdb.Levels()
	for _, l := range lv[:len(lv)-1] {
		if l.NumTables > 0 {
			t.Errorf("level %d holds %d tables after a load into an empty index", l.Level, l.NumTables)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, &Options{Profile: "p"})
	defer db.Close()
	if got := db.profileName(); got != "p" {
		t.Errorf("profile after the load = %q", got)
	}
	if !db.snapshotUsed() {
		t.Error("the filter snapshot was not current")
	}
	if s, _ := db.Stats(ctx); s.Entries != int64(len(hs)) {
		t.Errorf("Entries = %d", s.Entries)
	}
}

// A run file that cannot be read back fails the load with an error
// naming it; what was written before stays consistent: counts and filter
// match the entries stored, and the metadata is kept.
func TestLoadRunReadError(t *testing.T) {
	ctx := context.Background()
	for _, prior := range []int{0, 100} {
		t.Run(fmt.Sprintf("prior=%d", prior), func(t *testing.T) {
			dir := t.TempDir()
			db := mustOpen(t, dir, &Options{LoadMemory: 4096, Profile: "p"})
			defer db.Close()
			hs := randHashes(rand.New(rand.NewPCG(51, uint64(prior))), 3000+prior)
			if prior > 0 {
				if _, err := db.Load(ctx, slices.Values(entriesOf(hs[:prior]))); err != nil {
					t.Fatal(err)
				}
			}
			var cut string
			_, err := db.Load(ctx, func(yield func(store.Entry) bool) {
				for _, h := range hs[prior:] {
					if !yield(store.Entry{Hash: h}) {
						return
					}
				}
				names := runFiles(t, dir)
				if len(names) < 2 {
					t.Fatalf("%d run files", len(names))
				}
				cut = names[len(names)/2]
				if err := os.Truncate(cut, 100); err != nil {
					t.Fatal(err)
				}
			})
			if err == nil || !strings.Contains(err.Error(), filepath.Base(cut)) {
				t.Fatalf("Load with a cut run = %v, want an error naming %s", err, filepath.Base(cut))
			}
			got := contents(t, db)
			full, _ := got.counts()
			if s, _ := db.Stats(ctx); s.Entries != full {
				t.Errorf("Entries = %d, the index holds %d", s.Entries, full)
			}
			for k := range got {
				var h hashkey.Hash
				copy(h[:], k)
				if ok, err := db.Has(ctx, h); !ok || err != nil {
					t.Fatalf("Has of a stored key = %v, %v", ok, err)
				}
			}
			if db.profileName() != "p" {
				t.Errorf("profile %q after the failed load", db.profileName())
			}
			if err := db.Verify(ctx); err != nil {
				t.Error(err)
			}
			if names := runFiles(t, dir); len(names) > 0 {
				t.Fatalf("run files left: %v", names)
			}
		})
	}
}
