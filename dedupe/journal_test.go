package dedupe

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/internal/golden"
)

// TestJournalRoundTrip: what begin and commit write, pending reads back;
// every torn prefix of the file is no batch, or the batch without its
// commit: never a wrong one; done clears it.
func TestJournalRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		index   string
		revisit time.Duration
		inputs  []string
		isNew   []bool
	}{
		{"add", "0123456789abcdef0123456789abcdef", -1, []string{"https://a.example/", "https://b.example/", "c"}, []bool{true, false, true}},
		{"visit", "0123456789abcdef0123456789abcdef", 24 * time.Hour, []string{"x"}, []bool{false}},
		{"an index without identity", "", -1, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, []bool{true, true, true, true, true, true, true, true, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			j, err := openJournal(path)
			if err != nil {
				t.Fatal(err)
			}
			defer j.f.Close()
			if err := j.begin(tc.index, "key-1", tc.revisit, []byte("entries"), tc.inputs); err != nil {
				t.Fatal(err)
			}
			p, err := j.pending()
			if err != nil || p == nil || p.index != tc.index || p.key != "key-1" || p.revisit != tc.revisit ||
				string(p.body) != "entries" || !slices.Equal(p.inputs, tc.inputs) || p.isNew != nil || p.version != 3 {
				t.Fatalf("pending after begin = %+v, %v", p, err)
			}
			if err := j.commit(tc.isNew); err != nil {
				t.Fatal(err)
			}
			if p, err = j.pending(); err != nil || !slices.Equal(p.isNew, tc.isNew) {
				t.Fatalf("pending after commit = %+v, %v", p, err)
			}
			whole, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for n := range len(whole) {
				p := parseJournal(whole[:n])
				if p != nil && (p.key != "key-1" || p.index != tc.index || !slices.Equal(p.inputs, tc.inputs) || p.isNew != nil) {
					t.Fatalf("torn at %d: %+v", n, p)
				}
			}
			if err := j.done(); err != nil {
				t.Fatal(err)
			}
			if p, err := j.pending(); p != nil || err != nil {
				t.Fatalf("pending after done = %+v, %v", p, err)
			}
		})
	}
}

// TestJournalGolden pins the journal's bytes (go test -update rewrites
// the file) and reads the journal of the version before identities.
func TestJournalGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.f.Close()
	inputs := []string{"https://a.example/", "b"}
	if err := j.begin("00112233445566778899aabbccddeeff", "0123456789abcdef", -1, []byte{0x20, 1, 2}, inputs); err != nil {
		t.Fatal(err)
	}
	if err := j.commit([]bool{true, false}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/journal-v3.golden", got)

	v2, err := os.ReadFile("testdata/journal-v2.golden")
	if err != nil {
		t.Fatal(err)
	}
	p := parseJournal(v2)
	if p == nil || p.version != 2 || p.index != "" || p.key != "0123456789abcdef" || p.revisit != -1 ||
		string(p.body) != "\x20\x01\x02" || !slices.Equal(p.inputs, inputs) || !slices.Equal(p.isNew, []bool{true, false}) {
		t.Fatalf("the version 2 journal reads as %+v", p)
	}
}

// v1Journal returns the journal of urlhash before the Idempotency-Key:
// magic, count, inputs, CRC-32C; no commit.
func v1Journal(inputs ...string) []byte {
	b := []byte(journalMagicV1)
	b = binary.AppendUvarint(b, uint64(len(inputs)))
	for _, in := range inputs {
		b = binary.AppendUvarint(b, uint64(len(in)))
		b = append(b, in...)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
}

// TestClaimJournal: clients at once get journals of their own; a journal
// a client left (its lock released) is an orphan to the next; release
// removes a journal that holds nothing and keeps one with a batch.
func TestClaimJournal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "journals")
	a, orphans, err := claimJournal(dir)
	if err != nil || len(orphans) != 0 {
		t.Fatal(orphans, err)
	}
	b, orphans, err := claimJournal(dir)
	if err != nil || len(orphans) != 0 || b.path == a.path {
		t.Fatalf("second claim: %v, %v, %v", b.path, orphans, err)
	}
	if err := a.begin("", "k", -1, nil, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	a.f.Close() // killed
	c, orphans, err := claimJournal(dir)
	if err != nil || c.path != a.path || len(orphans) != 0 {
		t.Fatalf("third claim: %v, %d orphans, %v; want the killed client's journal", c.path, len(orphans), err)
	}
	if p, _ := c.pending(); p == nil || p.inputs[0] != "x" {
		t.Fatalf("the killed client's batch: %+v", p)
	}
	b.f.Close() // killed, holding nothing
	c.f.Close() // killed, still holding x
	d, orphans, err := claimJournal(dir)
	if err != nil || len(orphans) != 1 {
		t.Fatalf("fourth claim: %v, %d orphans, %v", d, len(orphans), err)
	}
	for _, j := range append(orphans, d) {
		if err := j.release(); err != nil {
			t.Fatal(err)
		}
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 || filepath.Join(dir, names[0].Name()) != a.path {
		t.Errorf("journals left: %v, want only %s (it holds a batch)", names, a.path)
	}
}

// TestOpenJournalRemoved: a journal its holder removes (finished) while
// another client waits to open it is opened anew: the second client never
// writes into a file no name reaches.
func TestOpenJournalRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run-0.journal")
	a, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openJournal(path); !errors.Is(err, ErrJournalBusy) {
		t.Fatalf("second open while held: %v, want ErrJournalBusy", err)
	}
	old, err := os.Open(path) // as a client that opened it before the removal
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := a.release(); err != nil {
		t.Fatal(err)
	}
	b, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.f.Close()
	held, _ := b.f.Stat()
	named, err := os.Stat(path)
	if err != nil || !os.SameFile(held, named) {
		t.Fatalf("the journal opened is not the file named %s: %v", path, err)
	}
}

func FuzzParseJournal(f *testing.F) {
	dir := f.TempDir()
	j, err := openJournal(filepath.Join(dir, "seed"))
	if err != nil {
		f.Fatal(err)
	}
	j.begin("00112233445566778899aabbccddeeff", "key", -1, []byte("body"), []string{"a", "b"})
	j.commit([]bool{true, false})
	seed, _ := os.ReadFile(j.path)
	j.f.Close()
	f.Add(seed)
	f.Add([]byte(journalMagic))
	f.Add(v1Journal("a", "b"))
	if v2, err := os.ReadFile("testdata/journal-v2.golden"); err == nil {
		f.Add(v2)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := parseJournal(b)
		if p == nil {
			return
		}
		if p.isNew != nil && len(p.isNew) != len(p.inputs) {
			t.Fatalf("%d answers for %d inputs", len(p.isNew), len(p.inputs))
		}
		if p.version < 3 && p.index != "" || p.version < 2 && (p.key != "" || p.body != nil) {
			t.Fatalf("a version %d journal with fields it has not: %+v", p.version, p)
		}
	})
}
