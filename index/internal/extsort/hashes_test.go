package extsort

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

// sortHashes agrees with a comparison sort on inputs of every shape
// around its thresholds.
func TestSortHashes(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	random := func(n int) []hashkey.Hash {
		hs := make([]hashkey.Hash, n)
		for i := range hs {
			for j := 0; j < hashkey.Size; j += 8 {
				binary.LittleEndian.PutUint64(hs[i][j:], r.Uint64())
			}
		}
		return hs
	}
	for _, tc := range []struct {
		name string
		hs   []hashkey.Hash
	}{
		{"empty", nil},
		{"one", random(1)},
		{"below the threshold", random(1023)},
		{"at the threshold", random(1024)},
		{"random", random(300_000)},
		{"one leading byte", func() []hashkey.Hash {
			hs := random(50_000)
			for i := range hs {
				hs[i][0] = 7
			}
			return hs
		}()},
		{"two leading bytes", func() []hashkey.Hash {
			hs := random(50_000)
			for i := range hs {
				hs[i][0], hs[i][1] = 0xff, 0
			}
			return hs
		}()},
		{"duplicates", func() []hashkey.Hash {
			hs := random(20_000)
			return append(append(hs, hs...), hs[:5000]...)
		}()},
		{"all equal", slices.Repeat(random(1), 5000)},
		{"sorted", func() []hashkey.Hash {
			hs := random(20_000)
			slices.SortFunc(hs, compareHashes)
			return hs
		}()},
		{"reversed", func() []hashkey.Hash {
			hs := random(20_000)
			slices.SortFunc(hs, func(a, b hashkey.Hash) int { return compareHashes(b, a) })
			return hs
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Clone(tc.hs)
			slices.SortFunc(want, func(a, b hashkey.Hash) int { return bytes.Compare(a[:], b[:]) })
			got := slices.Clone(tc.hs)
			sortHashes(got)
			if !slices.Equal(got, want) {
				t.Fatal("sortHashes differs from a comparison sort")
			}
		})
	}
}

// BenchmarkSortHashes sorts a load chunk of 4M random hashes (Load's
// default: 128 MiB).
func BenchmarkSortHashes(b *testing.B) {
	src := make([]hashkey.Hash, 4<<20)
	r := rand.New(rand.NewPCG(63, 64))
	for i := range src {
		for j := 0; j < hashkey.Size; j += 8 {
			binary.LittleEndian.PutUint64(src[i][j:], r.Uint64())
		}
	}
	hs := make([]hashkey.Hash, len(src))
	b.SetBytes(int64(len(src)) * hashkey.Size)
	for b.Loop() {
		b.StopTimer()
		copy(hs, src)
		b.StartTimer()
		sortHashes(hs)
	}
	if !slices.IsSortedFunc(hs, compareHashes) {
		b.Fatal("not sorted")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(hs)), "ns/hash")
}

// BenchmarkSortRich sorts the rich entries of a load chunk of a million
// random full entries with values (import --store-url of a million URLs:
// one chunk at Load's default).
func BenchmarkSortRich(b *testing.B) {
	src := make([]richEntry, 1<<20)
	r := rand.New(rand.NewPCG(65, 66))
	for i := range src {
		for j := 0; j < hashkey.Size; j += 8 {
			binary.LittleEndian.PutUint64(src[i].hash[j:], r.Uint64())
		}
		src[i].n, src[i].off, src[i].vlen = hashkey.Size, uint32(i*60), 60
	}
	rs := make([]richEntry, len(src))
	for b.Loop() {
		b.StopTimer()
		copy(rs, src)
		b.StartTimer()
		sortRich(rs)
	}
	if !slices.IsSortedFunc(rs, compareRichInput) {
		b.Fatal("not sorted")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(rs)), "ns/entry")
}
