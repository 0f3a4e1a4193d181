package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/store"
)

// openTestDB opens an index under t.TempDir (or in memory when mem is set)
// and closes it at the end of the test. opts may be nil.
func openTestDB(t testing.TB, mem bool, opts *Options) *DB {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	o.InMemory = mem
	dir := ""
	if !mem {
		dir = t.TempDir()
	}
	db, err := Open(dir, &o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// randHashes returns n distinct pseudo-random hashes.
func randHashes(r *rand.Rand, n int) []hashkey.Hash {
	seen := make(map[hashkey.Hash]bool, n)
	out := make([]hashkey.Hash, 0, n)
	for len(out) < n {
		var h hashkey.Hash
		for i := 0; i < len(h); i += 8 {
			v := r.Uint64()
			for j := range 8 {
				h[i+j] = byte(v >> (8 * j))
			}
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

func hashOf(s string) hashkey.Hash { return hashkey.Sum([]byte(s)) }

func TestPutGetHasDelete(t *testing.T) {
	ctx := context.Background()
	for _, mem := range []bool{true, false} {
		t.Run(fmt.Sprintf("mem=%v", mem), func(t *testing.T) {
			db := openTestDB(t, mem, nil)
			h := hashOf("https://example.com/")
			if got, err := db.Has(ctx, h); err != nil || got {
				t.Fatalf("Has before Put = %v, %v; want false, nil", got, err)
			}
			if _, err := db.Get(ctx, h); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("Get before Put: err = %v, want store.ErrNotFound", err)
			}
			want := store.Value{Text: []byte("https://example.com/"), Data: []byte{1, 2}}
			if err := db.Put(ctx, h, want); err != nil {
				t.Fatal(err)
			}
			got, err := db.Get(ctx, h)
			if err != nil || !bytes.Equal(got.Text, want.Text) || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("Get = %q, %v; want %q", got, err, want)
			}
			if ok, _ := db.Has(ctx, h); !ok {
				t.Fatal("Has after Put = false")
			}
			if err := db.Put(ctx, h, store.Value{}); err != nil { // overwrite: count unchanged
				t.Fatal(err)
			}
			if s, _ := db.Stats(ctx); s.Entries != 1 {
				t.Fatalf("Entries = %d, want 1", s.Entries)
			}
			if err := db.Delete(ctx, store.FullEntry(h, store.Value{})); err != nil {
				t.Fatal(err)
			}
			if err := db.Delete(ctx, store.FullEntry(h, store.Value{})); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("second Delete: %v, want store.ErrNotFound", err)
			}
			if ok, _ := db.Has(ctx, h); ok {
				t.Fatal("Has after Delete = true")
			}
			if s, _ := db.Stats(ctx); s.Entries != 0 {
				t.Fatalf("Entries = %d, want 0", s.Entries)
			}
			if err := db.Verify(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Full entries, prefix entries and metadata live in separate keyspaces: a
// prefix entry equal to a full hash's leading bytes is not that full entry,
// and neither shows through the other's operations.
func TestKeyspaceIsolation(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, true, nil)
	h := hashOf("a")
	if err := db.PutPrefix(ctx, h[:4], store.Value{Data: []byte("p4")}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.Has(ctx, h); ok {
		t.Fatal("prefix entry shows as full entry")
	}
	var meta hashkey.Hash // a hash of zeros would collide with tagMeta keys if tags were missing
	if ok, _ := db.Has(ctx, meta); ok {
		t.Fatal("metadata shows as full entry")
	}
	if err := db.Put(ctx, h, store.Value{Data: []byte("full")}); err != nil {
		t.Fatal(err)
	}
	pe, err := store.PrefixEntry(h[:4], store.Value{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, pe); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.Has(ctx, h); !ok {
		t.Fatal("deleting the prefix entry removed the full entry")
	}
	var n int
	if err := db.ForEach(ctx, func(e store.Entry) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("ForEach saw %d entries (%v), want 1", n, err)
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestMatch(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, true, nil)
	h := hashOf("https://evil.example/")
	other := hashOf("https://good.example/")
	for _, n := range []int{4, 8, 16} {
		if err := db.PutPrefix(ctx, h[:n], store.Value{Data: []byte{byte(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	p5 := append(slices.Clone(h[:4]), h[4]^0xff) // shares 4 bytes, not a prefix of h
	if err := db.PutPrefix(ctx, p5, store.Value{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		h       hashkey.Hash
		wantOK  bool
		wantLen int
	}{
		{"longest prefix", h, true, 16},
		{"no match", other, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok, err := db.Match(ctx, tc.h)
			if err != nil || ok != tc.wantOK || m.Len != tc.wantLen {
				t.Fatalf("store.Match = %+v, %v, %v; want len %d, %v", m, ok, err, tc.wantLen, tc.wantOK)
			}
			if ok && m.Value.Data[0] != byte(tc.wantLen) {
				t.Fatalf("store.Match value %v, want %d", m.Value.Data, tc.wantLen)
			}
		})
	}
	if err := db.Put(ctx, h, store.Value{Text: []byte("full")}); err != nil {
		t.Fatal(err)
	}
	m, ok, err := db.Match(ctx, h)
	if err != nil || !ok || !m.IsFull() || string(m.Value.Text) != "full" {
		t.Fatalf("store.Match after Put = %+v, %v, %v; want the full entry", m, ok, err)
	}
}

func TestBadPrefixLength(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, true, nil)
	for _, n := range []int{0, 3, 32, 33} {
		p := make([]byte, n)
		if err := db.PutPrefix(ctx, p, store.Value{}); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("PutPrefix(%d bytes) = %v, want store.ErrPrefixLength", n, err)
		}
	}
	if err := db.PutBatch(ctx, []store.Entry{{Len: 2}}); !errors.Is(err, store.ErrPrefixLength) {
		t.Errorf("PutBatch(Len 2) = %v, want store.ErrPrefixLength", err)
	}
	if err := db.Scan(ctx, []byte{1}, 12, 0, func(store.Entry) error { return nil }); !errors.Is(err, store.ErrPrefixLength) {
		t.Errorf("Scan(12 bits of 1 byte) = %v, want store.ErrPrefixLength", err)
	}
}

func TestUseAfterClose(t *testing.T) {
	ctx := context.Background()
	db, err := Open("", &Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	h := hashOf("x")
	checks := map[string]error{
		"Put":  db.Put(ctx, h, store.Value{}),
		"Sync": db.Sync(ctx),
		"Scan": db.ForEach(ctx, func(store.Entry) error { return nil }),
	}
	_, checks["Has"] = db.Has(ctx, h)
	_, checks["Get"] = db.Get(ctx, h)
	_, checks["store.Stats"] = db.Stats(ctx)
	_, checks["Load"] = db.Load(ctx, slices.Values([]store.Entry{{Hash: h}}))
	for name, err := range checks {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close = %v, want store.ErrClosed", name, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

// Each key is reported new by exactly one of the goroutines racing to add
// it, single and batched.
func TestAddIfAbsentConcurrent(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, false, nil)
	keys := randHashes(rand.New(rand.NewPCG(1, 2)), 2000)
	const workers = 8
	var mu sync.Mutex
	wins := make(map[hashkey.Hash]int)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			mine := slices.Clone(keys)
			r.Shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
			for i := 0; i < len(mine); {
				if w%2 == 0 { // single adds
					added, err := db.Add(ctx, mine[i], store.Value{})
					if err != nil {
						t.Error(err)
						return
					}
					if added {
						mu.Lock()
						wins[mine[i]]++
						mu.Unlock()
					}
					i++
					continue
				}
				n := min(1+r.IntN(50), len(mine)-i)
				batch := make([]store.Entry, n)
				for j := range batch {
					batch[j] = store.Entry{Hash: mine[i+j]}
				}
				added, err := db.AddBatch(ctx, batch)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for j, a := range added {
					if a {
						wins[batch[j].Hash]++
					}
				}
				mu.Unlock()
				i += n
			}
		}()
	}
	wg.Wait()
	db.growWG.Wait() // the filter grew while writers ran: check the new one too
	if s, _ := db.DetailedStats(ctx); s.FilterBits <= filter.MinBits {
		t.Fatalf("filter did not grow: %d bits", s.FilterBits)
	}
	for _, k := range keys {
		if ok, err := db.Has(ctx, k); !ok || err != nil {
			t.Fatalf("Has(%x) = %v, %v after growth", k[:4], ok, err)
		}
	}
	for _, k := range keys {
		if wins[k] != 1 {
			t.Fatalf("key %x reported new %d times, want 1", k[:4], wins[k])
		}
	}
	if s, _ := db.Stats(ctx); s.Entries != int64(len(keys)) {
		t.Fatalf("Entries = %d, want %d", s.Entries, len(keys))
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAddIfAbsentBatchDuplicates(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, true, nil)
	a, b := hashOf("a"), hashOf("b")
	if err := db.Put(ctx, b, store.Value{}); err != nil {
		t.Fatal(err)
	}
	got, err := db.AddBatch(ctx, []store.Entry{{Hash: a}, {Hash: b}, {Hash: a}})
	want := []bool{true, false, false}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("AddBatch = %v, %v; want %v", got, err, want)
	}
}

func TestHasBatch(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, false, nil)
	r := rand.New(rand.NewPCG(3, 4))
	hs := randHashes(r, 3000)
	stored := hs[:1500]
	entries := make([]store.Entry, len(stored))
	for i, h := range stored {
		entries[i] = store.Entry{Hash: h}
	}
	if err := db.PutBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	query := slices.Clone(hs)
	r.Shuffle(len(query), func(i, j int) { query[i], query[j] = query[j], query[i] })
	got, err := db.HasBatch(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	isStored := make(map[hashkey.Hash]bool)
	for _, h := range stored {
		isStored[h] = true
	}
	for i, h := range query {
		if got[i] != isStored[h] {
			t.Fatalf("HasBatch[%d] = %v, want %v", i, got[i], isStored[h])
		}
	}
}

func TestScan(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, true, nil)
	hs := randHashes(rand.New(rand.NewPCG(5, 6)), 5000)
	entries := make([]store.Entry, len(hs))
	for i, h := range hs {
		entries[i] = store.Entry{Hash: h}
	}
	if err := db.PutBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	pe, _ := store.PrefixEntry([]byte{hs[0][0], hs[0][1], 0, 0, 0}, store.Value{})
	if err := db.PutBatch(ctx, []store.Entry{pe}); err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(hs)
	slices.SortFunc(sorted, func(a, b hashkey.Hash) int { return bytes.Compare(a[:], b[:]) })
	// slowScan is the obviously correct answer: full entries only.
	slowScan := func(p []byte, bits int) []hashkey.Hash {
		var out []hashkey.Hash
		for _, h := range sorted {
			if hasBitPrefix(h[:], p, bits) {
				out = append(out, h)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		p    []byte
		bits int
	}{
		{"all", nil, 0},
		{"one hex digit", hs[0][:1], 4},
		{"two hex digits", hs[0][:1], 8},
		{"three hex digits", hs[0][:2], 12},
		{"five hex digits", hs[1][:3], 20},
		{"whole hash", hs[2][:], 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []hashkey.Hash
			var prefixes int
			err := db.Scan(ctx, tc.p, tc.bits, 0, func(e store.Entry) error {
				if e.IsPrefix() {
					prefixes++
					return nil
				}
				got = append(got, e.Hash)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := slowScan(tc.p, tc.bits)
			if !slices.Equal(got, want) {
				t.Fatalf("Scan gave %d entries, want %d", len(got), len(want))
			}
			wantPrefixes := 0
			if hasBitPrefix(pe.Key(), tc.p, tc.bits) && 8*pe.Len >= tc.bits {
				wantPrefixes = 1
			}
			if prefixes != wantPrefixes {
				t.Fatalf("Scan gave %d prefix entries, want %d", prefixes, wantPrefixes)
			}
			full, np, err := db.Count(ctx, tc.p, tc.bits)
			if err != nil || full != int64(len(want)) || np != int64(wantPrefixes) {
				t.Fatalf("Count = %d, %d, %v; want %d, %d", full, np, err, len(want), wantPrefixes)
			}
		})
	}
	var n int
	if err := db.Scan(ctx, nil, 0, 7, func(store.Entry) error { n++; return nil }); err != nil || n != 7 {
		t.Fatalf("Scan with limit 7 visited %d (%v)", n, err)
	}
	stop := errors.New("stop")
	if err := db.ForEach(ctx, func(store.Entry) error { return stop }); err != stop {
		t.Fatalf("ForEach returned %v, want the callback's error", err)
	}
}

func hasBitPrefix(b, p []byte, bits int) bool {
	if len(b)*8 < bits {
		return false
	}
	for i := 0; i < bits; i++ {
		if (b[i/8]>>(7-i%8))&1 != (p[i/8]>>(7-i%8))&1 {
			return false
		}
	}
	return true
}
