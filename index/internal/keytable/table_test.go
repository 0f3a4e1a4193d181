package keytable

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/urlhash/urlhash/store"
)

func keyOf(i uint64) Key {
	return sha256.Sum256(binary.LittleEndian.AppendUint64(nil, i))
}

func openTest(tb testing.TB, dir string, opts *Options) *Table {
	tb.Helper()
	t, err := Open(dir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { t.Close() })
	return t
}

// check compares the table with the model: every key's state, the count
// and a full scan.
func check(t *testing.T, tb *Table, model map[Key]bool, universe []Key) {
	t.Helper()
	for i := range universe {
		got, _, err := tb.Has(&universe[i])
		if err != nil {
			t.Fatal(err)
		}
		if got != model[universe[i]] {
			t.Fatalf("Has(%x) = %v, want %v", universe[i][:4], got, model[universe[i]])
		}
	}
	// HasBatch agrees, with the keys in any order and sorted.
	found := make([]bool, len(universe))
	sorted := slices.Clone(universe)
	slices.SortFunc(sorted, compareKeys)
	for _, ks := range [][]Key{universe, sorted} {
		if _, err := tb.HasBatch(ks, found); err != nil {
			t.Fatal(err)
		}
		for i := range ks {
			if found[i] != model[ks[i]] {
				t.Fatalf("HasBatch: %x = %v, want %v", ks[i][:4], found[i], model[ks[i]])
			}
		}
	}
	var want []Key
	for k, live := range model {
		if live {
			want = append(want, k)
		}
	}
	slices.SortFunc(want, compareKeys)
	if got := tb.Len(); got != int64(len(want)) {
		t.Fatalf("Len = %d, want %d", got, len(want))
	}
	var got []Key
	if err := tb.Scan(nil, 0, func(k *Key) error { got = append(got, *k); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Scan: %d keys, want %d", len(got), len(want))
	}
}

// TestModel runs random adds and deletes, with merges (a small delta)
// and reopenings, against a map.
func TestModel(t *testing.T) {
	for _, delta := range []int{7, 64, 1 << 20} {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(uint64(delta), 1))
		universe := make([]Key, 600)
		for i := range universe {
			universe[i] = keyOf(uint64(i))
		}
		model := map[Key]bool{}
		tb, err := Open(dir, &Options{DeltaKeys: delta})
		if err != nil {
			t.Fatal(err)
		}
		for round := range 40 {
			var b Batch
			picked := map[Key]bool{}
			for range rng.IntN(40) {
				k := universe[rng.IntN(len(universe))]
				if picked[k] {
					continue
				}
				picked[k] = true
				if rng.IntN(3) == 0 {
					b.Deleted = append(b.Deleted, k)
				} else {
					b.Added = append(b.Added, k)
				}
			}
			added := make([]bool, len(b.Added))
			deleted := make([]bool, len(b.Deleted))
			seq, err := tb.Add(&b, added, deleted)
			if err != nil {
				t.Fatal(err)
			}
			for i, k := range b.Added {
				if added[i] == model[k] {
					t.Fatalf("round %d: added %x = %v, stored before %v", round, k[:4], added[i], model[k])
				}
				model[k] = true
			}
			for i, k := range b.Deleted {
				if deleted[i] != model[k] {
					t.Fatalf("round %d: deleted %x = %v, stored before %v", round, k[:4], deleted[i], model[k])
				}
				model[k] = false
			}
			if err := tb.SyncTo(seq); err != nil {
				t.Fatal(err)
			}
			if round%7 == 6 {
				check(t, tb, model, universe)
				if err := tb.Close(); err != nil {
					t.Fatal(err)
				}
				if tb, err = Open(dir, &Options{DeltaKeys: delta}); err != nil {
					t.Fatal(err)
				}
			}
		}
		check(t, tb, model, universe)
		if err := tb.Verify(); err != nil {
			t.Fatal(err)
		}
		tb.Close()
	}
}

// TestCrash copies the directory while the table is open, as a kill -9
// would leave it (no Close, no merge finished), and opens the copy: every
// acknowledged change is there.
func TestCrash(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{DeltaKeys: 100})
	model := map[Key]bool{}
	for i := range 1000 {
		k := keyOf(uint64(i))
		b := Batch{Added: []Key{k}}
		if i%10 == 9 {
			b = Batch{Deleted: []Key{keyOf(uint64(i - 5))}}
			model[keyOf(uint64(i-5))] = false
		} else {
			model[k] = true
		}
		if _, err := tb.Add(&b, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A copy taken while a merge runs is not a snapshot: wait for it.
	tb.mergeWG.Wait()
	cp := t.TempDir()
	copyDir(t, dir, cp)
	tb2 := openTest(t, cp, nil)
	var universe []Key
	for k := range model {
		universe = append(universe, k)
	}
	check(t, tb2, model, universe)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // removed by a merge meanwhile
			}
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newestLog returns the name of the newest log segment of dir.
func newestLog(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		t.Fatal("no log segment")
	}
	slices.Sort(logs)
	return logs[len(logs)-1]
}

// TestLogTail: a torn tail (of a record not acknowledged: a crash came
// before its sync) is dropped, damage elsewhere is named.
func TestLogTail(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(b []byte) []byte
		corrupt bool
		keys    int // keys found after reopening
	}{
		{"whole", func(b []byte) []byte { return b }, false, 3},
		{"cut in the last record", func(b []byte) []byte { return b[:len(b)-5] }, false, 2},
		{"cut in a record header", func(b []byte) []byte { return b[:len(b)-recordLen(1)+3] }, false, 2},
		{"zeros appended", func(b []byte) []byte { return append(b, make([]byte, 100)...) }, false, 3},
		{"last record zeroed", func(b []byte) []byte {
			clear(b[len(b)-recordLen(1):])
			return b
		}, false, 2},
		{"first record flipped", func(b []byte) []byte {
			b[logHeader+20] ^= 1
			return b
		}, true, 0},
		{"garbage after the last record", func(b []byte) []byte { return append(b, 1, 2, 3, 4, 5, 6, 7, 8, 9) }, true, 0},
		{"bad magic", func(b []byte) []byte {
			b[0] = 'X'
			return b
		}, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tb, err := Open(dir, &Options{noMerge: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if i == 2 {
					if err := tb.Sync(); err != nil { // the third is not acknowledged
						t.Fatal(err)
					}
				}
				if _, err := tb.Add(&Batch{Added: []Key{keyOf(uint64(i))}}, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			name := newestLog(t, dir)
			dir = crashCopy(t, dir)
			tb.Close()
			name = filepath.Join(dir, filepath.Base(name))
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			tb, err = Open(dir, nil)
			if tc.corrupt {
				if !errors.Is(err, store.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(name))) {
					t.Fatalf("Open = %v, want store.ErrCorrupt naming %s", err, filepath.Base(name))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if got := tb.Len(); got != int64(tc.keys) {
				t.Fatalf("Len = %d, want %d", got, tc.keys)
			}
			// Writes go on, and a second reopening reads it all.
			if _, err := tb.Add(&Batch{Added: []Key{keyOf(99)}}, nil, nil); err != nil {
				t.Fatal(err)
			}
			tb.Close()
			tb, err = Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := tb.Len(); got != int64(tc.keys+1) {
				t.Fatalf("after a second reopening: Len = %d, want %d", got, tc.keys+1)
			}
			tb.Close()
		})
	}
}

func recordLen(keys int) int {
	b, _ := appendRecord(nil, &record{added: make([]Key, keys)})
	return len(b)
}

// TestFileDamage: a key file that fails its checks is named.
func TestFileDamage(t *testing.T) {
	dir := t.TempDir()
	tb, err := Open(dir, &Options{DeltaKeys: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := tb.Add(&Batch{Added: []Key{keyOf(uint64(i))}}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	tb.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.keys"))
	if len(files) == 0 {
		t.Fatal("no key file after merges")
	}
	b, _ := os.ReadFile(files[0])
	// A key byte: Open's checks pass, Verify names the file.
	b[headerSize+3] ^= 1
	os.WriteFile(files[0], b, 0o644)
	// Read-only from here: a writable Open replays the log and may merge
	// the damaged file away in the background (and leave its directory
	// busy), which made the checks below pass or fail by timing.
	ro := &Options{ReadOnly: true}
	tb, err = Open(dir, ro)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Verify(); !errors.Is(err, store.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(filepath.Base(files[0]))) {
		t.Fatalf("Verify = %v, want store.ErrCorrupt naming the file", err)
	}
	tb.Close()
	// A bucket offset: Open refuses.
	b[len(b)-3] ^= 1
	os.WriteFile(files[0], b, 0o644)
	if tb, err := Open(dir, ro); !errors.Is(err, store.ErrCorrupt) {
		if err == nil {
			tb.Close()
		}
		t.Fatalf("Open = %v, want store.ErrCorrupt", err)
	}
	// A missing file.
	os.Remove(files[0])
	if tb, err := Open(dir, ro); !errors.Is(err, store.ErrCorrupt) {
		if err == nil {
			tb.Close()
		}
		t.Fatalf("Open = %v, want store.ErrCorrupt", err)
	}
}

func TestConcurrent(t *testing.T) {
	tb := openTest(t, t.TempDir(), &Options{DeltaKeys: 500})
	const writers, per = 4, 3000
	var wg sync.WaitGroup
	addedBy := make([][]bool, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([]Key, per)
			for i := range keys {
				keys[i] = keyOf(uint64(i))
			}
			rand.New(rand.NewPCG(uint64(w), 0)).Shuffle(per, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			addedBy[w] = make([]bool, 0, per)
			for i := 0; i < per; i += 100 {
				b := Batch{Added: keys[i : i+100]}
				added := make([]bool, 100)
				seq, err := tb.Add(&b, added, nil)
				if err == nil {
					err = tb.SyncTo(seq)
				}
				if err != nil {
					t.Error(err)
					return
				}
				addedBy[w] = append(addedBy[w], added...)
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, a := range addedBy {
		for _, ok := range a {
			if ok {
				n++
			}
		}
	}
	if n != per || tb.Len() != per {
		t.Fatalf("%d added, Len %d, want %d each", n, tb.Len(), per)
	}
}

func TestScanPrefix(t *testing.T) {
	tb := openTest(t, t.TempDir(), &Options{DeltaKeys: 50})
	var keys []Key
	for i := range 300 {
		k := keyOf(uint64(i))
		keys = append(keys, k)
		tb.Add(&Batch{Added: []Key{k}}, nil, nil)
	}
	for _, bits := range []int{0, 1, 3, 8, 12, 16} {
		for _, p := range keys[:20] {
			want := 0
			for _, k := range keys {
				if hasPrefixBits(k[:], p[:], bits) {
					want++
				}
			}
			got := 0
			tb.Scan(p[:], bits, func(k *Key) error {
				if !hasPrefixBits(k[:], p[:], bits) {
					t.Fatalf("bits %d: %x outside %x", bits, k[:4], p[:4])
				}
				got++
				return nil
			})
			if got != want {
				t.Fatalf("bits %d prefix %x: %d keys, want %d", bits, p[:4], got, want)
			}
		}
	}
	hi := Key{}
	for i := range hi {
		hi[i] = 0xff
	}
	if _, h := prefixRange(hi[:], 16); h != nil {
		t.Fatalf("prefixRange(ffff) has an upper bound %x", h[:2])
	}
}

func hasPrefixBits(k, p []byte, bits int) bool {
	for i := 0; i < bits; i++ {
		if (k[i/8]>>(7-i%8))&1 != (p[i/8]>>(7-i%8))&1 {
			return false
		}
	}
	return true
}

func TestReplayOpaque(t *testing.T) {
	dir := t.TempDir()
	tb, _ := Open(dir, &Options{noMerge: true})
	tb.Add(&Batch{Added: []Key{keyOf(1)}, Opaque: []byte("idem-1")}, nil, nil)
	tb.Add(&Batch{Opaque: []byte("idem-2")}, nil, nil)
	tb.Close()
	var got []string
	tb, err := Open(dir, &Options{Replay: func(b []byte) error { got = append(got, string(b)); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	if !slices.Equal(got, []string{"idem-1", "idem-2"}) {
		t.Fatalf("replayed %q", got)
	}
}

// TestIngest: a bulk of new keys written as a file is live, newer than
// the changes before it (a deleted key added again), and kept across a
// reopening.
func TestIngest(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{DeltaKeys: 30})
	model := map[Key]bool{}
	var universe []Key
	for i := range 100 {
		k := keyOf(uint64(i))
		universe = append(universe, k)
		tb.Add(&Batch{Added: []Key{k}}, nil, nil)
		model[k] = true
	}
	tb.Add(&Batch{Deleted: []Key{keyOf(5)}}, nil, nil) // in the delta
	model[keyOf(5)] = false
	var bulk []Key
	for i := 100; i < 1100; i++ {
		bulk = append(bulk, keyOf(uint64(i)))
	}
	bulk = append(bulk, keyOf(5))
	slices.SortFunc(bulk, compareKeys)
	in, err := tb.NewIngest(uint64(len(bulk)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range bulk {
		if err := in.Add(&bulk[i]); err != nil {
			t.Fatal(err)
		}
		model[bulk[i]] = true
	}
	universe = append(universe, bulk...)
	if err := in.Add(&bulk[0]); err == nil {
		t.Fatal("a key out of order was accepted")
	}
	if err := in.Commit(); err != nil {
		t.Fatal(err)
	}
	check(t, tb, model, universe)
	tb.Add(&Batch{Deleted: []Key{keyOf(500)}}, nil, nil)
	model[keyOf(500)] = false
	tb.Close()
	tb = openTest(t, dir, &Options{DeltaKeys: 30})
	check(t, tb, model, universe)
	if err := tb.Verify(); err != nil {
		t.Fatal(err)
	}
}

// A key repeated in a batch is added once, sorted or not.
func TestRepeatedKeys(t *testing.T) {
	tb := openTest(t, t.TempDir(), nil)
	a, b := keyOf(1), keyOf(2)
	added := make([]bool, 4)
	if _, err := tb.Add(&Batch{Added: []Key{a, b, a, b}}, added, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(added, []bool{true, true, false, false}) || tb.Len() != 2 {
		t.Fatalf("added %v, Len %d", added, tb.Len())
	}
	deleted := make([]bool, 2)
	if _, err := tb.Add(&Batch{Deleted: []Key{a, a}}, nil, deleted); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(deleted, []bool{true, false}) || tb.Len() != 1 {
		t.Fatalf("deleted %v, Len %d", deleted, tb.Len())
	}
}

// TestLeads: the leads of every live row, wherever it is (merged files,
// the frozen delta a merge holds, the delta), and of rows with times; the
// rows deleted may be yielded too, but nothing else.
func TestLeads(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{DeltaKeys: 50})
	model := map[Key]bool{}
	for i := range 400 {
		k := keyOf(uint64(i))
		b := &Batch{Added: []Key{k}}
		if i%3 == 0 {
			b.AddedCols = Cols{First: int64(i + 1), Last: int64(i + 1)}
		}
		if _, err := tb.Add(b, nil, nil); err != nil {
			t.Fatal(err)
		}
		model[k] = true
	}
	for i := 0; i < 400; i += 7 {
		k := keyOf(uint64(i))
		tb.Add(&Batch{Deleted: []Key{k}}, nil, nil)
		model[k] = false
	}
	tb.mergeWG.Wait()
	tb.Close()
	// Reopened without merges: the delta is frozen by hand, as a merge
	// would, and a new one takes more keys.
	tb = openTest(t, dir, &Options{DeltaKeys: 50, noMerge: true})
	add := func(from, to int) {
		for i := from; i < to; i++ {
			k := keyOf(uint64(i))
			tb.Add(&Batch{Added: []Key{k}}, nil, nil)
			model[k] = true
		}
	}
	add(400, 430)
	tb.mu.Lock()
	tb.frozen, tb.delta = tb.delta, newDelta(50)
	tb.mu.Unlock()
	add(430, 460)
	// The frozen delta also holds what the reopening replayed from the
	// log (the keys a merge had not written when the table closed).
	if len(tb.files) == 0 || tb.frozen.len() < 30 || tb.delta.len() != 30 {
		t.Fatalf("%d files, frozen %d keys, delta %d: want keys in each place", len(tb.files), tb.frozen.len(), tb.delta.len())
	}
	byLead := map[uint64]Key{}
	for k := range model {
		byLead[binary.BigEndian.Uint64(k[:8])] = k
	}
	yielded := map[uint64]bool{}
	if err := tb.Leads(func(lead uint64) bool {
		if _, ok := byLead[lead]; !ok {
			t.Fatalf("lead %x of no key put", lead)
		}
		yielded[lead] = true
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for k, live := range model {
		if live && !yielded[binary.BigEndian.Uint64(k[:8])] {
			t.Fatalf("the lead of live key %x missing", k[:8])
		}
	}
	n := 0
	tb.Leads(func(uint64) bool { n++; return n < 5 })
	if n != 5 {
		t.Fatalf("Leads went on after fn returned false: %d calls", n)
	}
}
