package keytable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDelta runs random puts and removes on deltas made for fewer keys
// than they get (they grow) and for more, against a map, then checks
// their sorted order.
func TestDelta(t *testing.T) {
	for _, want := range []int{0, 10, 5000} {
		d := newDelta(want)
		model := map[Key]deltaEntry{}
		rng := rand.New(rand.NewPCG(uint64(want), 3))
		universe := make([]Key, 2000)
		for i := range universe {
			universe[i] = keyOf(uint64(i))
		}
		for op := range 20000 {
			k := &universe[rng.IntN(len(universe))]
			switch rng.IntN(3) {
			case 0, 1:
				e := deltaEntry{seq: uint64(op), row: rng.IntN(2) == 0}
				if e.row {
					e.hides = rng.IntN(3) == 0
					if rng.IntN(2) == 0 {
						e.cols = Cols{First: int64(op + 1), Expires: int64(rng.IntN(3))}
					}
					if rng.IntN(3) == 0 {
						e.val.b = fmt.Appendf(nil, "value %d", op)
					}
				}
				d.put(k, e)
				model[*k] = e
			default:
				d.remove(k)
				delete(model, *k)
			}
		}
		if d.len() != len(model) {
			t.Fatalf("want %d: len = %d, want %d", want, d.len(), len(model))
		}
		for i := range universe {
			got, ok := d.get(&universe[i])
			w, wok := model[universe[i]]
			if ok != wok || !sameEntry(got, w) {
				t.Fatalf("want %d: get(%x) = %v %v, want %v %v", want, universe[i][:4], got, ok, w, wok)
			}
		}
		live, dead := d.sorted()
		var wantLive, wantDead []Key
		for k, e := range model {
			if e.row {
				wantLive = append(wantLive, k)
			}
			if !e.row || e.hides {
				wantDead = append(wantDead, k)
			}
		}
		slices.SortFunc(wantLive, compareKeys)
		slices.SortFunc(wantDead, compareKeys)
		keysOf := func(ix []uint32) []Key {
			var ks []Key
			for _, i := range ix {
				ks = append(ks, d.ents[i].k)
			}
			return ks
		}
		if !slices.Equal(keysOf(live), wantLive) || !slices.Equal(keysOf(dead), wantDead) {
			t.Fatalf("want %d: sorted: %d live, %d deleted, want %d, %d", want, len(live), len(dead), len(wantLive), len(wantDead))
		}
		c := d.clone()
		if c.len() != d.len() || len(c.ents) != d.len() {
			t.Fatalf("clone: %d entries, want %d", len(c.ents), d.len())
		}
		for i := range c.ents {
			got, _ := c.entry(i)
			if w := model[c.ents[i].k]; !sameEntry(got, w) {
				t.Fatalf("clone: %x = %+v, want %+v", c.ents[i].k[:4], got, w)
			}
		}
	}
}

// TestDeltaAllocs: a delta made for n keys allocates once for them.
func TestDeltaAllocs(t *testing.T) {
	const n = 4096
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = keyOf(uint64(i))
	}
	allocs := testing.AllocsPerRun(5, func() {
		d := newDelta(n)
		for i := range keys {
			d.put(&keys[i], deltaEntry{seq: 1, row: true})
		}
	})
	if allocs > 4 { // the delta, its entries, index and bitset
		t.Fatalf("%v allocations for a delta of %d keys, want 4", allocs, n)
	}
}

func sameEntry(a, b deltaEntry) bool {
	return a.seq == b.seq && a.row == b.row && a.hides == b.hides && a.cols == b.cols &&
		bytes.Equal(a.val.b, b.val.b) && a.val.f == b.val.f && a.val.ord == b.val.ord
}
