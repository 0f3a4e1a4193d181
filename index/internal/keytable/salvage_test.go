package keytable

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// salvagedKeys returns the keys of the entries s read.
func salvagedKeys(s *Salvaged) []Key {
	ks := make([]Key, len(s.Entries))
	for i := range s.Entries {
		ks[i] = s.Entries[i].Key
	}
	return ks
}

// liveKeys returns the model's live keys, ascending.
func liveKeys(model map[Key]bool) []Key {
	var ks []Key
	for k, live := range model {
		if live {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, compareKeys)
	return ks
}

// TestSalvageModel: on an undamaged table, open or closed, with key files
// holding tombstones and a log not yet merged, Salvage reads exactly the
// live keys (as Open and Scan would), reports no problem and no loss, and
// hands back the opaque bytes of the unmerged records in log order.
func TestSalvageModel(t *testing.T) {
	for _, delta := range []int{7, 64, 1 << 20} {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(uint64(delta), 9))
		universe := make([]Key, 500)
		for i := range universe {
			universe[i] = keyOf(uint64(i))
		}
		model := map[Key]bool{}
		tb, err := Open(dir, &Options{DeltaKeys: delta})
		if err != nil {
			t.Fatal(err)
		}
		check := func(round int, dir string, wantOpaque [][]byte) {
			t.Helper()
			s, err := Salvage(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range s.Files {
				if f.Problem != "" || f.lost() {
					t.Fatalf("delta %d, round %d: %s (%s): %s, lost %d/%v", delta, round, f.Name, f.Kind, f.Problem, f.Lost, f.LostUnknown)
				}
			}
			if want := liveKeys(model); !slices.Equal(salvagedKeys(s), want) {
				t.Fatalf("delta %d, round %d: Salvage read %d keys, want %d", delta, round, len(s.Entries), len(want))
			}
			if wantOpaque != nil && !slices.EqualFunc(s.Opaque, wantOpaque, bytes.Equal) {
				t.Fatalf("delta %d, round %d: %d opaque records, want %d", delta, round, len(s.Opaque), len(wantOpaque))
			}
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
				if model[k] {
					b.Deleted = append(b.Deleted, k)
				} else {
					b.Added = append(b.Added, k)
				}
			}
			b.Opaque = []byte{byte(round)}
			seq, err := tb.Add(&b, make([]bool, len(b.Added)), make([]bool, len(b.Deleted)))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range b.Added {
				model[k] = true
			}
			for _, k := range b.Deleted {
				model[k] = false
			}
			if err := tb.SyncTo(seq); err != nil {
				t.Fatal(err)
			}
			if round%5 == 4 {
				tb.wmu.Lock() // no merge changing the files while they are copied
				for tb.merging {
					tb.mergeDone.Wait()
				}
				crashed := crashCopy(t, dir) // as a crash leaves it
				tb.wmu.Unlock()
				check(round, crashed, nil)
			}
			if round%13 == 12 {
				if err := tb.Close(); err != nil {
					t.Fatal(err)
				}
				check(round, dir, nil)
				if tb, err = Open(dir, &Options{DeltaKeys: delta}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := tb.Close(); err != nil {
			t.Fatal(err)
		}
		check(40, dir, nil)
	}
}

// TestSalvageDamage: each damage costs what the damaged file held, is
// reported on that file, and nothing else: the other files' keys are
// read, and no key a checksum does not verify is kept.
func TestSalvageDamage(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{noMerge: true})
	var old, newer, logged []Key
	for i := range 3000 {
		old = append(old, keyOf(uint64(i)))
	}
	for i := range 200 {
		newer = append(newer, keyOf(uint64(10000+i)))
	}
	for i := range 50 {
		logged = append(logged, keyOf(uint64(20000+i)))
	}
	for _, ks := range [][]Key{old, newer} {
		in, err := tb.NewIngest(uint64(len(ks)))
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.Clone(ks)
		slices.SortFunc(sorted, compareKeys)
		for i := range sorted {
			if err := in.Add(&sorted[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := in.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	seq, err := tb.Add(&Batch{Added: logged[:25], Opaque: []byte("first")}, make([]bool, 25), nil)
	if err != nil {
		t.Fatal(err)
	}
	if seq, err = tb.Add(&Batch{Added: logged[25:], Opaque: []byte("second")}, make([]bool, 25), nil); err != nil {
		t.Fatal(err)
	}
	if err := tb.SyncTo(seq); err != nil {
		t.Fatal(err)
	}
	src := crashCopy(t, dir)
	files, _ := filepath.Glob(filepath.Join(src, "*.keys"))
	logs, _ := filepath.Glob(filepath.Join(src, "*.log"))
	slices.Sort(files)
	slices.Sort(logs)
	if len(files) != 2 || len(logs) == 0 {
		t.Fatalf("%d key files and %d segments, want 2 and 1 or more", len(files), len(logs))
	}
	oldFile, newFile, lastLog := filepath.Base(files[0]), filepath.Base(files[1]), filepath.Base(logs[len(logs)-1])
	rewrite := func(name string, fn func([]byte) []byte) func(string) {
		return func(dir string) {
			p := filepath.Join(dir, name)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, fn(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(name string) func(string) {
		return func(dir string) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name     string
		damage   func(dir string)
		lostFile string // "" none
		want     [][]Key
		part     []Key // the damaged key file's: some read, the others counted lost
		kept     int   // of part, read
		opaque   int
	}{
		{"none", func(string) {}, "", [][]Key{old, newer, logged}, nil, 0, 2},
		{"old file deleted", remove(oldFile), oldFile, [][]Key{newer, logged}, nil, 0, 2},
		// Pages of 16 rows, each with its checksum: a cut keeps the
		// pages before it, a flipped byte loses its page.
		{"old file cut", rewrite(oldFile, func(b []byte) []byte { return b[:len(b)/2] }), oldFile, [][]Key{newer, logged}, old, -1, 2},
		{"old file: a key's last byte flipped", rewrite(oldFile, func(b []byte) []byte { b[headerSize+31] ^= 1; return b }), oldFile, [][]Key{newer, logged}, old, 3000 - 16, 2},
		{"new file: bucket array cut", rewrite(newFile, func(b []byte) []byte { return b[:len(b)-4] }), "", [][]Key{old, newer, logged}, nil, 0, 2},
		{"new file: header count flipped", rewrite(newFile, func(b []byte) []byte { b[16] ^= 1; return b }), newFile, [][]Key{old, logged}, newer, 200 - 8, 2},
		{"MANIFEST deleted", remove(manifestName), "", [][]Key{old, newer, logged}, nil, 0, 2},
		{"MANIFEST flipped", rewrite(manifestName, func(b []byte) []byte { b[20] ^= 1; return b }), "", [][]Key{old, newer, logged}, nil, 0, 2},
		{"SYNCED flipped", rewrite(SyncedName, func(b []byte) []byte { b[10] ^= 1; return b }), "", [][]Key{old, newer, logged}, nil, 0, 2},
		{"log: first record's key flipped", rewrite(lastLog, func(b []byte) []byte { b[logHeader+8+10] ^= 1; return b }), lastLog, [][]Key{old, newer, logged[25:]}, nil, 0, 1},
		{"log: last record cut", rewrite(lastLog, func(b []byte) []byte { return b[:len(b)-10] }), lastLog, [][]Key{old, newer, logged[:25]}, nil, 0, 1},
		{"log deleted", remove(lastLog), lastLog, [][]Key{old, newer}, nil, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := crashCopy(t, src)
			tc.damage(d)
			s, err := Salvage(d)
			if err != nil {
				t.Fatal(err)
			}
			want := map[Key]bool{}
			for _, k := range slices.Concat(tc.want...) {
				want[k] = true
			}
			part := map[Key]bool{}
			for _, k := range tc.part {
				part[k] = true
			}
			kept := 0
			for _, k := range salvagedKeys(s) {
				switch {
				case want[k]:
					delete(want, k)
				case part[k]:
					kept++
				default:
					t.Fatalf("%x read, never stored", k[:4])
				}
			}
			if len(want) > 0 {
				t.Errorf("%d keys of the files not damaged not read", len(want))
			}
			if tc.kept >= 0 && kept != tc.kept || tc.kept < 0 && (kept == 0 || kept == len(tc.part)) {
				t.Errorf("%d keys of the damaged file read, want %d", kept, tc.kept)
			}
			for _, f := range s.Files {
				if tc.part != nil && f.Name == tc.lostFile && f.Kind == "key file" && int(f.Keys+f.Lost) < len(tc.part) {
					t.Errorf("%s: %d read and %d lost of its %d", f.Name, f.Keys, f.Lost, len(tc.part))
				}
			}
			if len(s.Opaque) != tc.opaque {
				t.Errorf("%d opaque records, want %d", len(s.Opaque), tc.opaque)
			}
			named := false
			for _, f := range s.Files {
				if f.lost() && f.Name != tc.lostFile {
					t.Errorf("%s (%s): lost %d/%v, %s", f.Name, f.Kind, f.Lost, f.LostUnknown, f.Problem)
				}
				named = named || f.lost() && f.Name == tc.lostFile
			}
			if tc.lostFile != "" && !named {
				t.Errorf("no loss reported on %s: %+v", tc.lostFile, s.Files)
			}
		})
	}
}

// FuzzSalvage reads fuzzed bytes as a key file and as a log segment of a
// table: never a panic, the keys ascending, and a key file's keys kept
// only when its checksum matches.
func FuzzSalvage(f *testing.F) {
	dir := f.TempDir()
	tb, err := Open(dir, &Options{noMerge: true})
	if err != nil {
		f.Fatal(err)
	}
	in, _ := tb.NewIngest(3)
	ks := []Key{keyOf(1), keyOf(2), keyOf(3)}
	slices.SortFunc(ks, compareKeys)
	for i := range ks {
		in.Add(&ks[i])
	}
	in.Commit()
	seq, _ := tb.Add(&Batch{Added: []Key{keyOf(4)}, Deleted: []Key{ks[0]}, Opaque: []byte("x")}, make([]bool, 1), make([]bool, 1))
	tb.SyncTo(seq)
	files, _ := filepath.Glob(filepath.Join(dir, "*.keys"))
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, p := range append(files, logs...) {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	tb.Close()
	manifest := (&manifest{logStart: 2, nextNum: 3, files: []uint64{1}}).appendTo(nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, manifestName), manifest, 0o644)
		os.WriteFile(fileName(d, 1), data, 0o644)
		os.WriteFile(logName(d, 2), data, 0o644)
		s, err := Salvage(d)
		if err != nil {
			t.Fatal(err)
		}
		if !ascending(salvagedKeys(s)) {
			t.Fatal("keys not ascending")
		}
	})
}

// TestSalvageGolden: Salvage reads every pinned format (testdata: key
// files of both versions, with columns and values, and log segments of
// each version) as Open does: the same entries, columns and values. A new
// format's golden files join the table. Damaged, a version 1 key file is
// lost whole (one checksum for its keys), a value block loses its values
// only (their keys kept).
func TestSalvageGolden(t *testing.T) {
	for _, tc := range []struct {
		keys, log string
		damage    func(dir string) // nil: none
		lost      string           // the file whose loss is reported
	}{
		{keys: "v1.keys", log: "v1.log"},
		{keys: "v1.keys", log: "v2.log"},
		{keys: "v2.keys", log: "v2.log"},
		{keys: "v2-cols.keys", log: "v3.log"},
		{keys: "v1.keys", log: "v3.log", damage: func(dir string) { flipAt(t, fileName(dir, 1), headerSize1+5) }, lost: "000001.keys"},
		{keys: "v2-cols.keys", log: "v3.log", damage: func(dir string) { flipAt(t, valuesName(dir, 1), 70) }, lost: "000001.values"},
	} {
		t.Run(tc.keys+"+"+tc.log+map[bool]string{true: "+damaged"}[tc.damage != nil], func(t *testing.T) {
			dir := t.TempDir()
			from := map[string]string{fileName(dir, 1): tc.keys, logName(dir, 2): tc.log}
			if v := strings.TrimSuffix(tc.keys, ".keys") + ".values"; fileExists(filepath.Join("testdata", v)) {
				from[valuesName(dir, 1)] = v
			}
			for name, src := range from {
				b, err := os.ReadFile(filepath.Join("testdata", src))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m := manifest{logStart: 2, nextNum: 2, files: []uint64{1}}
			if err := os.WriteFile(filepath.Join(dir, manifestName), m.appendTo(nil), 0o644); err != nil {
				t.Fatal(err)
			}
			// What Open reads, undamaged.
			tb, err := Open(dir, &Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			var want []Entry
			err = tb.ScanEntries(nil, 0, ScanOptions{Values: true}, func(e *Entry) error {
				c := *e
				c.Value = bytes.Clone(e.Value)
				want = append(want, c)
				return nil
			})
			tb.Close()
			if err != nil {
				t.Fatal(err)
			}
			if tc.damage != nil {
				tc.damage(dir)
			}
			s, err := Salvage(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range s.Files {
				if (f.Problem != "" || f.lost()) != (f.Name == tc.lost) {
					t.Errorf("%s (%s): %s, lost %d/%v", f.Name, f.Kind, f.Problem, f.Lost, f.LostUnknown)
				}
			}
			if len(s.Opaque) != 1 || string(s.Opaque[0]) != "idem" {
				t.Errorf("opaque %q", s.Opaque)
			}
			if tc.damage != nil {
				// Every entry read is one Open read, or the same key
				// without its lost value.
				byKey := map[Key]Entry{}
				for _, e := range want {
					byKey[e.Key] = e
				}
				for _, e := range s.Entries {
					w, ok := byKey[e.Key]
					if !ok || e.Cols != w.Cols || e.HasValue && !bytes.Equal(e.Value, w.Value) {
						t.Errorf("%x: %+v, not an entry Open reads", e.Key[:4], e)
					}
				}
				return
			}
			if !slices.EqualFunc(s.Entries, want, func(a, b Entry) bool {
				return a.Key == b.Key && a.Cols == b.Cols && a.HasValue == b.HasValue && bytes.Equal(a.Value, b.Value)
			}) {
				t.Errorf("Salvage read %d entries, Open %d, or others", len(s.Entries), len(want))
			}
		})
	}
}

func flipAt(t *testing.T, name string, off int) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x40
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
