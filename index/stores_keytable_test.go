package index

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestKeyTableModel runs the same random operations on an index with a
// key table (a small delta, so that merges run) and on one without, and
// compares every answer, across reopenings: the index without one is the
// slow, obviously correct version.
func TestKeyTableModel(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ktDir, refDir := t.TempDir(), t.TempDir()
			ktOpts := &Options{KeyTable: true, keyTableDelta: 50}
			kt := mustOpen(t, ktDir, ktOpts)
			ref := mustOpen(t, refDir, &Options{NoKeyTable: true})
			rng := rand.New(rand.NewPCG(seed, 7))
			keys := make([]hashkey.Hash, 400)
			for i := range keys {
				keys[i] = hashkey.Sum(fmt.Appendf(nil, "%d", i))
			}
			pick := func(n int) []store.Entry {
				es := make([]store.Entry, n)
				for i := range es {
					es[i] = store.FullEntry(keys[rng.IntN(len(keys))], store.Value{})
					if rng.IntN(8) == 0 {
						es[i].Value.Text = []byte("v")
					}
				}
				return es
			}
			same := func(op string, a, b any, errA, errB error) {
				t.Helper()
				if fmt.Sprint(a, errA) != fmt.Sprint(b, errB) {
					t.Fatalf("%s: key table %v %v, reference %v %v", op, a, errA, b, errB)
				}
			}
			for step := range 300 {
				switch op := rng.IntN(10); {
				case op < 4:
					es := pick(1 + rng.IntN(60))
					a, errA := kt.AddBatch(context.Background(), slices.Clone(es))
					b, errB := ref.AddBatch(context.Background(), slices.Clone(es))
					same("AddBatch", a, b, errA, errB)
				case op == 4:
					es := pick(1 + rng.IntN(5))
					same("PutBatch", nil, nil, kt.PutBatch(context.Background(), slices.Clone(es)), ref.PutBatch(context.Background(), slices.Clone(es)))
				case op == 5:
					e := pick(1)[0]
					same("Delete", nil, nil, kt.Delete(context.Background(), e), ref.Delete(context.Background(), e))
				case op == 6:
					es := pick(3)
					a, errA := kt.VisitBatch(context.Background(), slices.Clone(es), 0)
					b, errB := ref.VisitBatch(context.Background(), slices.Clone(es), 0)
					same("VisitBatch", a, b, errA, errB)
				case op == 7 && step%5 == 0:
					p := keys[rng.IntN(len(keys))]
					fa, pa, errA := kt.DeletePrefix(context.Background(), p[:1], 5)
					fb, pb, errB := ref.DeletePrefix(context.Background(), p[:1], 5)
					same("DeletePrefix", [2]int64{fa, pa}, [2]int64{fb, pb}, errA, errB)
				case op == 9 && step%4 == 0:
					es := pick(1 + rng.IntN(40))
					a, errA := kt.Load(context.Background(), slices.Values(slices.Clone(es)))
					b, errB := ref.Load(context.Background(), slices.Values(slices.Clone(es)))
					same("Load", [2]int64{a.Added, a.Present}, [2]int64{b.Added, b.Present}, errA, errB)
				case op == 8 && step%20 == 0:
					if err := kt.Close(); err != nil {
						t.Fatal(err)
					}
					kt = mustOpen(t, ktDir, nil) // the key table is kept without the option
				default:
					hs := make([]hashkey.Hash, 50)
					for i := range hs {
						hs[i] = keys[rng.IntN(len(keys))]
					}
					a, errA := kt.HasBatch(context.Background(), slices.Clone(hs))
					b, errB := ref.HasBatch(context.Background(), slices.Clone(hs))
					same("HasBatch", a, b, errA, errB)
					for _, h := range hs[:5] {
						va, errA := kt.Get(context.Background(), h)
						vb, errB := ref.Get(context.Background(), h)
						same("Get", string(va.Text), string(vb.Text), errA, errB)
						ha, errA := kt.Has(context.Background(), h)
						hb, errB := ref.Has(context.Background(), h)
						same("Has", ha, hb, errA, errB)
						ma, oka, errA := kt.Match(context.Background(), h)
						mb, okb, errB := ref.Match(context.Background(), h)
						same("Match", fmt.Sprint(ma.Len, oka), fmt.Sprint(mb.Len, okb), errA, errB)
					}
				}
			}
			dump := func(db *DB) string {
				var b strings.Builder
				if err := db.ForEach(context.Background(), func(e store.Entry) error {
					fmt.Fprintf(&b, "%x %q %v\n", e.Key(), e.Value.Text, e.Value.HasTimes())
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				full, prefixes, err := db.Count(context.Background(), nil, 0)
				fmt.Fprintf(&b, "count %d %d %v\n", full, prefixes, err)
				full, prefixes, err = db.Count(context.Background(), keys[0][:1], 6)
				fmt.Fprintf(&b, "count %d %d %v\n", full, prefixes, err)
				st, err := db.Stats(context.Background())
				fmt.Fprintf(&b, "stats %d %d %v\n", st.Entries, st.PrefixEntries, err)
				n := 0
				db.Scan(context.Background(), nil, 0, 7, func(store.Entry) error { n++; return nil })
				fmt.Fprintf(&b, "limit %d\n", n)
				return b.String()
			}
			if a, b := dump(kt), dump(ref); a != b {
				t.Fatalf("contents differ:\nkey table:\n%s\nreference:\n%s", a, b)
			}
			if err := kt.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !kt.st.hasKeyTable() || kt.st.format != formatValues {
				t.Fatalf("no key table (format %d)", kt.st.format)
			}
		})
	}
}

// An index of format 1 opened with KeyTable upgrades to format 3: its
// full entries move into the key table, where new ones go too, values and
// all, and every one is found.
func TestKeyTableUpgrade(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{NoKeyTable: true})
	old := hashkey.Sum([]byte("old"))
	if _, err := db.AddBatch(context.Background(), []store.Entry{store.FullEntry(old, store.Value{})}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = mustOpen(t, dir, &Options{KeyTable: true})
	nw := hashkey.Sum([]byte("new"))
	added, err := db.AddBatch(context.Background(), []store.Entry{store.FullEntry(old, store.Value{}), store.FullEntry(nw, store.Value{})})
	if err != nil || !slices.Equal(added, []bool{false, true}) {
		t.Fatalf("AddBatch = %v, %v", added, err)
	}
	if db.st.kt.Len() != 2 {
		t.Fatalf("key table holds %d keys, want 2", db.st.kt.Len())
	}
	// Load: every full entry to the key table.
	loaded := hashkey.Sum([]byte("loaded"))
	valued := hashkey.Sum([]byte("valued"))
	res, err := db.Load(context.Background(), slices.Values([]store.Entry{store.FullEntry(old, store.Value{}), store.FullEntry(loaded, store.Value{}),
		store.FullEntry(valued, store.Value{Text: []byte("u")})}))
	if err != nil || res.Added != 2 || res.Present != 1 {
		t.Fatalf("Load = %+v, %v", res, err)
	}
	if db.st.kt.Len() != 4 {
		t.Fatalf("key table holds %d keys after the load, want 4", db.st.kt.Len())
	}
	if v, err := db.Get(context.Background(), valued); err != nil || string(v.Text) != "u" {
		t.Fatalf("Get(valued) = %v, %v", v, err)
	}
	st, _ := db.Stats(context.Background())
	if st.Entries != 4 || st.FormatVersion != formatValues {
		t.Fatalf("stats: %d entries, format %d", st.Entries, st.FormatVersion)
	}
	db.Close()
	// A crash (no Close) keeps what was acknowledged: the filter is
	// rebuilt, since the snapshot predates the key table's writes.
	db = mustOpen(t, dir, nil)
	more := hashkey.Sum([]byte("more"))
	db.AddBatch(context.Background(), []store.Entry{store.FullEntry(more, store.Value{})})
	if err := db.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, dir)
	defer db.Close() // once the copy, taken as by a crash, is checked
	db2 := mustOpen(t, crashed, nil)
	// Closed before the copy's directory is removed: its background work
	// (merges) wrote into it while it was removed ("directory not empty").
	defer db2.Close()
	for _, h := range []hashkey.Hash{old, nw, more} {
		if ok, err := db2.Has(context.Background(), h); !ok || err != nil {
			t.Fatalf("Has(%x) after a crash = %v, %v", h[:4], ok, err)
		}
	}
	if err := db2.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestKeyTableBackupChain: a full backup of an index with a key table,
// then incremental ones while keys are added, deleted, given values
// (moved to Badger) and added again, restore into a new index that then
// holds exactly what the source holds, deletions included; into an index
// without a key table too (it gets one).
func TestKeyTableBackupChain(t *testing.T) {
	src := mustOpen(t, t.TempDir(), &Options{KeyTable: true, keyTableDelta: 64})
	key := func(i int) hashkey.Hash { return hashkey.Sum(fmt.Appendf(nil, "k%d", i)) }
	add := func(lo, hi int) {
		t.Helper()
		var es []store.Entry
		for i := lo; i < hi; i++ {
			es = append(es, store.FullEntry(key(i), store.Value{}))
		}
		if _, err := src.AddBatch(context.Background(), es); err != nil {
			t.Fatal(err)
		}
	}
	var backups [][]byte
	since := uint64(0)
	take := func() {
		t.Helper()
		var b bytes.Buffer
		info, err := src.Backup(&b, since)
		if err != nil {
			t.Fatal(err)
		}
		since = info.Until
		backups = append(backups, b.Bytes())
	}
	add(0, 500)
	if err := src.PutPrefix(context.Background(), []byte{1, 2, 3, 4}, store.Value{Data: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	take()
	add(400, 800)
	for _, i := range []int{0, 1, 2, 450} {
		if err := src.Delete(context.Background(), store.FullEntry(key(i), store.Value{})); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.Put(context.Background(), key(3), store.Value{Text: []byte("moved")}); err != nil { // to Badger
		t.Fatal(err)
	}
	take()
	if err := src.Delete(context.Background(), store.FullEntry(key(3), store.Value{})); err != nil {
		t.Fatal(err)
	}
	add(0, 2) // deleted, then added again
	take()
	if src.st.kt.Len() == 0 {
		t.Fatal("the source's key table is empty")
	}
	dump := func(db *DB) string {
		var b strings.Builder
		if err := db.ForEach(context.Background(), func(e store.Entry) error {
			fmt.Fprintf(&b, "%x %q\n", e.Key(), e.Value.Text)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		st, err := db.Stats(context.Background())
		fmt.Fprintf(&b, "stats %d %d %v\n", st.Entries, st.PrefixEntries, err)
		return b.String()
	}
	for _, opts := range []*Options{{KeyTable: true}, nil} {
		dst := mustOpen(t, t.TempDir(), opts)
		for i, b := range backups {
			if _, err := dst.Restore(bytes.NewReader(b)); err != nil {
				t.Fatalf("restore %d: %v", i, err)
			}
		}
		if got, want := dump(dst), dump(src); got != want {
			t.Fatalf("restored index differs from the source:\n%s\nsource:\n%s", got, want)
		}
		for _, i := range []int{2, 3, 450} {
			if ok, err := dst.Has(context.Background(), key(i)); ok || err != nil {
				t.Errorf("Has(deleted %d) = %v, %v", i, ok, err)
			}
		}
		if !dst.st.hasKeyTable() {
			t.Error("the restored index has no key table")
		}
		if err := dst.Verify(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// A damaged key-table section is refused.
	b := bytes.Clone(backups[0])
	b[len(backupMagicV3)+20] ^= 1
	if _, err := mustOpen(t, t.TempDir(), nil).Restore(bytes.NewReader(b)); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Restore(damaged) = %v, want ErrCorrupt", err)
	}
}

// TestKeyTableRecordCrash: a batch with an idempotency record whose keys
// reached the key table's log but whose record did not reach Badger (a
// crash between the two) has its record after the crash: the log entry
// carries it, and Open writes it to Badger. A retry then gets the first
// answer, never "present" for keys it never reported.
func TestKeyTableRecordCrash(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{KeyTable: true})
	es := []store.Entry{
		store.FullEntry(hashkey.Sum([]byte("a")), store.Value{}),
		store.FullEntry(hashkey.Sum([]byte("b")), store.Value{}),
	}
	rec := func(answer string) *Record {
		return &Record{Key: "batch-1", TTL: time.Hour, Answer: func(added []bool) []byte { return fmt.Appendf(nil, "%s %v", answer, added) }}
	}
	errCrash := errors.New("crash")
	db.st.testRecordCrash = func() error { return errCrash }
	if _, err := db.AddBatchRecorded(context.Background(), slices.Clone(es), rec("first")); !errors.Is(err, errCrash) {
		t.Fatalf("AddBatchRecorded = %v, want the crash", err)
	}
	if _, ok, _ := db.Recorded("batch-1"); ok {
		t.Fatal("the record reached Badger before the crash")
	}
	crashed := copyDir(t, dir) // the process dies here: its files stay as they are
	db2 := mustOpen(t, crashed, nil)
	b, ok, err := db2.Recorded("batch-1")
	if err != nil || !ok || string(b) != "first [true true]" {
		t.Fatalf("Recorded after the crash = %q, %v, %v; want the first answer", b, ok, err)
	}
	for _, e := range es {
		if ok, err := db2.Has(context.Background(), e.Hash); !ok || err != nil {
			t.Fatalf("Has(%x) after the crash = %v, %v", e.Hash[:4], ok, err)
		}
	}
	// The log is merged at Open (and its segments dropped): the record
	// stays, durable in Badger.
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
	db3 := mustOpen(t, crashed, nil)
	if b, ok, err := db3.Recorded("batch-1"); err != nil || !ok || string(b) != "first [true true]" {
		t.Fatalf("Recorded after a merge and a reopen = %q, %v, %v", b, ok, err)
	}
	// Without a crash the record is in Badger at once, and an add that
	// finds every key present stores a record too (not Lazy).
	db.st.testRecordCrash = nil
	c := store.FullEntry(hashkey.Sum([]byte("c")), store.Value{})
	if _, err := db.AddBatchRecorded(context.Background(), []store.Entry{c}, rec("second")); err != nil {
		t.Fatal(err)
	}
	if b, ok, _ := db.Recorded("batch-1"); !ok || string(b) != "second [true]" {
		t.Fatalf("Recorded = %q, %v", b, ok)
	}
	if _, err := db.AddBatchRecorded(context.Background(), []store.Entry{c}, &Record{Key: "batch-2", TTL: time.Hour, Answer: func(added []bool) []byte { return fmt.Append(nil, added) }}); err != nil {
		t.Fatal(err)
	}
	if b, ok, _ := db.Recorded("batch-2"); !ok || string(b) != "[false]" {
		t.Fatalf("Recorded(batch-2) = %q, %v", b, ok)
	}
}

// FuzzRecordNotes: the decoder of the idempotency records' notes a
// key-table log entry carries never panics, its cost is bounded by its input, and what it
// decodes encodes back to the input.
func FuzzRecordNotes(f *testing.F) {
	f.Add(appendRecordNote(nil, "k", 1<<40, []byte("answer")))
	f.Add(appendRecordNote(appendRecordNote(nil, "a", 1, nil), "b", 2, []byte{0}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{1, 'k', 0, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var again []byte
		err := decodeRecordNotes(b, func(key string, expires int64, answer []byte) error {
			again = appendRecordNote(again, key, expires, answer)
			return nil
		})
		if err == nil && !bytes.Equal(again, b) {
			// Uvarints have several encodings: compare decoded forms.
			var a1, a2 []string
			decodeRecordNotes(b, func(key string, x int64, ans []byte) error { a1 = append(a1, fmt.Sprint(key, x, ans)); return nil })
			decodeRecordNotes(again, func(key string, x int64, ans []byte) error { a2 = append(a2, fmt.Sprint(key, x, ans)); return nil })
			if !slices.Equal(a1, a2) {
				t.Fatalf("decoded %v, re-encoded decodes to %v", a1, a2)
			}
		}
	})
}

var writeGoldenBackup = flag.Bool("write-backup-v3", false, "write testdata/backup-v3-*.bak")

// TestRestoreVersion3: the backups of an index with a key table
// (testdata/backup-v3-*.bak: 20 key-only entries, a valued one and a
// prefix entry; then "k0" deleted, "k1" given a value and "z" added) keep
// restoring: the bytes of the format are pinned.
func TestRestoreVersion3(t *testing.T) {
	names := []string{"testdata/backup-v3-full.bak", "testdata/backup-v3-incr.bak"}
	if *writeGoldenBackup {
		src := mustOpen(t, t.TempDir(), &Options{KeyTable: true, Profile: "p"})
		var es []store.Entry
		for i := range 20 {
			es = append(es, store.FullEntry(hashOf(fmt.Sprintf("k%d", i)), store.Value{}))
		}
		if _, err := src.AddBatch(context.Background(), es); err != nil {
			t.Fatal(err)
		}
		if err := src.Put(context.Background(), hashOf("v"), store.Value{Text: []byte("v")}); err != nil {
			t.Fatal(err)
		}
		if err := src.PutPrefix(context.Background(), []byte{1, 2, 3, 4}, store.Value{}); err != nil {
			t.Fatal(err)
		}
		var full, incr bytes.Buffer
		info, err := src.Backup(&full, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Delete(context.Background(), store.FullEntry(hashOf("k0"), store.Value{})); err != nil {
			t.Fatal(err)
		}
		if err := src.Put(context.Background(), hashOf("k1"), store.Value{Text: []byte("one")}); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Add(context.Background(), hashOf("z"), store.Value{}); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Backup(&incr, info.Until); err != nil {
			t.Fatal(err)
		}
		for i, b := range [][]byte{full.Bytes(), incr.Bytes()} {
			if err := os.WriteFile(names[i], b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	dst := mustOpen(t, t.TempDir(), nil)
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(backupMagicV3)) {
			t.Fatalf("%s is not a version 3 backup", name)
		}
		if _, err := dst.Restore(bytes.NewReader(b)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	full, prefixes, err := dst.Count(context.Background(), nil, 0)
	if err != nil || full != 21 || prefixes != 1 {
		t.Fatalf("Count = %d, %d, %v; want 21, 1", full, prefixes, err)
	}
	for _, c := range []struct {
		key, text string
		want      bool
	}{{"k0", "", false}, {"k1", "one", true}, {"k2", "", true}, {"v", "v", true}, {"z", "", true}} {
		v, err := dst.Get(context.Background(), hashOf(c.key))
		if got := err == nil; got != c.want || string(v.Text) != c.text {
			t.Errorf("Get(%s) = %q, %v; want %q, present %v", c.key, v.Text, err, c.text, c.want)
		}
	}
	if !dst.st.hasKeyTable() || dst.st.kt.Len() != 19 {
		t.Fatalf("the restored key table holds %v, want the 19 key-only entries", dst.st.kt.Len())
	}
	if err := dst.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestKeyTableSyncSkipsBadger: Sync makes Badger durable (a sync number
// written, an fsync) only when Badger has a write the key table's log
// does not hold: not after adds of key-only entries, nor after their
// idempotency records, nor after a write of a value; after a write of a
// prefix entry (Badger's), it does.
func TestKeyTableSyncSkipsBadger(t *testing.T) {
	db := mustOpen(t, t.TempDir(), nil)
	n := 0
	add := func(rec *Record) {
		t.Helper()
		n++
		es := []store.Entry{store.FullEntry(hashOf(fmt.Sprint("k", n)), store.Value{})}
		if _, err := db.AddBatchRecorded(context.Background(), es, rec); err != nil {
			t.Fatal(err)
		}
		if err := db.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	add(nil) // the first write marks the filter snapshot stale, in Badger
	add(nil)
	seq := db.st.acked.seq
	add(nil)
	add(&Record{Key: "r1", TTL: time.Hour, Answer: func([]bool) []byte { return []byte("a") }})
	add(&Record{Key: "r2", TTL: time.Hour, Answer: func([]bool) []byte { return []byte("b") }})
	if db.st.acked.seq != seq {
		t.Fatalf("Sync synced Badger for key-table writes (sync number %d, then %d)", seq, db.st.acked.seq)
	}
	if err := db.Put(context.Background(), hashOf("v"), store.Value{Text: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if db.st.acked.seq != seq {
		t.Fatalf("Sync synced Badger after a write of a value (sync number %d, then %d)", seq, db.st.acked.seq)
	}
	h := hashOf("p")
	p, err := store.PrefixEntry(h[:4], store.Value{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutBatch(context.Background(), []store.Entry{p}); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if db.st.acked.seq == seq {
		t.Fatal("Sync did not sync Badger after a write of a prefix entry")
	}
	if b, ok, _ := db.Recorded("r2"); !ok || string(b) != "b" {
		t.Fatalf("Recorded(r2) = %q, %v", b, ok)
	}
}
