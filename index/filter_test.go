package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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
		db.waitFilter()
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
	db.waitFilter()
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
	err := db.rebuildFilter(0, nil)
	db.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	db.waitFilter()
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

// TestFilterLoadsInBackground: Open returns before a snapshot file's
// filter is in; meanwhile a stored key is answered at once, an absent one
// waits for the filter (which answers it without a read), Stats answers
// from the snapshot's header, writes wait, and Close stops the load.
func TestFilterLoadsInBackground(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hs := randHashes(rand.New(rand.NewPCG(35, 5)), 3000)
	db := mustOpen(t, dir, nil)
	if _, err := db.Load(ctx, slices.Values(entriesOf(hs[:2000]))); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, hs[2000], store.Value{Text: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	want, err := db.DetailedStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		t.Run(fmt.Sprintf("read-only=%v", ro), func(t *testing.T) {
			held := make(chan struct{})
			db := mustOpen(t, dir, &Options{ReadOnly: ro, beforeFilterLoad: func() { <-held }})
			defer db.Close()
			defer func() {
				select {
				case <-held:
				default:
					close(held)
				}
			}()
			if db.fin.Load() {
				t.Fatal("the filter is in before its load ran")
			}
			// Stored keys are answered while the load is held.
			answered := make(chan error, 1)
			go func() {
				answered <- func() error {
					for _, h := range []hashkey.Hash{hs[0], hs[1999], hs[2000]} {
						if ok, err := db.Has(ctx, h); !ok || err != nil {
							return fmt.Errorf("Has(stored) while loading = %v, %v", ok, err)
						}
						if got, err := db.HasBatch(ctx, []hashkey.Hash{h}); err != nil || !got[0] {
							return fmt.Errorf("HasBatch(stored) while loading = %v, %v", got, err)
						}
					}
					if v, err := db.Get(ctx, hs[2000]); err != nil || string(v.Text) != "v" {
						return fmt.Errorf("Get(stored) while loading = %q, %v", v.Text, err)
					}
					return nil
				}()
			}()
			select {
			case err := <-answered:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a stored key waited for the filter")
			}
			s, err := db.DetailedStats(ctx)
			// The snapshot's size is its encoding's; the filter's, an
			// estimate of it.
			if err != nil || s.Entries != want.Entries || s.FilterBits != want.FilterBits ||
				s.FilterBytes < want.FilterBytes*9/10 || s.FilterBytes > want.FilterBytes*11/10 {
				t.Fatalf("DetailedStats while loading = %+v, %v; want the snapshot's %+v", s, err, want)
			}
			absent := make(chan string, 4)
			go func() {
				ok, err := db.Has(ctx, hs[2500])
				absent <- fmt.Sprint("Has ", ok, err)
			}()
			go func() {
				got, err := db.HasBatch(ctx, []hashkey.Hash{hs[0], hs[2501]})
				absent <- fmt.Sprint("HasBatch ", got, err)
			}()
			go func() {
				// A large batch waits, stored keys and all.
				got, err := db.HasBatch(ctx, hs[:loadingBatch+1])
				absent <- fmt.Sprint("HasBatch large ", !slices.Contains(got, false), err)
			}()
			if !ro {
				go func() {
					ok, err := db.Add(ctx, hs[2502], store.Value{})
					absent <- fmt.Sprint("Add ", ok, err)
				}()
			}
			select {
			case got := <-absent:
				t.Fatalf("%s answered before the filter was in", got)
			case <-time.After(50 * time.Millisecond):
			}
			close(held)
			var got []string
			for range map[bool]int{true: 3, false: 4}[ro] {
				got = append(got, <-absent)
			}
			slices.Sort(got)
			wantGot := []string{"Has false <nil>", "HasBatch [true false] <nil>", "HasBatch large true <nil>"}
			if !ro {
				wantGot = append([]string{"Add true <nil>"}, wantGot...)
			}
			if !slices.Equal(got, wantGot) {
				t.Errorf("after the load: %q, want %q", got, wantGot)
			}
			if !db.snapshotUsed() {
				t.Error("the snapshot was not used")
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Close while the load is held: the load stops, nothing is written.
	held := make(chan struct{})
	db = mustOpen(t, dir, &Options{beforeFilterLoad: func() { <-held }})
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	time.Sleep(20 * time.Millisecond)
	close(held)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, &Options{ReadOnly: true})
	defer db.Close()
	if !db.snapshotUsed() {
		t.Error("the snapshot was not current after a Close that stopped its load")
	}
}
