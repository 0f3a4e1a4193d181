package main

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestJournalRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	inputs := []string{"https://a.example/", "https://b.example/", "c"}
	if err := j.begin("key-1", 24*time.Hour, []byte("entries"), inputs); err != nil {
		t.Fatal(err)
	}
	p, err := j.pending()
	if err != nil || p == nil || p.key != "key-1" || p.revisit != 24*time.Hour || string(p.body) != "entries" || !slices.Equal(p.inputs, inputs) || p.isNew != nil {
		t.Fatalf("pending after begin = %+v, %v", p, err)
	}
	if err := j.commit([]bool{true, false, true}); err != nil {
		t.Fatal(err)
	}
	if p, err = j.pending(); err != nil || !slices.Equal(p.isNew, []bool{true, false, true}) {
		t.Fatalf("pending after commit = %+v, %v", p, err)
	}
	// Every torn prefix of the file is no batch, or the batch without
	// its commit: never a wrong one.
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(whole) {
		if err := os.WriteFile(path, whole[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := j.pending()
		if err != nil {
			t.Fatal(err)
		}
		if p != nil && (p.key != "key-1" || !slices.Equal(p.inputs, inputs) || p.isNew != nil) {
			t.Fatalf("torn at %d: %+v", n, p)
		}
	}
	if err := j.done(); err != nil {
		t.Fatal(err)
	}
	if p, err := j.pending(); p != nil || err != nil {
		t.Fatalf("pending after done = %+v, %v", p, err)
	}
}

// TestClaimJournal: runs at once get journals of their own; a journal a
// run left (its lock released) is an orphan to the next.
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
	if err := a.begin("k", -1, nil, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	a.close() // killed
	c, orphans, err := claimJournal(dir)
	if err != nil || c.path != a.path || len(orphans) != 0 {
		t.Fatalf("third claim: %v, %d orphans, %v; want the killed run's journal", c.path, len(orphans), err)
	}
	if p, _ := c.pending(); p == nil || p.inputs[0] != "x" {
		t.Fatalf("the killed run's batch: %+v", p)
	}
	b.close()
	c.close()
	d, orphans, err := claimJournal(dir)
	if err != nil || len(orphans) != 1 {
		t.Fatalf("fourth claim: %v, %d orphans, %v", d, len(orphans), err)
	}
	if err := orphans[0].drop(); err != nil {
		t.Fatal(err)
	}
	d.close()
	names, _ := os.ReadDir(dir)
	if len(names) != 1 {
		t.Errorf("%d journals left, want 1", len(names))
	}
}

func FuzzJournalPending(f *testing.F) {
	dir := f.TempDir()
	j, err := openJournal(filepath.Join(dir, "seed"))
	if err != nil {
		f.Fatal(err)
	}
	j.begin("key", -1, []byte("body"), []string{"a", "b"})
	j.commit([]bool{true, false})
	seed, _ := os.ReadFile(j.path)
	j.close()
	f.Add(seed)
	f.Add([]byte(journalMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "j")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := openJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.close()
		p, err := j.pending()
		if err != nil || p == nil {
			return
		}
		if p.isNew != nil && len(p.isNew) != len(p.inputs) {
			t.Fatalf("%d answers for %d inputs", len(p.isNew), len(p.inputs))
		}
	})
}

// TestJournalGolden pins the journal's bytes (URLHASH_UPDATE_GOLDEN=1
// rewrites the file).
func TestJournalGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := openJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.close()
	if err := j.begin("0123456789abcdef", -1, []byte{0x20, 1, 2}, []string{"https://a.example/", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := j.commit([]bool{true, false}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "journal-v2.golden", got)
}

// TestJournalV1: a journal an older urlhash left (no key, no body) is
// finished: its stored inputs are printed.
func TestJournalV1(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if out, err := cli(t, "https://a.example/\n", "add", "--db", dir); err != nil {
		t.Fatal(out, err)
	}
	// The v1 layout: magic, count, inputs, CRC-32C; no commit record.
	b := []byte(journalMagicV1)
	inputs := []string{"https://a.example/", "https://b.example/", "not a url"}
	b = binary.AppendUvarint(b, uint64(len(inputs)))
	for _, in := range inputs {
		b = binary.AppendUvarint(b, uint64(len(in)))
		b = append(b, in...)
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	if err := os.WriteFile(filepath.Join(dir, "urlhash.dedupe"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := cli(t, "", "dedupe", "--db", dir)
	if err != nil || out != "https://a.example/\n" {
		t.Fatalf("dedupe after a v1 journal: %q, %v; want the stored input", out, err)
	}
	if out, err := cli(t, "", "dedupe", "--db", dir); err != nil || out != "" {
		t.Fatalf("the journal was not cleared: %q, %v", out, err)
	}
}
