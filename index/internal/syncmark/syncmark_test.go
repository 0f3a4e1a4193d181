package syncmark

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/mark.golden")

// TestGolden pins the bytes of a mark, and the marks of the formats
// before it (written by earlier programs: never rewritten), which must
// still read.
func TestGolden(t *testing.T) {
	m := Mark{Seg: 3, Seq: 1000}
	name := filepath.Join("testdata", "mark.golden")
	got := m.AppendBinary(nil)
	if *update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || len(got) != Size {
		t.Fatalf("AppendBinary = %x, want %x (go test -update rewrites it)", got, want)
	}
	for _, tc := range []struct {
		file string
		want Mark
	}{
		{"mark.golden", m},
		{"index-v1.golden", Mark{Seq: 1000}},            // urlhash.synced, "UHSYNC01"
		{"keytable-v1.golden", Mark{Seg: 3, Seq: 1000}}, // keytable/SYNCED, "UHKTSYN1"
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Read(filepath.Join("testdata", tc.file))
			if err != nil || got != tc.want {
				t.Fatalf("Read = %+v, %v; want %+v", got, err, tc.want)
			}
			b, _ := os.ReadFile(filepath.Join("testdata", tc.file))
			for i := range b { // any flipped bit is damage
				b[i] ^= 0x10
				if m, ok := Decode(b); ok {
					t.Fatalf("byte %d flipped decodes as %+v", i, m)
				}
				b[i] ^= 0x10
			}
		})
	}
}

// TestRead: no file and an empty one are the zero Mark (nothing
// acknowledged yet); a file that does not decode is ErrDamaged naming it.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "SYNCED")
	if m, err := Read(name); err != nil || m != (Mark{}) {
		t.Fatalf("Read(missing) = %+v, %v", m, err)
	}
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := Read(name); err != nil || m != (Mark{}) {
		t.Fatalf("Read(empty) = %+v, %v", m, err)
	}
	for _, m := range []Mark{{Seq: 7}, {Seg: 2, Seq: 9}} {
		if err := f.Write(m); err != nil {
			t.Fatal(err)
		}
		if got, err := Read(name); err != nil || got != m {
			t.Fatalf("Read after Write(%+v) = %+v, %v", m, got, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte("UHSYNC02 cut"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(name); !errors.Is(err, ErrDamaged) || !bytes.Contains([]byte(err.Error()), []byte(name)) {
		t.Fatalf("Read(damaged) = %v, want ErrDamaged naming the file", err)
	}
}

// FuzzDecode: the decoder never panics, and what it decodes as the
// current format encodes back to its input.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"mark.golden", "index-v1.golden", "keytable-v1.golden"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok := Decode(data)
		if ok && len(data) == Size && string(data[:8]) == magic && !bytes.Equal(m.AppendBinary(nil), data) {
			t.Fatalf("Decode(%x) = %+v does not encode back", data, m)
		}
	})
}
