package index

import (
	"bytes"
	"errors"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// TestBackupChain: a full backup, then incremental ones taken while the
// index changes (adds, replaced values, deletes), restore into a new index
// that then holds exactly what the source holds; a cut or damaged backup
// is refused, and so is a gap in the chain.
func TestBackupChain(t *testing.T) {
	src := openTestDB(t, false, &Options{Profile: "urlhash+sha256"})
	put := func(lo, hi int, text string) {
		var es []store.Entry
		for i := lo; i < hi; i++ {
			es = append(es, store.FullEntry(hashOf(string(rune('a'+i%26))+string(rune(i))), store.Value{Text: []byte(text)}))
		}
		if err := src.PutBatch(es); err != nil {
			t.Fatal(err)
		}
	}
	var backups [][]byte
	since := uint64(0)
	take := func() {
		var b bytes.Buffer
		info, err := src.Backup(&b, since)
		if err != nil {
			t.Fatal(err)
		}
		if info.Since != since || info.Profile != "urlhash+sha256" {
			t.Fatalf("BackupInfo = %+v", info)
		}
		since = info.Until
		backups = append(backups, b.Bytes())
	}
	put(0, 3000, "one")
	if err := src.PutPrefix([]byte{1, 2, 3, 4}, store.Value{Data: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	take()
	put(2000, 4000, "two") // 1000 replaced, 1000 new
	if err := src.Delete(store.FullEntry(hashOf("a"+string(rune(0))), store.Value{})); err != nil {
		t.Fatal(err)
	}
	take()
	take() // nothing changed

	dst := openTestDB(t, false, nil)
	for i, b := range backups {
		if _, err := dst.Restore(bytes.NewReader(b)); err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
	}
	if got, want := exportAll(t, dst), exportAll(t, src); !bytes.Equal(got, want) {
		t.Fatalf("restored index differs from the source (%d vs %d bytes of export)", len(got), len(want))
	}
	if dst.Profile() != "urlhash+sha256" {
		t.Errorf("restored profile %q", dst.Profile())
	}
	if ok, _ := dst.Has(hashOf("a" + string(rune(0)))); ok {
		t.Error("a deletion was not restored")
	}

	// Damage and gaps.
	full := backups[0]
	for name, b := range map[string][]byte{
		"cut":     full[:len(full)-30],
		"flipped": flip(full, len(full)/2),
		"not":     []byte("hello"),
	} {
		fresh := openTestDB(t, false, nil)
		if _, err := fresh.Restore(bytes.NewReader(b)); err == nil {
			t.Errorf("%s backup restored without error", name)
		}
	}
	gap := openTestDB(t, false, nil)
	if _, err := gap.Restore(bytes.NewReader(backups[1])); !errors.Is(err, ErrBackupGap) {
		t.Errorf("incremental into a new index: %v, want ErrBackupGap", err)
	}
	if _, err := dst.Restore(bytes.NewReader(backups[0])); !errors.Is(err, ErrBackupGap) {
		t.Errorf("full backup into a non-empty index: %v, want ErrBackupGap", err)
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x40
	return c
}

// exportAll is every entry of db as JSONL.
func exportAll(t *testing.T, db *DB) []byte {
	t.Helper()
	var out []byte
	err := db.ForEach(func(e store.Entry) error {
		out = store.AppendJSONL(out, &e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
