package index

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

// TestSortUnique: the batch order of AddKeys is every distinct key once,
// its first occurrence, in key order, whatever the keys share: random
// keys, repeats, keys whose leading 8 bytes tie or differ only in the bits
// that hold positions in the sort.
func TestSortUnique(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []hashkey.Hash { return randHashes(r, n) }
	sameLead := func(n int, low bool) []hashkey.Hash {
		ks := random(n)
		for i := range ks {
			copy(ks[i][:8], ks[0][:8])
			if low { // differ in the last byte of the lead only
				ks[i][7] = byte(r.Uint32())
			}
		}
		return ks
	}
	// withRepeats adds a third as many repeats (one at least).
	withRepeats := func(ks []hashkey.Hash) []hashkey.Hash {
		for range max(len(ks)/3, 1) {
			ks = append(ks, ks[r.IntN(len(ks))])
		}
		r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		return ks
	}
	for _, tc := range []struct {
		name string
		keys []hashkey.Hash
	}{
		{"one", random(1)},
		{"two-same", withRepeats(random(1))}, // one key twice
		{"random", random(1000)},
		{"power-of-two", random(1024)},
		{"repeats", withRepeats(random(1000))},
		{"same-lead", withRepeats(sameLead(300, false))},
		{"lead-low-bits", withRepeats(sameLead(300, true))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.name, "two") && len(tc.keys) != 2 {
				t.Fatalf("%d keys", len(tc.keys))
			}
			// The reference: positions sorted by key, then position.
			want := make([]int32, len(tc.keys))
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortStableFunc(want, func(a, b int32) int { return bytes.Compare(tc.keys[a][:], tc.keys[b][:]) })
			want = slices.CompactFunc(want, func(a, b int32) bool { return tc.keys[a] == tc.keys[b] })
			var sc addScratch
			for range 2 { // and again with the scratch reused
				sc.sortUnique(tc.keys)
				if !slices.Equal(sc.order, want) {
					t.Fatalf("order %v, want %v", sc.order[:min(10, len(sc.order))], want[:min(10, len(want))])
				}
			}
		})
	}
}
