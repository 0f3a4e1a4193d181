package filter

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
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
		{"narrowest", MinBits, 1000, 500},
		{"usual 100k", BitsFor(100_000), 100_000, 12_000},
		{"dense", 20, 1 << 16, 1 << 14},
		{"merge into empty", 24, 0, 5000},
		{"wide", 32, 20_000, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.k)))
			values := randValues(r, tc.n, tc.k)
			bm := roaring64.New()
			bm.AddMany(values)
			s := buildFlat(bm, tc.k, 0)
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
			m := s.merged(tc.k, slices.Clone(extra), 0)
			if m == nil {
				t.Fatal("merged refused")
			}
			check(m, bm)
			check(s, roaring64.BitmapOf(values...)) // s is unchanged
		})
	}
}

// A filter far wider than its entries gets no flat set: its offsets would
// cost more than the values.
func TestFlatSetRefusesSparse(t *testing.T) {
	bm := roaring64.BitmapOf(1, 2, 3)
	if s := buildFlat(bm, 50, 0); s != nil {
		t.Fatalf("built a flat set of %d buckets for 3 values", len(s.offsets)-1)
	}
}

// From a new filter too wide for its first values (the bitmap form),
// through the switch to the flat form, its overlay and merges, and bulk
// adds of both sizes, the filter answers exactly what a bitmap of the same
// values answers: never "absent" for an added key.
func TestFilterFormsAgree(t *testing.T) {
	const k = 33 // 2^17 buckets: flat from about 32k values on
	r := rand.New(rand.NewPCG(5, 6))
	f := New(k)
	ref := roaring64.New()
	added := randHashes(r, 200_000)
	check := func(stage string, upto int) {
		t.Helper()
		for i := range added[:upto] {
			if !f.MayHaveFull(&added[i]) {
				t.Fatalf("%s: added key %d reported absent", stage, i)
			}
		}
		for _, h := range randHashes(r, 20_000) {
			if f.MayHaveFull(&h) != ref.Contains(f.lead(&h)) {
				t.Fatalf("%s: filter and bitmap disagree on %x", stage, h[:8])
			}
		}
	}
	for i := range added[:20_000] {
		f.AddFull(&added[i])
		ref.Add(f.lead(&added[i]))
	}
	if f.IsFlat() {
		t.Fatal("flat at 20k values of 33 bits: too sparse for it")
	}
	check("bitmap", 20_000)
	for i := range added[20_000:100_000] {
		f.AddFull(&added[20_000+i])
		ref.Add(f.lead(&added[20_000+i]))
	}
	if !f.IsFlat() {
		t.Fatal("not flat at 100k values of 33 bits")
	}
	if f.flat.len() < 90_000 {
		t.Fatalf("flat holds %d values after 100k adds: no merge happened", f.flat.len())
	}
	check("flat", 100_000)
	// A small bulk add goes through the overlay, a large one straight in.
	for _, part := range []struct{ from, n int }{{100_000, 1000}, {101_000, 99_000}} {
		from, n := part.from, part.n
		leads := make([]uint64, 0, n)
		for i := range added[from : from+n] {
			leads = append(leads, binary.BigEndian.Uint64(added[from+i][:8]))
			ref.Add(f.lead(&added[from+i]))
		}
		slices.Sort(leads)
		f.AddLeads(leads, nil)
	}
	check("bulk", len(added))
}

// BenchmarkFilter measures a probe of each form, absent keys, at 1M and
// 10M entries.
func BenchmarkFilter(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		k := BitsFor(uint64(n))
		bm := roaring64.New()
		bm.AddMany(randValues(r, n, k))
		s := buildFlat(bm, k, 0)
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

// The flat form encodes to exactly what roaring64 writes for the same
// values, of the size SizeBytes says; that encoding (as older versions
// wrote it) decodes straight to the flat form; and a sparse one to the
// bitmap form.
func TestFlatEncoding(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    uint8
		n    int
		flat bool
	}{
		{"one group", BitsFor(100_000), 100_000, true},
		{"many groups", 36, 600_000, true},
		{"dense containers", 22, 1 << 20, true},
		{"sparse", 40, 1000, false},
		{"sparse, within the bound of its bytes", 34, 10_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.n), 3))
			values := randValues(r, tc.n, tc.k)
			bm := roaring64.New()
			bm.AddMany(values)
			var want bytes.Buffer
			if _, err := bm.WriteTo(&want); err != nil {
				t.Fatal(err)
			}
			short := roaring.New()
			var sb bytes.Buffer
			short.WriteTo(&sb)
			old := append(want.Bytes(), sb.Bytes()...)
			f, err := Unmarshal(tc.k, old, uint64(want.Len()), uint64(sb.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if f.IsFlat() != tc.flat {
				t.Fatalf("IsFlat = %v, want %v", f.IsFlat(), tc.flat)
			}
			data, fl, _, err := f.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data[:fl], want.Bytes()) {
				t.Fatalf("encoding differs from roaring64's (%d bytes, want %d)", fl, want.Len())
			}
			if got := f.SizeBytes(); got != uint64(len(data)) {
				t.Fatalf("SizeBytes = %d, encoding is %d bytes", got, len(data))
			}
			for _, v := range values {
				var h hashkey.Hash
				binary.BigEndian.PutUint64(h[:8], v<<(64-tc.k))
				if !f.MayHaveFull(&h) {
					t.Fatalf("value %#x reported absent", v)
				}
			}
			// With an overlay (its map, its tail): the encoding holds its
			// values too.
			var h hashkey.Hash
			for i := range 200 {
				v := r.Uint64()
				if i%2 == 0 {
					v = ^uint64(0) - uint64(i) // ascending above all: the tail
				}
				binary.BigEndian.PutUint64(h[:8], v)
				f.AddFull(&h)
				bm.Add(f.lead(&h))
			}
			want.Reset()
			bm.WriteTo(&want)
			if data, fl, _, _ = f.Marshal(); !bytes.Equal(data[:fl], want.Bytes()) {
				t.Fatal("encoding with an overlay value differs from roaring64's")
			}
		})
	}
}

// BenchmarkForms measures the costs of a filter of n random entries, at
// 1M and 10M: adding them one at a time (random order, as a server does),
// as one ascending bulk (a load), encoding it, decoding it (an Open), and
// the memory each form holds (B/entry): the flat form, and roaring64,
// which the filter held beside it before.
func BenchmarkForms(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		r := rand.New(rand.NewPCG(2, uint64(n)))
		k := BitsFor(uint64(n))
		hs := randHashes(r, n)
		leads := make([]uint64, n)
		for i := range hs {
			leads[i] = binary.BigEndian.Uint64(hs[i][:8])
		}
		slices.Sort(leads)
		b.Run(fmtCount(n)+"/add", func(b *testing.B) {
			var f *Filter
			for b.Loop() {
				f = New(k)
				for i := range hs {
					f.AddFull(&hs[i])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
			b.ReportMetric(float64(f.MemBytes())/float64(n), "B/entry")
		})
		b.Run(fmtCount(n)+"/addleads", func(b *testing.B) {
			scratch := make([]uint64, 0, n)
			for b.Loop() {
				New(k).AddLeads(leads, scratch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
		f := New(k)
		f.AddLeads(leads, nil)
		b.Run(fmtCount(n)+"/marshal", func(b *testing.B) {
			for b.Loop() {
				if _, _, _, err := f.Marshal(); err != nil {
					b.Fatal(err)
				}
			}
		})
		data, fl, sl, _ := f.Marshal()
		b.Run(fmtCount(n)+"/unmarshal", func(b *testing.B) {
			for b.Loop() {
				if _, err := Unmarshal(k, data, fl, sl); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmtCount(n)+"/roaring64", func(b *testing.B) {
			var bm *roaring64.Bitmap
			for b.Loop() {
				bm = roaring64.New()
				if _, err := bm.ReadFrom(bytes.NewReader(data[:fl])); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bm.GetSizeInBytes())/float64(n), "B/entry")
		})
	}
}

// A filter told what a load will bring grows its flat form once, and
// answers the same.
func TestFilterExpect(t *testing.T) {
	const n = 300_000
	r := rand.New(rand.NewPCG(21, 22))
	hs := randHashes(r, n)
	leads := make([]uint64, n)
	for i := range hs {
		leads[i] = binary.BigEndian.Uint64(hs[i][:8])
	}
	slices.Sort(leads)
	f := New(BitsFor(n))
	f.Expect(n)
	var h hashkey.Hash
	for _, l := range leads {
		binary.BigEndian.PutUint64(h[:8], l)
		f.AddFull(&h) // in order, as a load adds them
	}
	if !f.IsFlat() {
		t.Fatal("not flat")
	}
	if c := cap(f.flat.low); c != n {
		t.Fatalf("flat set has room for %d values, want the %d expected", c, n)
	}
	for i := range hs {
		if !f.MayHaveFull(&hs[i]) {
			t.Fatalf("added key %d reported absent", i)
		}
	}
}

// BenchmarkFormsHeap measures the Go heap each form of a filter of n
// random entries holds (HeapAlloc after a collection, B/entry): roaring64
// as the filter filled it, and the flat form built from it, which the
// filter held beside each other until the flat form became the only one.
func BenchmarkFormsHeap(b *testing.B) {
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmtCount(n), func(b *testing.B) {
			k := BitsFor(uint64(n))
			for b.Loop() {
				r := rand.New(rand.NewPCG(3, uint64(n)))
				h0 := heap()
				bm := roaring64.New()
				for range n {
					bm.Add(r.Uint64() >> (64 - k))
				}
				h1 := heap()
				s := buildFlat(bm, k, 0)
				h2 := heap()
				b.ReportMetric(float64(h1-h0)/float64(n), "roaring64-B/entry")
				b.ReportMetric(float64(h2-h1)/float64(n), "flat-B/entry")
				runtime.KeepAlive(bm)
				runtime.KeepAlive(s)
			}
		})
	}
}
