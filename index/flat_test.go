package index

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/urlhash/urlhash/hashkey"
)

// randValues returns n random k-bit values, sorted and without repeats.
func randValues(r *rand.Rand, n int, k uint8) []uint64 {
	vs := make([]uint64, n)
	for i := range vs {
		vs[i] = r.Uint64() >> (64 - k)
	}
	slices.Sort(vs)
	return slices.Compact(vs)
}

// The flat set answers exactly what the bitmap it was built from answers,
// and so does a merge, for sizes from empty to dense and widths from the
// narrowest filter on.
func TestFlatSetAgreesWithBitmap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		k     uint8
		n     int // values built from
		extra int // values merged in afterwards
	}{
		{"empty", 20, 0, 0},
		{"one", 20, 1, 0},
		{"narrowest", minFilterBits, 1000, 500},
		{"usual 100k", filterBitsFor(100_000), 100_000, 12_000},
		{"dense", 20, 1 << 16, 1 << 14},
		{"merge into empty", 24, 0, 5000},
		{"wide", 32, 20_000, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.k)))
			values := randValues(r, tc.n, tc.k)
			bm := roaring64.New()
			bm.AddMany(values)
			s := buildFlat(bm, tc.k, &sync.Mutex{}, never)
			if s == nil {
				t.Fatalf("buildFlat refused %d values of %d bits", tc.n, tc.k)
			}
			check := func(s *flatSet, bm *roaring64.Bitmap) {
				t.Helper()
				if s.len() != int(bm.GetCardinality()) {
					t.Fatalf("%d values, bitmap has %d", s.len(), bm.GetCardinality())
				}
				for it := bm.Iterator(); it.HasNext(); {
					if v := it.Next(); !s.has(v) {
						t.Fatalf("stored value %#x reported absent", v)
					}
				}
				for range 20_000 {
					v := r.Uint64() >> (64 - tc.k)
					if s.has(v) != bm.Contains(v) {
						t.Fatalf("has(%#x) = %v, bitmap says %v", v, s.has(v), bm.Contains(v))
					}
				}
			}
			check(s, bm)
			if tc.extra == 0 {
				return
			}
			extra := randValues(r, tc.extra, tc.k)
			extra = append(extra, values[:min(len(values), 100)]...) // repeats of stored values
			extra = append(extra, extra[:10]...)                     // and of each other
			r.Shuffle(len(extra), func(i, j int) { extra[i], extra[j] = extra[j], extra[i] })
			bm.AddMany(extra)
			m := s.merged(tc.k, slices.Clone(extra))
			if m == nil {
				t.Fatal("merged refused")
			}
			check(m, bm)
			check(s, roaring64.BitmapOf(values...)) // s is unchanged
		})
	}
}

func never() bool { return false }

// A filter far wider than its entries gets no flat set: its offsets would
// cost more than the values.
func TestFlatSetRefusesSparse(t *testing.T) {
	bm := roaring64.BitmapOf(1, 2, 3)
	if s := buildFlat(bm, 50, &sync.Mutex{}, never); s != nil {
		t.Fatalf("built a flat set of %d buckets for 3 values", len(s.offsets)-1)
	}
	if s := buildFlat(bm, 30, &sync.Mutex{}, func() bool { return true }); s != nil {
		t.Fatal("a stopped build returned a set")
	}
}

// Through the flat form's build, its recent overlay and merges, the filter
// never says "absent" for an added key.
func TestFilterFlatNoFalseNegatives(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	f := newFilter(filterBitsFor(50_000))
	added := randHashes(r, 50_000)
	for i := range added[:10_000] {
		f.addFull(&added[i])
	}
	f.recent = map[uint64]struct{}{} // what DB.freeze does before building
	for i := range added[10_000:20_000] {
		f.addFull(&added[10_000+i]) // added while the build runs
	}
	f.flat = buildFlat(f.full, f.k, &sync.Mutex{}, never)
	if f.flat == nil {
		t.Fatal("no flat set")
	}
	for i := range added[20_000:] {
		f.addFull(&added[20_000+i]) // merges on the way
	}
	if f.flat.len() < 40_000 {
		t.Fatalf("flat holds %d values after 50k adds: no merge happened", f.flat.len())
	}
	for i := range added {
		if !f.mayHaveFull(&added[i]) {
			t.Fatalf("added key %d reported absent", i)
		}
	}
	fp := 0
	for _, h := range randHashes(r, 100_000) {
		if f.mayHaveFull(&h) != f.full.Contains(f.lead(&h)) {
			t.Fatalf("flat and roaring disagree on %x", h[:8])
		}
		if f.mayHaveFull(&h) {
			fp++
		}
	}
	if fp > 1000 {
		t.Fatalf("%d of 100k random keys said maybe", fp)
	}
}

// BenchmarkFilter compares a probe of the flat form with roaring64's
// Contains on the same values, absent keys, at 1M and 10M entries.
func BenchmarkFilter(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		k := filterBitsFor(uint64(n))
		bm := roaring64.New()
		bm.AddMany(randValues(r, n, k))
		s := buildFlat(bm, k, &sync.Mutex{}, never)
		probes := randHashes(r, 1<<16)
		shift := 64 - uint(k)
		lead := func(h *hashkey.Hash) uint64 { return binary.BigEndian.Uint64(h[:8]) }
		b.Run(fmtCount(n)+"/flat", func(b *testing.B) {
			i := 0
			for b.Loop() {
				s.has(lead(&probes[i&(1<<16-1)]) >> shift)
				i++
			}
			b.ReportMetric(float64(s.sizeBytes())/float64(n), "B/entry")
		})
		b.Run(fmtCount(n)+"/roaring", func(b *testing.B) {
			i := 0
			for b.Loop() {
				bm.Contains(lead(&probes[i&(1<<16-1)]) >> shift)
				i++
			}
			b.ReportMetric(float64(bm.GetSizeInBytes())/float64(n), "B/entry")
		})
	}
}

func fmtCount(n int) string {
	if n%1_000_000 == 0 {
		return strconv.Itoa(n/1_000_000) + "M"
	}
	return strconv.Itoa(n)
}

// An index builds the flat form at its first lookup, not before (an
// import never pays for it), and answers the same through it.
func TestDBBuildsFlatOnLookup(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	keys := randHashes(r, 20_000)
	db := mustOpen(t, t.TempDir(), nil)
	defer db.Close()
	if _, err := db.Load(ctx, slices.Values(entriesOf(keys))); err != nil {
		t.Fatal(err)
	}
	db.growWG.Wait()
	db.fmu.RLock()
	built := db.f.flat != nil
	db.fmu.RUnlock()
	if built {
		t.Fatal("flat form built before any lookup")
	}
	if ok, err := db.Has(ctx, keys[0]); !ok || err != nil {
		t.Fatalf("Has = %v, %v", ok, err)
	}
	db.growWG.Wait()
	db.fmu.RLock()
	built = db.f.flat != nil
	db.fmu.RUnlock()
	if !built {
		t.Fatal("no flat form after a lookup")
	}
	// A load into the index while the flat form stands goes through it
	// too (the load's filter updates, see filter.addLeads).
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
	db.Has(ctx, keys[0])
	db.growWG.Wait()
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

// Writers go on while the flat form is built between its runs: a value
// added behind the build's cursor is in recent, and none is lost.
func TestFlatBuildBesideWriters(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	f := newFilter(filterBitsFor(400_000))
	before, during := randHashes(r, 200_000), randHashes(r, 200_000)
	for i := range before {
		f.addFull(&before[i])
	}
	var mu sync.RWMutex
	f.recent = map[uint64]struct{}{} // what DB.freeze does before building
	done := make(chan *flatSet)
	go func() { done <- buildFlat(f.full, f.k, mu.RLocker(), never) }()
	for i := range during {
		mu.Lock()
		f.addFull(&during[i])
		mu.Unlock()
	}
	flat := <-done
	if flat == nil {
		t.Fatal("no flat set")
	}
	f.flat = flat
	for _, hs := range [][]hashkey.Hash{before, during} {
		for i := range hs {
			if !f.mayHaveFull(&hs[i]) {
				t.Fatalf("added key %x reported absent", hs[i][:8])
			}
		}
	}
}
