package keytable

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenKeys are the keys of testdata/v1.keys: the hashes of 0..39 live,
// of 40..42 deleted.
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

// TestGoldenFile pins the key file format: the bytes written for fixed
// keys, and that the pinned file reads back (a change of format must
// change fileVersion and keep reading version 1).
func TestGoldenFile(t *testing.T) {
	live, dead := goldenKeys()
	var m memFile
	if _, _, err := writeFile(&m, uint64(len(live)), entriesOf(live, dead)); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("testdata", "v1.keys")
	if *update {
		if err := os.WriteFile(name, m.b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.b, want) {
		t.Fatalf("written file differs from %s (run with -update only for a new format version)", name)
	}
	f, err := openFile(name, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	if err := f.verify(); err != nil {
		t.Fatal(err)
	}
	find := func(k *Key) int {
		st, _, err := f.find(k, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for i := range live {
		if got := find(&live[i]); got != 1 {
			t.Errorf("find(live %x) = %d", live[i][:4], got)
		}
	}
	for i := range dead {
		if got := find(&dead[i]); got != -1 {
			t.Errorf("find(deleted %x) = %d", dead[i][:4], got)
		}
	}
	if k := keyOf(1000); find(&k) != 0 {
		t.Error("an absent key found")
	}
}

// TestGoldenLog pins the log record format: version 2 is written, and
// version 1 segments (unnumbered records) still read.
func TestGoldenLog(t *testing.T) {
	b := append([]byte(logMagic), logVersion)
	b, err := appendRecord(b, &Batch{Added: []Key{keyOf(1), keyOf(2)}, Deleted: []Key{keyOf(3)}, Opaque: []byte("idem"), seq: 7})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("testdata", "v2.log")
	if *update {
		os.WriteFile(name, b, 0o644)
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("written log differs from %s", name)
	}
	for _, tc := range []struct {
		name string
		seq  uint64
	}{{"v1.log", 0}, {"v2.log", 7}} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.name))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if _, err := readLog(data, false, func(b Batch) error {
			n++
			if len(b.Added) != 2 || len(b.Deleted) != 1 || string(b.Opaque) != "idem" || b.Added[1] != keyOf(2) || b.seq != tc.seq {
				t.Errorf("%s: decoded %d added, %d deleted, opaque %q, record %d", tc.name, len(b.Added), len(b.Deleted), b.Opaque, b.seq)
			}
			return nil
		}); err != nil || n != 1 {
			t.Fatalf("%s: readLog: %d records, %v", tc.name, n, err)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "v1.keys"))
	f.Add(b)
	f.Add(b[:headerSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		kf, err := readFile(bytes.NewReader(data), int64(len(data)), "fuzz.keys")
		if err != nil {
			return
		}
		// A file that opens answers lookups without panicking, one at a
		// time and in a batch.
		keys := make([]Key, 10)
		pending := make([]int, len(keys))
		for i := range keys {
			keys[i] = keyOf(uint64(i))
			pending[i] = i
			kf.find(&keys[i], nil)
		}
		kf.findBatch(keys, pending, &lookupBufs{}, func(int, bool) {})
		kf.verify()
	})
}

func FuzzReadLog(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "v2.log"))
	v1, _ := os.ReadFile(filepath.Join("testdata", "v1.log"))
	f.Add(v1, true)
	f.Add(b, true)
	f.Add(b[:len(b)-3], true)
	f.Add(append(b, 0, 0, 0), false)
	f.Fuzz(func(t *testing.T, data []byte, last bool) {
		end, err := readLog(data, last, func(Batch) error { return nil })
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
