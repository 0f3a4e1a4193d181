package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestPlace pins the placement rule: with a key table (format 3), every
// full entry lives there and prefix entries in Badger; with one of format
// 2 (read only), key-only full entries there and everything else in
// Badger; without one, all in Badger. home (an entry), homeEncoded (a
// load's encoded entry) and bareHome (AddKeys' keys) are the one rule,
// place.
func TestPlace(t *testing.T) {
	h := hashOf("placed")
	soon := time.Unix(2_000_000_000, 0)
	for _, tc := range []struct {
		name    string
		e       store.Entry
		kt, kt2 home // with a key table of format 3, of format 2
	}{
		{"key-only", store.FullEntry(h, store.Value{}), homeKeyTable, homeKeyTable},
		{"text", store.FullEntry(h, store.Value{Text: []byte("u")}), homeKeyTable, homeBadger},
		{"data", store.FullEntry(h, store.Value{Data: []byte{0}}), homeKeyTable, homeBadger},
		{"times", store.FullEntry(h, store.Value{FirstSeen: soon, LastSeen: soon}), homeKeyTable, homeBadger},
		{"expiry", store.FullEntry(h, store.Value{Expires: soon}), homeKeyTable, homeBadger},
		{"prefix", store.Entry{Hash: h, Len: 4}, homeBadger, homeBadger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				kt     bool
				format uint64
				want   home
			}{{true, formatValues, tc.kt}, {true, formatKeyTable, tc.kt2}, {false, formatBadger, homeBadger}} {
				db := openTestDB(t, false, &Options{NoKeyTable: !c.kt})
				db.st.format = c.format
				key := dbKey(&tc.e)
				val, exp := splitLoadValue(appendLoadValue(nil, &tc.e.Value))
				if got, enc := db.st.home(&tc.e), db.st.homeEncoded(key, val, exp); got != c.want || enc != c.want {
					t.Errorf("key table %v, format %d: home = %d, homeEncoded = %d; want %d", c.kt, c.format, got, enc, c.want)
				}
				if db.st.hasKeyTable() != c.kt {
					t.Fatalf("key table %v: hasKeyTable = %v", c.kt, db.st.hasKeyTable())
				}
			}
		})
	}
	db := openTestDB(t, false, nil)
	if db.st.bareHome() != homeKeyTable || db.st.format != formatValues {
		t.Errorf("a new index: bare keys' home %d, format %d", db.st.bareHome(), db.st.format)
	}
	if mem := openTestDB(t, true, nil); mem.st.bareHome() != homeBadger {
		t.Error("bare keys of an index in memory live in the key table")
	}
}

// putLegacy stores h's entry with v in Badger behind the owner's back, as
// an index of format 2 (or a restored backup of one) left it there, and
// counts it.
func putLegacy(t *testing.T, db *DB, h hashkey.Hash, v store.Value) {
	t.Helper()
	e := store.FullEntry(h, v)
	if err := db.st.bdb.Update(func(txn *badger.Txn) error { return txn.SetEntry(badgerEntry(&e)) }); err != nil {
		t.Fatal(err)
	}
	db.st.badgerNoFull.Store(false) // as Restore of an older backup
	db.admitKeys([]hashkey.Hash{h})
	db.entries.Add(1)
}

// inBothStores writes h's value to Badger behind the owner's back, so
// that both stores hold h (the key table already does): what a move cut
// short leaves.
func inBothStores(t *testing.T, db *DB, h hashkey.Hash, v store.Value) {
	t.Helper()
	if ok, _, _ := db.st.kt.Has((*[32]byte)(&h)); !ok {
		t.Fatalf("the key table does not hold %x", h[:4])
	}
	e := store.FullEntry(h, v)
	if err := db.st.bdb.Update(func(txn *badger.Txn) error { return txn.SetEntry(badgerEntry(&e)) }); err != nil {
		t.Fatal(err)
	}
	db.st.badgerNoFull.Store(false)
}

// lookups returns what every read says of h, as one string.
func lookups(t *testing.T, db *DB, h hashkey.Hash) string {
	t.Helper()
	ctx := context.Background()
	has, err1 := db.Has(ctx, h)
	batch, err2 := db.HasBatch(ctx, []hashkey.Hash{h})
	v, err3 := db.Get(ctx, h)
	m, ok, err4 := db.Match(ctx, h)
	var scanned []string
	err5 := db.Scan(ctx, h[:], 256, 0, func(e store.Entry) error {
		scanned = append(scanned, string(e.Value.Text))
		return nil
	})
	full, _, err6 := db.Count(ctx, h[:], 256)
	if err := errors.Join(err1, err2, err5, err6); err != nil {
		t.Fatal(err)
	}
	if err3 != nil && !errors.Is(err3, store.ErrNotFound) || err4 != nil {
		t.Fatal(err3, err4)
	}
	return fmt.Sprintf("has %v batch %v get %q match %v %q scan %q count %d", has, batch[0], v.Text, ok, m.Value.Text, scanned, full)
}

// TestLookupOrder: every read answers from one order (the key table, then
// Badger), and a key both stores hold (a move out of Badger left
// unfinished) is Badger's in every read.
func TestLookupOrder(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, t.TempDir(), nil)
	defer db.Close()
	inKT, valued, inBadger, both, absent := hashOf("kt"), hashOf("valued"), hashOf("badger"), hashOf("both"), hashOf("absent")
	if _, err := db.AddBatch(ctx, []store.Entry{store.FullEntry(inKT, store.Value{}), store.FullEntry(valued, store.Value{Text: []byte("t")})}); err != nil {
		t.Fatal(err)
	}
	putLegacy(t, db, inBadger, store.Value{Text: []byte("b")})
	putLegacy(t, db, both, store.Value{Text: []byte("old")})
	errCrash := errors.New("crash")
	db.st.testMoveCrash = func() error { return errCrash }
	if err := db.Put(ctx, both, store.Value{Text: []byte("moved")}); !errors.Is(err, errCrash) {
		t.Fatalf("Put = %v, want the crash between the halves of the move", err)
	}
	db.st.testMoveCrash = nil
	for _, tc := range []struct {
		name string
		h    hashkey.Hash
		want string
	}{
		{"key table", inKT, `has true batch true get "" match true "" scan [""] count 1`},
		{"key table, a value", valued, `has true batch true get "t" match true "t" scan ["t"] count 1`},
		{"Badger", inBadger, `has true batch true get "b" match true "b" scan ["b"] count 1`},
		{"both", both, `has true batch true get "old" match true "old" scan ["old"] count 1`},
		{"absent", absent, `has false batch false get "" match false "" scan [] count 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lookups(t, db, tc.h); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	if s, _ := db.Stats(ctx); s.Entries != 4 {
		t.Errorf("Entries = %d, want 4", s.Entries)
	}
	// Close takes the move back: the next Open finds the key once, in
	// Badger, and nothing to reconcile.
	dir := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	if ok, _, _ := db.st.kt.Has((*[32]byte)(&both)); ok {
		t.Error("Close left the moved key in the key table")
	}
	if n, err := db.st.reconcile(); n != 0 || err != nil {
		t.Errorf("reconcile after a Close = %d, %v; want 0", n, err)
	}
	if got, want := lookups(t, db, both), `has true batch true get "old" match true "old" scan ["old"] count 1`; got != want {
		t.Errorf("after reopening: %s, want %s", got, want)
	}
	if err := db.Verify(ctx); err != nil {
		t.Error(err)
	}
}

// TestReconcile is Open's reconciliation step: a key both stores hold is
// Badger's; a writable index deletes the key table's copy, a read-only
// one (which must not write) answers Badger's copy all the same.
func TestReconcile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	hs := randHashes(rand.New(rand.NewPCG(35, 1)), 20)
	if _, err := db.AddBatch(ctx, entriesOf(hs)); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs[:3] {
		inBothStores(t, db, h, store.Value{Text: []byte("v")})
	}
	if err := db.Close(); err != nil { // writes a snapshot: Open would trust it
		t.Fatal(err)
	}
	// A write behind the index's back makes the snapshot stale, as a
	// crash does (and leaves no memtable log: a read-only Open is let in).
	bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(txn *badger.Txn) error { return txn.Set(metaKey("elsewhere"), nil) }); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, db *DB) {
		t.Helper()
		for i, h := range hs {
			want := `has true batch true get "" match true "" scan [""] count 1`
			if i < 3 {
				want = `has true batch true get "v" match true "v" scan ["v"] count 1`
			}
			if got := lookups(t, db, h); got != want {
				t.Errorf("key %d: %s, want %s", i, got, want)
			}
		}
		if s, _ := db.Stats(ctx); s.Entries != 20 {
			t.Errorf("Entries = %d, want 20", s.Entries)
		}
	}
	t.Run("read-only", func(t *testing.T) {
		before := snapshotDir(t, dir) + snapshotDir(t, filepath.Join(dir, keyTableDir))
		db := mustOpen(t, dir, &Options{ReadOnly: true})
		if db.snapshotUsed() {
			t.Fatal("the stale snapshot was loaded")
		}
		if n := db.st.unfinished.n.Load(); n != 3 {
			t.Errorf("%d unfinished moves noted, want 3", n)
		}
		check(t, db)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if snapshotDir(t, dir)+snapshotDir(t, filepath.Join(dir, keyTableDir)) != before {
			t.Error("a read-only Open changed the directory")
		}
	})
	t.Run("writable", func(t *testing.T) {
		db := mustOpen(t, dir, nil)
		defer db.Close()
		if db.st.kt.Len() != 17 {
			t.Errorf("the key table holds %d keys after the Open, want 17", db.st.kt.Len())
		}
		check(t, db)
		if err := db.Verify(ctx); err != nil {
			t.Error(err)
		}
		if n, err := db.st.reconcile(); n != 0 || err != nil {
			t.Errorf("reconcile again = %d, %v; want 0", n, err)
		}
	})
}

// TestMoves: every full entry lives in the key table whatever its value
// (format 3), and an entry Badger holds from an older format moves into
// the key table at its first write; a crash between a move's halves is
// settled by the next Open as Badger's (the move taken back).
func TestMoves(t *testing.T) {
	ctx := context.Background()
	h := hashOf("moving")
	v := store.Value{Text: []byte("v")}
	where := func(db *DB) string {
		inKT, _, _ := db.st.kt.Has((*[32]byte)(&h))
		k := fullKey(&h)
		txn := db.st.bdb.NewTransaction(false)
		defer txn.Discard()
		_, errB := txn.Get(k[:])
		return fmt.Sprintf("kt %v badger %v", inKT, errB == nil)
	}
	steps := []struct {
		name  string
		write func(db *DB) error
		want  string // where the key is after the write
		text  string // Get's text
	}{
		{"add", func(db *DB) error { _, err := db.Add(ctx, h, store.Value{}); return err }, "kt true badger false", ""},
		{"put a value", func(db *DB) error { return db.Put(ctx, h, v) }, "kt true badger false", "v"},
		{"put key-only", func(db *DB) error { return db.Put(ctx, h, store.Value{}) }, "kt true badger false", ""},
		{"visit", func(db *DB) error {
			_, err := db.VisitBatch(ctx, []store.Entry{store.FullEntry(h, v)}, time.Hour)
			return err
		}, "kt true badger false", "v"},
		{"delete", func(db *DB) error { return db.Delete(ctx, store.FullEntry(h, store.Value{})) }, "kt false badger false", ""},
		{"legacy", func(db *DB) error { putLegacy(t, db, h, v); return nil }, "kt false badger true", "v"},
		{"visit the legacy entry", func(db *DB) error {
			_, err := db.VisitBatch(ctx, []store.Entry{store.FullEntry(h, store.Value{})}, time.Hour)
			return err
		}, "kt true badger false", "v"},
	}
	db := mustOpen(t, t.TempDir(), nil)
	defer db.Close()
	for _, s := range steps {
		if err := s.write(db); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := where(db); got != s.want {
			t.Errorf("%s: %s, want %s", s.name, got, s.want)
		}
		got, err := db.Get(ctx, h)
		if s.name == "delete" {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: Get = %v", s.name, err)
			}
		} else if err != nil || string(got.Text) != s.text {
			t.Errorf("%s: Get = %q, %v; want %q", s.name, got.Text, err, s.text)
		}
		if st, _ := db.Stats(ctx); st.Entries != map[bool]int64{true: 0, false: 1}[s.name == "delete"] {
			t.Errorf("%s: Entries = %d", s.name, st.Entries)
		}
	}
	if err := db.Verify(ctx); err != nil {
		t.Error(err)
	}

	// A crash between the halves of a move out of Badger: taken back.
	dir := t.TempDir()
	db = mustOpen(t, dir, nil)
	defer db.Close()
	putLegacy(t, db, h, v)
	errCrash := errors.New("crash")
	db.st.testMoveCrash = func() error { return errCrash }
	if err := db.Put(ctx, h, store.Value{}); !errors.Is(err, errCrash) {
		t.Fatalf("Put = %v, want the crash", err)
	}
	if got := where(db); got != "kt true badger true" {
		t.Fatalf("after the crash: %s, want both", got)
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// The failed process answers what the next Open settles on.
	if got, err := db.Get(ctx, h); err != nil || string(got.Text) != "v" {
		t.Errorf("Get in the failed process = %q, %v; want %q", got.Text, err, "v")
	}
	crashed := mustOpen(t, copyDir(t, dir), nil)
	defer crashed.Close()
	if got := where(crashed); got != "kt false badger true" {
		t.Errorf("after the Open: %s, want Badger's copy only", got)
	}
	if got, err := crashed.Get(ctx, h); err != nil || string(got.Text) != "v" {
		t.Errorf("Get after the Open = %q, %v; want %q", got.Text, err, "v")
	}
	if err := crashed.Verify(ctx); err != nil {
		t.Error(err)
	}
}

// TestAddEntersOnce: an add of key-only entries takes one path (the
// bare-key add) whether the index has a key table or not, and whichever
// method it comes through; the keys land at their home.
func TestAddEntersOnce(t *testing.T) {
	ctx := context.Background()
	for _, o := range []*Options{nil, {NoKeyTable: true}, {InMemory: true}} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			db := openTestDB(t, o != nil && o.InMemory, o)
			hs := randHashes(rand.New(rand.NewPCG(35, 2)), 30)
			added := make([]bool, 10)
			if err := db.AddKeys(ctx, hs[:10], added, nil); err != nil || slices.Contains(added, false) {
				t.Fatalf("AddKeys = %v, %v", added, err)
			}
			if got, err := db.AddBatch(ctx, entriesOf(hs[5:20])); err != nil || slices.Index(got, true) != 5 {
				t.Fatalf("AddBatch = %v, %v", got, err)
			}
			if _, err := db.Load(ctx, slices.Values(entriesOf(hs[15:]))); err != nil {
				t.Fatal(err)
			}
			inKT := int64(0)
			if db.st.hasKeyTable() {
				inKT = db.st.kt.Len()
			}
			if want := map[bool]int64{true: 30, false: 0}[db.st.bareHome() == homeKeyTable]; inKT != want {
				t.Errorf("the key table holds %d keys, want %d", inKT, want)
			}
			if full, _, err := db.Count(ctx, nil, 0); full != 30 || err != nil {
				t.Errorf("Count = %d, %v", full, err)
			}
			var scanned bytes.Buffer
			db.ForEach(ctx, func(e store.Entry) error { scanned.Write(e.Hash[:1]); return nil })
			if scanned.Len() != 30 {
				t.Errorf("ForEach visited %d", scanned.Len())
			}
		})
	}
}

// TestMixedBatchPlacement: a batch of entries with and without values,
// and prefix entries, puts each at its home: full entries in the key
// table, prefix entries in Badger.
func TestMixedBatchPlacement(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, t.TempDir(), nil)
	defer db.Close()
	hs := randHashes(rand.New(rand.NewPCG(35, 3)), 5)
	v := store.Value{Text: []byte("v")}
	if _, err := db.AddBatch(ctx, []store.Entry{store.FullEntry(hs[0], store.Value{}), store.FullEntry(hs[1], v)}); err != nil {
		t.Fatal(err)
	}
	pe, _ := store.PrefixEntry(hs[4][:6], v)
	if err := db.PutBatch(ctx, []store.Entry{store.FullEntry(hs[2], store.Value{}), store.FullEntry(hs[3], v), pe}); err != nil {
		t.Fatal(err)
	}
	for i, h := range hs[:4] {
		inKT, _, err := db.st.kt.Has((*[32]byte)(&h))
		if err != nil {
			t.Fatal(err)
		}
		if !inKT {
			t.Errorf("key %d is not in the key table", i)
		}
		if got, err := db.Get(ctx, h); err != nil || (i%2 == 1) != (string(got.Text) == "v") {
			t.Errorf("Get(key %d) = %q, %v", i, got.Text, err)
		}
	}
	if m, ok, err := db.Match(ctx, hs[4]); !ok || err != nil || m.Len != 6 || string(m.Value.Text) != "v" {
		t.Errorf("Match(prefix) = %+v, %v, %v", m, ok, err)
	}
	if s, _ := db.Stats(ctx); s.Entries != 4 || s.PrefixEntries != 1 {
		t.Errorf("Entries = %d, %d; want 4, 1", s.Entries, s.PrefixEntries)
	}
	if err := db.Verify(ctx); err != nil {
		t.Error(err)
	}
}
