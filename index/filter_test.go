package index

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/store"
)

// The filter never says "absent" for a stored key, through growth, prefix
// entries of every length and reopening.
func TestFilterNoFalseNegatives(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	full := randHashes(r, 6000)
	var prefixes [][]byte
	for i, h := range full {
		switch i % 3 {
		case 0:
			if _, err := db.Add(ctx, h, store.Value{}); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := db.Put(ctx, h, store.Value{}); err != nil {
				t.Fatal(err)
			}
		case 2:
			p := randHashes(r, 1)[0]
			n := store.MinPrefixEntryLen + r.IntN(store.MaxPrefixEntryLen-store.MinPrefixEntryLen+1)
			if err := db.PutPrefix(ctx, p[:n], store.Value{}); err != nil {
				t.Fatal(err)
			}
			prefixes = append(prefixes, p[:n])
			if err := db.Put(ctx, h, store.Value{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.growWG.Wait()
	if s, _ := db.DetailedStats(ctx); s.FilterBits <= filter.MinBits {
		t.Fatalf("filter did not grow: %d bits for %d entries", s.FilterBits, s.Entries)
	}
	check := func(db *DB) {
		t.Helper()
		for _, h := range full {
			if ok, err := db.Has(ctx, h); !ok || err != nil {
				t.Fatalf("Has(stored) = %v, %v", ok, err)
			}
		}
		for _, p := range prefixes {
			var h hashkey.Hash
			copy(h[:], p)
			for i := len(p); i < len(h); i++ { // a random extension
				h[i] = byte(r.Uint32())
			}
			m, ok, err := db.Match(ctx, h)
			if !ok || err != nil || m.Len < len(p) {
				t.Fatalf("Match(extension of %x) = %+v, %v, %v", p, m, ok, err)
			}
		}
		if err := db.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(db)
	db.Close()
	db = mustOpen(t, dir, nil)
	defer db.Close()
	check(db)
}

// A loaded index holds its filter in the flat form (one form, not the
// bitmap beside it), and answers through it, before and after a reopen.
func TestDBFilterFlatAfterLoad(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	keys := randHashes(r, 20_000)
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	if _, err := db.Load(ctx, slices.Values(entriesOf(keys))); err != nil {
		t.Fatal(err)
	}
	isFlat := func(db *DB) bool {
		db.fmu.RLock()
		defer db.fmu.RUnlock()
		return db.f.IsFlat()
	}
	if !isFlat(db) {
		t.Fatal("no flat form after a load of 20k keys")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	if !isFlat(db) {
		t.Fatal("no flat form after a reopen")
	}
	if ok, err := db.Has(ctx, keys[0]); !ok || err != nil {
		t.Fatalf("Has = %v, %v", ok, err)
	}
	// A load into the index while the flat form stands goes through it
	// too (the load's filter updates, see filter.Filter.AddLeads).
	more := randHashes(r, 5_000) // the filter keeps its width: no rebuild
	db.fmu.RLock()
	f := db.f
	db.fmu.RUnlock()
	if _, err := db.Load(ctx, slices.Values(entriesOf(more))); err != nil {
		t.Fatal(err)
	}
	db.fmu.RLock()
	same := db.f == f
	db.fmu.RUnlock()
	if !same {
		t.Fatal("the load replaced the filter: its flat form was not exercised")
	}
	found, err := db.HasBatch(ctx, append(keys, more...))
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range found {
		if !ok {
			t.Fatalf("key %d absent through the flat form", i)
		}
	}
}

// A rebuild counts the key table's keys, then streams them into the
// filter (never all their leads at once): the filter is as wide as all
// the entries need, holds every one, with the entries with values in
// Badger, and the counts are exact.
func TestRebuildFilterStreamsKeyTable(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(31, 32))
	keys := randHashes(r, 150_000)
	db := mustOpen(t, t.TempDir(), &Options{KeyTable: true})
	defer db.Close()
	if !db.st.hasKeyTable() {
		t.Fatal("no key table")
	}
	if _, err := db.Load(ctx, slices.Values(entriesOf(keys[:140_000]))); err != nil {
		t.Fatal(err)
	}
	rich := entriesOf(keys[140_000:])
	for i := range rich {
		rich[i].Value.Data = []byte("v") // not key-only: Badger
	}
	if err := db.PutBatch(ctx, rich); err != nil {
		t.Fatal(err)
	}
	db.mu.Lock()
	err := db.rebuildFilter(0)
	db.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	db.fmu.RLock()
	f := db.f
	db.fmu.RUnlock()
	if f.Bits() != filter.BitsFor(uint64(len(keys))) || !f.IsFlat() {
		t.Fatalf("rebuilt filter: %d bits, flat %v; want %d bits, flat", f.Bits(), f.IsFlat(), filter.BitsFor(uint64(len(keys))))
	}
	if n := db.entries.Load(); n != int64(len(keys)) {
		t.Fatalf("%d entries after the rebuild, want %d", n, len(keys))
	}
	for i := range keys {
		if !f.MayHaveFull(&keys[i]) {
			t.Fatalf("key %d absent from the rebuilt filter", i)
		}
	}
	fp := 0
	for _, h := range randHashes(r, 100_000) {
		if f.MayHaveFull(&h) {
			fp++
		}
	}
	if fp > 300 {
		t.Fatalf("%d of 100k absent keys said maybe", fp)
	}
}
