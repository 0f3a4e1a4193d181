package keytable

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/index/internal/valuefile"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenKeys are the keys of testdata/v1.keys and v2.keys: the hashes of
// 0..39 live, of 40..42 deleted.
func goldenKeys() (live, dead []Key) {
	for i := range 43 {
		k := keyOf(uint64(i))
		if i < 40 {
			live = append(live, k)
		} else {
			dead = append(dead, k)
		}
	}
	slices.SortFunc(live, compareKeys)
	slices.SortFunc(dead, compareKeys)
	return live, dead
}

type memFile struct{ b []byte }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if n := int(off) + len(p); n > len(m.b) {
		m.b = append(m.b, make([]byte, n-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}

// entriesOf yields the sorted keys live, then the sorted tombstones dead,
// for writeFile.
func entriesOf(live, dead []Key) func(func(*Key, bool) bool) {
	return func(yield func(*Key, bool) bool) {
		for i := range live {
			if !yield(&live[i], false) {
				return
			}
		}
		for i := range dead {
			if !yield(&dead[i], true) {
				return
			}
		}
	}
}

// writeFile writes a key file of key-only rows and tombstones to w.
func writeFile(w io.WriterAt, maxLive uint64, entries func(yield func(k *Key, dead bool) bool)) (fileHeader, []byte, error) {
	fw := newFileWriter(w, maxLive, keyOnly, nil, 0)
	for k, dead := range entries {
		var err error
		if dead {
			err = fw.tombstone(k)
		} else {
			err = fw.add(k, &Cols{}, nil)
		}
		if err != nil {
			return fw.h, nil, err
		}
	}
	return fw.finish()
}

// checkGolden compares b with the golden file name, which -update
// rewrites.
func checkGolden(t *testing.T, name string, b []byte) {
	t.Helper()
	name = filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("written bytes differ from %s (run with -update only for a new format version)", name)
	}
}

// openTestFile opens the key file testdata/name (and its value file).
func openTestFile(t *testing.T, name string) *keyFile {
	t.Helper()
	c := valuefile.NewCache(1 << 20)
	t.Cleanup(c.Close)
	f, err := openFile(osFS{}, filepath.Join("testdata", name), 1, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.release() })
	return f
}

// TestGoldenFile pins the key file format: the bytes written for fixed
// keys (version 2), and that the pinned files of both versions read back.
func TestGoldenFile(t *testing.T) {
	live, dead := goldenKeys()
	var m memFile
	if _, _, err := writeFile(&m, uint64(len(live)), entriesOf(live, dead)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "v2.keys", m.b)
	for _, name := range []string{"v1.keys", "v2.keys"} {
		t.Run(name, func(t *testing.T) {
			f := openTestFile(t, name)
			if err := f.verify(); err != nil {
				t.Fatal(err)
			}
			find := func(k *Key) int {
				st, _, _, err := f.find(k, nil)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			for i := range live {
				if got := find(&live[i]); got != stRow {
					t.Errorf("find(live %x) = %d", live[i][:4], got)
				}
			}
			for i := range dead {
				if got := find(&dead[i]); got != stDead {
					t.Errorf("find(deleted %x) = %d", dead[i][:4], got)
				}
			}
			if k := keyOf(1000); find(&k) != stAbsent {
				t.Error("an absent key found")
			}
		})
	}
}

// goldenEntries are the entries of testdata/v2-cols.keys: times over 40
// years in 4-byte columns, an expiry past 2106 in an 8-byte one, values
// for some (in v2-cols.values), and a key written over an older row (a
// row and a tombstone).
func goldenEntries() []Set {
	var es []Set
	for i := range 40 {
		s := Set{Key: keyOf(uint64(i))}
		if i%3 != 0 {
			s.Cols = Cols{First: 1_000_000_000 + int64(i)*31_536_000, Last: 1_000_000_000 + int64(i)*31_536_000 + 60}
		}
		if i%4 == 1 {
			s.Cols.Expires = 1_000_000_000 + int64(i)
			if i%8 == 1 {
				s.Cols.Expires = 6_000_000_000 + int64(i)
			}
		}
		if i%2 == 0 {
			s.Value = fmt.Appendf(nil, "https://example.org/item/%d", i)
		}
		es = append(es, s)
	}
	slices.SortFunc(es, func(a, b Set) int { return compareKeys(a.Key, b.Key) })
	return es
}

// writeColsFile writes the entries es (a tombstone beside the first) to
// key and value files.
func writeColsFile(t *testing.T, keys, vals io.WriterAt, es []Set) {
	t.Helper()
	var span colRange
	for i := range es {
		span.add(&es[i].Cols)
	}
	vw := valuefile.NewWriter(vals, valuefile.Options{NoTrain: true, Pair: 7, BlockSize: 128})
	fw := newFileWriter(keys, uint64(len(es)), layoutOf(span, true), vw, 7)
	for i := range es {
		if err := fw.add(&es[i].Key, &es[i].Cols, es[i].Value); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.tombstone(&es[0].Key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fw.finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := vw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenColumns pins rows with columns and value references, and
// reads every entry back: columns, values, the row over a tombstone.
func TestGoldenColumns(t *testing.T) {
	es := goldenEntries()
	var keys, vals memFile
	writeColsFile(t, &keys, &vals, es)
	checkGolden(t, "v2-cols.keys", keys.b)
	checkGolden(t, "v2-cols.values", vals.b)
	f := openTestFile(t, "v2-cols.keys")
	if err := f.verify(); err != nil {
		t.Fatal(err)
	}
	if w := f.hdr.lay.width; w != [4]uint8{4, 4, 8, 4} {
		t.Errorf("column widths %v, want [4 4 8 4]", w)
	}
	for _, s := range es {
		st, row, _, err := f.find(&s.Key, nil)
		if err != nil || st != stRow {
			t.Fatalf("find(%x) = %d, %v", s.Key[:4], st, err)
		}
		if got := f.hdr.lay.cols(row); got != s.Cols {
			t.Errorf("%x: columns %+v, want %+v", s.Key[:4], got, s.Cols)
		}
		ref := f.hdr.lay.ref(row)
		if (ref != 0) != (len(s.Value) > 0) {
			t.Fatalf("%x: value reference %d for a value of %d bytes", s.Key[:4], ref, len(s.Value))
		}
		if ref != 0 {
			if v, err := f.vals.Value(ref-1, nil); err != nil || !bytes.Equal(v, s.Value) {
				t.Errorf("%x: value %q, %v, want %q", s.Key[:4], v, err, s.Value)
			}
		}
	}
	if !f.isDeleted(&es[0].Key) {
		t.Error("the tombstone beside the first row is lost")
	}
}

// goldenRecord is the record of testdata/v3.log.
func goldenRecord() *record {
	return &record{seq: 7, added: []Key{keyOf(1), keyOf(2)}, deleted: []Key{keyOf(3)}, opaque: []byte("idem"),
		sets: []op{
			{k: keyOf(4), cols: Cols{First: 1700000000, Last: 1700000100, Expires: 1800000000}, value: []byte("https://example.org/")},
			{k: keyOf(5), flags: opHides | opKeep, cols: Cols{Last: 1}},
			{k: keyOf(6), flags: opCond},
		}}
}

// TestGoldenLog pins the log record format: version 3 is written, and
// version 1 and 2 segments (key-only records) still read.
func TestGoldenLog(t *testing.T) {
	b := append([]byte(logMagic), logVersion)
	b, err := appendRecord(b, goldenRecord())
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "v3.log", b)
	for _, tc := range []struct {
		name string
		seq  uint64
	}{{"v1.log", 0}, {"v2.log", 7}, {"v3.log", 7}} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.name))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if _, _, err := readLog(data, false, func(r *record) error {
			n++
			if len(r.added) != 2 || len(r.deleted) != 1 || string(r.opaque) != "idem" || r.added[1] != keyOf(2) || r.seq != tc.seq {
				t.Errorf("%s: decoded %d added, %d deleted, opaque %q, record %d", tc.name, len(r.added), len(r.deleted), r.opaque, r.seq)
			}
			if tc.name == "v3.log" {
				want := goldenRecord().sets
				want[1].flags |= opCols
				want[0].flags |= opCols | opValue
				if len(r.sets) != len(want) {
					t.Fatalf("%d sets, want %d", len(r.sets), len(want))
				}
				for i := range want {
					g, w := r.sets[i], want[i]
					if g.k != w.k || g.flags != w.flags || g.cols != w.cols || !bytes.Equal(g.value, w.value) {
						t.Errorf("set %d: %+v, want %+v", i, g, w)
					}
				}
			}
			return nil
		}); err != nil || n != 1 {
			t.Fatalf("%s: readLog: %d records, %v", tc.name, n, err)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	for _, name := range []string{"v1.keys", "v2.keys", "v2-cols.keys"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b)
		f.Add(b[:headerSize1])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kf, err := readFile(bytes.NewReader(data), int64(len(data)), "fuzz.keys")
		if err != nil {
			return
		}
		// A file that opens answers lookups without panicking, one at a
		// time and in a batch, and decodes the rows it finds.
		keys := make([]Key, 10)
		pending := make([]int, len(keys))
		for i := range keys {
			keys[i] = keyOf(uint64(i))
			pending[i] = i
			if st, row, _, err := kf.find(&keys[i], nil); err == nil && st == stRow {
				kf.hdr.lay.cols(row)
				kf.hdr.lay.ref(row)
			}
		}
		kf.findBatch(keys, pending, &lookupBufs{}, func(_, _ int, row []byte) {
			if row != nil {
				kf.hdr.lay.cols(row)
			}
		})
		kf.verify()
		s := fileSource(kf)
		mergeSources([]*source{s}, true, func(_ *Key, src *source, i int, _ *source, _ int) bool {
			if src != nil {
				src.cols(i)
				src.val(i)
			}
			return true
		})
	})
}

// FuzzColumns: times a layout is made for encode and decode back, in the
// narrowest widths.
func FuzzColumns(f *testing.F) {
	f.Add(int64(1700000000), int64(1700000100), int64(0), int64(1), int64(1800000000))
	f.Add(int64(1), int64(MaxTime), int64(MaxTime), int64(1), int64(MaxTime))
	f.Fuzz(func(t *testing.T, first, last, exp, lo, hi int64) {
		c := Cols{First: first, Last: last, Expires: exp}
		if c.check() != nil || lo < 1 || hi < lo || hi > MaxTime {
			return
		}
		var span colRange
		span.add(&c)
		other := Cols{First: lo, Last: hi}
		span.add(&other)
		l := layoutOf(span, true)
		if err := l.check(); err != nil {
			t.Fatalf("layout for %+v: %v", span, err)
		}
		row := make([]byte, l.rw)
		k := keyOf(1)
		l.putRow(row, &k, &c, 9)
		if got := l.cols(row); got != c || l.ref(row) != 9 || !l.fits(&c) {
			t.Fatalf("%+v in layout %+v: decoded %+v, reference %d", c, l, got, l.ref(row))
		}
		for i := range nCols {
			if w := l.width[i]; w == 8 && span.max[i]-span.min[i] < 1<<32-1 {
				t.Fatalf("column %d 8 bytes wide for %d..%d", i, span.min[i], span.max[i])
			}
		}
	})
}

func FuzzReadLog(f *testing.F) {
	for _, name := range []string{"v1.log", "v2.log", "v3.log"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b, true)
		f.Add(b[:len(b)-3], true)
		f.Add(append(b, 0, 0, 0), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, last bool) {
		end, _, err := readLog(data, last, func(r *record) error {
			// What decodes encodes (as version 3).
			if _, err := appendRecord(nil, r); err != nil {
				t.Fatalf("a decoded record does not encode: %v", err)
			}
			return nil
		})
		if end < 0 || end > int64(len(data)) {
			t.Fatalf("end %d out of %d bytes (err %v)", end, len(data), err)
		}
	})
}

func FuzzManifest(f *testing.F) {
	m := manifest{logStart: 3, nextNum: 9, files: []uint64{2, 5, 8}}
	f.Add(m.appendTo(nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeManifest(data)
		if err == nil && !bytes.Equal(m.appendTo(nil), data) {
			t.Fatal("a manifest that decodes does not re-encode to its bytes")
		}
	})
}

// TestTombstoneRefs: a merge's writer takes tombstones by reference
// (fileWriter.refTombstones) and writes the same bytes as one given the
// keys; references out of order, or mixed with keys, fail the file.
func TestTombstoneRefs(t *testing.T) {
	live, dead := goldenKeys()
	var byKey memFile
	if _, _, err := writeFile(&byKey, uint64(len(live)), entriesOf(live, dead)); err != nil {
		t.Fatal(err)
	}
	// The tombstones in two "sources", interleaved as a merge's are.
	srcs := [2][]Key{}
	var refs [][2]int
	for i, k := range dead {
		s := i % 2
		refs = append(refs, [2]int{s, len(srcs[s])})
		srcs[s] = append(srcs[s], k)
	}
	deadKey := func(pos, i int) *Key { return &srcs[pos][i] }
	write := func(refs [][2]int, byKeyToo bool) ([]byte, error) {
		var m memFile
		fw := newFileWriter(&m, uint64(len(live)), keyOnly, nil, 0)
		fw.refTombstones(len(refs), deadKey)
		for i := range live {
			if err := fw.add(&live[i], &Cols{}, nil); err != nil {
				return nil, err
			}
		}
		for _, r := range refs {
			if err := fw.tombstoneAt(r[0], r[1]); err != nil {
				return nil, err
			}
		}
		if byKeyToo {
			if err := fw.tombstone(&dead[0]); err != nil {
				return nil, err
			}
		}
		_, _, err := fw.finish()
		return m.b, err
	}
	b, err := write(refs, false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, byKey.b) {
		t.Fatal("a file written with tombstones by reference differs from one written with their keys")
	}
	if len(refs) < 2 {
		t.Fatal("the golden keys have fewer than two tombstones")
	}
	swapped := slices.Clone(refs)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	if _, err := write(swapped, false); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("tombstones by reference out of order: %v", err)
	}
	if _, err := write(refs[:0], true); err == nil {
		t.Fatal("a tombstone by key to a writer of references was taken")
	}
}
