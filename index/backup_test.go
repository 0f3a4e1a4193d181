package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/store"
)

// TestBackupChain: a full backup, then incremental ones taken while the
// index changes (adds, replaced values, deletes), restore into a new index
// that then holds exactly what the source holds; a cut or damaged backup
// is refused, and so is a gap in the chain.
func TestBackupChain(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t, false, &Options{Profile: "urlhash+sha256"})
	put := func(lo, hi int, text string) {
		var es []store.Entry
		for i := lo; i < hi; i++ {
			es = append(es, store.FullEntry(hashOf(string(rune('a'+i%26))+string(rune(i))), store.Value{Text: []byte(text)}))
		}
		if err := src.PutBatch(ctx, es); err != nil {
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
	if err := src.PutPrefix(ctx, []byte{1, 2, 3, 4}, store.Value{Data: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	take()
	put(2000, 4000, "two") // 1000 replaced, 1000 new
	if err := src.Delete(ctx, store.FullEntry(hashOf("a"+string(rune(0))), store.Value{})); err != nil {
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
	if dst.profileName() != "urlhash+sha256" {
		t.Errorf("restored profile %q", dst.profileName())
	}
	if ok, _ := dst.Has(ctx, hashOf("a"+string(rune(0)))); ok {
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
	err := db.ForEach(context.Background(), func(e store.Entry) error {
		out = store.AppendJSONL(out, &e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBackupCarriesDeletionsAfterCompaction: deletions (single keys and
// DeletePrefix, full and prefix entries) between a full and an
// incremental backup reach the restored index even when compaction has
// dropped their markers from the source before the incremental was taken
// (issue 21, item 2: every deleted key came back).
func TestBackupCarriesDeletionsAfterCompaction(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := mustOpen(t, dir, &Options{Profile: "urlhash+sha256"})
	var es []store.Entry
	for i := range 6000 {
		es = append(es, store.FullEntry(hashOf("k"+strconv.Itoa(i)), store.Value{}))
	}
	if err := src.PutBatch(ctx, es); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := src.PutPrefix(ctx, []byte{0xab, byte(i), 1, 2}, store.Value{}); err != nil {
			t.Fatal(err)
		}
	}
	var full bytes.Buffer
	info, err := src.Backup(&full, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := src.Delete(ctx, es[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := src.DeletePrefix(ctx, []byte{0xab}, 8); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.DeletePrefix(ctx, []byte{0x01, 0x80}, 9); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.DeletePrefix(ctx, []byte{0x80}, 1); err != nil {
		t.Fatal(err)
	}
	// Flush the memtable, then compact everything into one level: the
	// deletion markers go.
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	src = mustOpen(t, dir, nil)
	defer src.Close()
	if err := src.st.bdb.Flatten(1); err != nil {
		t.Fatal(err)
	}
	if err := src.st.bdb.DropPrefix([]byte{0xff}); err != nil { // forces a compaction of every level
		t.Fatal(err)
	}
	var incr bytes.Buffer
	if _, err := src.Backup(&incr, info.Until); err != nil {
		t.Fatal(err)
	}
	dst := openTestDB(t, false, nil)
	for i, b := range [][]byte{full.Bytes(), incr.Bytes()} {
		if _, err := dst.Restore(bytes.NewReader(b)); err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
	}
	if got, want := exportAll(t, dst), exportAll(t, src); !bytes.Equal(got, want) {
		gf, gp, _ := dst.Count(ctx, nil, 0)
		wf, wp, _ := src.Count(ctx, nil, 0)
		t.Fatalf("restored index has %d entries and %d prefix entries, the source %d and %d", gf, gp, wf, wp)
	}
	if err := dst.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreVersion1: backups written before the key set (format 1,
// testdata/backup-v1-*.bak: 20 entries and a prefix entry, then one
// deleted and one added) still restore.
func TestRestoreVersion1(t *testing.T) {
	ctx := context.Background()
	dst := openTestDB(t, false, nil)
	for _, name := range []string{"testdata/backup-v1-full.bak", "testdata/backup-v1-incr.bak"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.Restore(bytes.NewReader(b)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	full, prefixes, err := dst.Count(ctx, nil, 0)
	if err != nil || full != 20 || prefixes != 1 {
		t.Fatalf("Count = %d, %d, %v; want 20, 1", full, prefixes, err)
	}
	for _, c := range []struct {
		key  string
		want bool
	}{{"a", false}, {"b", true}, {"z1", true}} {
		if got, _ := dst.Has(ctx, hashOf(c.key)); got != c.want {
			t.Errorf("Has(%s) = %v, want %v", c.key, got, c.want)
		}
	}
}

// TestScanReportsBadValueByKey: a stored value that cannot be decoded (one
// written before values were checked) is reported by its key, after the
// scan has handed over every other entry; Verify names it too.
func TestScanReportsBadValueByKey(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, true, nil)
	for i := range 10 {
		if err := db.Put(ctx, hashOf(strconv.Itoa(i)), store.Value{}); err != nil {
			t.Fatal(err)
		}
	}
	bad := hashOf("5")
	k := fullKey(&bad)
	poison := binary.AppendVarint([]byte{valueTimes}, math.MaxInt64)
	poison = binary.AppendUvarint(poison, 0)
	if err := db.st.bdb.Update(func(txn *badger.Txn) error { return txn.Set(k[:], append(poison, 0)) }); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := db.Scan(ctx, nil, 0, 0, func(store.Entry) error { n++; return nil })
	if n != 9 || !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), bad.String()) {
		t.Errorf("Scan handed over %d entries and returned %v; want 9 and an error naming %s", n, err, bad)
	}
	if err := db.Verify(ctx); err == nil || !strings.Contains(err.Error(), bad.String()) {
		t.Errorf("Verify = %v, want an error naming %s", err, bad)
	}
}

// TestRestoreKeepsExpiring: entries with an expiry, restored, are counted
// as such (issue 21, item 11: stats said "expiring entries: 0").
func TestRestoreKeepsExpiring(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t, false, nil)
	in := time.Now().Add(time.Hour)
	for i := range 10 {
		v := store.Value{}
		if i%2 == 0 {
			v.Expires = in
		}
		if err := src.Put(ctx, hashOf(strconv.Itoa(i)), v); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := src.Backup(&b, 0); err != nil {
		t.Fatal(err)
	}
	dst := openTestDB(t, false, nil)
	if _, err := dst.Restore(&b); err != nil {
		t.Fatal(err)
	}
	want, _ := src.Stats(ctx)
	got, err := dst.Stats(ctx)
	if err != nil || got.Entries != 10 || got.Expiring != 5 || got.Expiring != want.Expiring {
		t.Fatalf("restored Stats: %d entries, %d expiring, %v; want 10 and 5", got.Entries, got.Expiring, err)
	}
}

// TestUnfinishedRestoreRefused: a restore cut short (as a killed one
// leaves it) marks the directory, and Open refuses it instead of serving
// a part of the backup as a whole index (issue 21, item 9); a restore
// that ends removes the mark.
func TestUnfinishedRestoreRefused(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t, true, nil)
	for i := range 2000 {
		if err := src.Put(ctx, hashOf(strconv.Itoa(i)), store.Value{}); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := src.Backup(&b, 0); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut")
	db := mustOpen(t, cut, nil)
	if _, err := db.Restore(bytes.NewReader(b.Bytes()[:b.Len()/2])); err == nil {
		t.Fatal("a cut backup restored")
	}
	db.Close()
	for _, ro := range []bool{false, true} {
		if db, err := Open(cut, &Options{ReadOnly: ro}); err == nil {
			db.Close()
			t.Fatalf("Open (read-only %v) of an unfinished restore succeeded", ro)
		} else if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "unfinished restore") {
			t.Errorf("Open = %v, want ErrCorrupt naming the unfinished restore", err)
		}
	}
	whole := filepath.Join(t.TempDir(), "whole")
	db = mustOpen(t, whole, nil)
	if _, err := db.Restore(bytes.NewReader(b.Bytes())); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = mustOpen(t, whole, nil)
	defer db.Close()
	if s, _ := db.Stats(ctx); s.Entries != 2000 {
		t.Errorf("restored %d entries, want 2000", s.Entries)
	}
}

// TestRestoreChainMarked: a chain restored with RestoreChain keeps the
// restoring mark from its first backup until its last has restored, so
// that a chain stopped between two backups (here: the second unreadable,
// as a power cut between them would leave it) is refused rather than
// served as the whole chain; a chain that ends removes the mark.
func TestRestoreChainMarked(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t, true, nil)
	for i := range 1000 {
		if err := src.Put(ctx, hashOf(strconv.Itoa(i)), store.Value{}); err != nil {
			t.Fatal(err)
		}
	}
	var full, incr bytes.Buffer
	info, err := src.Backup(&full, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1000; i < 2000; i++ {
		if err := src.Put(ctx, hashOf(strconv.Itoa(i)), store.Value{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Backup(&incr, info.Until); err != nil {
		t.Fatal(err)
	}
	stopped := filepath.Join(t.TempDir(), "stopped")
	db := mustOpen(t, stopped, nil)
	infos, err := db.RestoreChain(bytes.NewReader(full.Bytes()), iotest.ErrReader(errors.New("the power went")))
	if err == nil || len(infos) != 1 || infos[0].Until != info.Until {
		t.Fatalf("RestoreChain = %+v, %v; want the full backup restored and the error", infos, err)
	}
	db.Close()
	if db, err := Open(stopped, nil); err == nil {
		db.Close()
		t.Fatal("Open of a chain stopped between two backups succeeded")
	} else if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "unfinished restore") {
		t.Errorf("Open = %v, want ErrCorrupt naming the unfinished restore", err)
	}
	whole := filepath.Join(t.TempDir(), "whole")
	db = mustOpen(t, whole, nil)
	if infos, err := db.RestoreChain(bytes.NewReader(full.Bytes()), bytes.NewReader(incr.Bytes())); err != nil || len(infos) != 2 {
		t.Fatalf("RestoreChain = %+v, %v", infos, err)
	}
	db.Close()
	db = mustOpen(t, whole, nil)
	defer db.Close()
	if s, _ := db.Stats(ctx); s.Entries != 2000 {
		t.Errorf("restored %d entries, want 2000", s.Entries)
	}
}

// FuzzRestore: Restore of any bytes into a fresh in-memory index never
// panics, and a backup it accepts leaves an index that verifies.
func FuzzRestore(f *testing.F) {
	ctx := context.Background()
	for _, name := range []string{"testdata/backup-v1-full.bak", "testdata/backup-v1-incr.bak"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	src, err := Open("", &Options{InMemory: true})
	if err != nil {
		f.Fatal(err)
	}
	for i := range 5 {
		src.Put(ctx, hashOf(strconv.Itoa(i)), store.Value{})
	}
	var full, incr bytes.Buffer
	info, _ := src.Backup(&full, 0)
	src.Delete(ctx, store.FullEntry(hashOf("1"), store.Value{}))
	src.Backup(&incr, info.Until)
	src.Close()
	f.Add(full.Bytes())
	f.Add(incr.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		db, err := Open("", &Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Restore(bytes.NewReader(b)); err != nil {
			return
		}
		if err := db.Verify(ctx); err != nil {
			t.Fatalf("a restored backup does not verify: %v", err)
		}
	})
}
