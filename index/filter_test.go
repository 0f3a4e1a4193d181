package index

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/urlhash/urlhash/hashkey"
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
	if s, _ := db.Stats(ctx); s.FilterBits <= minFilterBits {
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

// filterFigures measures a filter design: serialized bytes per entry and
// the false-positive rate over random absent probes.
type filterFigures struct {
	name         string
	bytesPerKey  float64 // portable serialized size
	memPerKey    float64 // roaring's in-memory estimate
	falsePosRate float64
}

// measureFilters builds the three candidate filters over n random hashes.
func measureFilters(n, probes int, seed uint64) []filterFigures {
	r := rand.New(rand.NewPCG(seed, 13))
	lead := make([]uint64, n)
	for i := range lead {
		lead[i] = r.Uint64() // leading 8 bytes, big-endian view
	}
	var out []filterFigures
	fp := func(contains func(uint64) bool) float64 {
		r := rand.New(rand.NewPCG(seed, 14))
		hits := 0
		for range probes {
			if contains(r.Uint64()) {
				hits++
			}
		}
		return float64(hits) / float64(probes)
	}

	// 32-bit roaring over the first 4 bytes.
	b32 := roaring.New()
	for _, v := range lead {
		b32.Add(uint32(v >> 32))
	}
	out = append(out, filterFigures{"roaring32 first 4 bytes",
		float64(b32.GetSerializedSizeInBytes()) / float64(n),
		float64(b32.GetSizeInBytes()) / float64(n),
		fp(func(v uint64) bool { return b32.Contains(uint32(v >> 32)) })})

	// roaring64 over the very-short (8-byte) value.
	b64 := roaring64.New()
	for _, v := range lead {
		b64.Add(v)
	}
	out = append(out, filterFigures{"roaring64 8-byte very-short",
		float64(b64.GetSerializedSizeInBytes()) / float64(n),
		float64(b64.GetSizeInBytes()) / float64(n),
		fp(func(v uint64) bool { return b64.Contains(v) })})

	// The chosen design: roaring64 over the leading k bits.
	f := newFilter(filterBitsFor(uint64(n)))
	var h hashkey.Hash
	for _, v := range lead {
		binary.BigEndian.PutUint64(h[:], v)
		f.addFull(&h)
	}
	out = append(out, filterFigures{"roaring64 leading k bits (chosen)",
		float64(f.full.GetSerializedSizeInBytes()) / float64(n),
		float64(f.full.GetSizeInBytes()) / float64(n),
		fp(func(v uint64) bool { binary.BigEndian.PutUint64(h[:], v); return f.mayHaveFull(&h) })})
	return out
}

func TestFilterFigures(t *testing.T) {
	const n = 20_000
	for _, f := range measureFilters(n, 100_000, 1) {
		t.Logf("n=%d %-34s %6.2f B/entry serialized %7.2f B/entry in memory, FP %.4f%%",
			n, f.name, f.bytesPerKey, f.memPerKey, 100*f.falsePosRate)
		if f.name == "roaring64 leading k bits (chosen)" {
			if f.bytesPerKey > 3 || f.falsePosRate > 0.0015 {
				t.Errorf("chosen filter: %.2f B/entry, FP %.4f%%; want <= 3 and about 0.1%%",
					f.bytesPerKey, 100*f.falsePosRate)
			}
		}
	}
}
