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
// their sorted order; values of up to two arena chunks are among the
// puts.
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
						if rng.IntN(50) == 0 {
							// Up to two arena chunks: values that end a
							// chunk and values with a chunk of their own.
							e.val.b = append(e.val.b, bytes.Repeat([]byte{byte(op)}, rng.IntN(2*arenaChunk))...)
						}
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

// TestDeltaCloneRange: a clone of a range holds the delta's entries in it,
// however narrow the range (the bitset of leading bits answers the
// narrow ones without a pass) and wherever its bounds fall: ranges of
// queue-like prefixes of 64 bits (keys sharing 8 leading bytes, as a
// frontier's due keys), of 1 to 40 bits around held keys, and ranges
// whose bounds are held keys.
func TestDeltaCloneRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	d := newDelta(0)
	model := map[Key]bool{}
	var held []Key
	for q := range 40 {
		lead := keyOf(uint64(1000 + q))
		for i := range 1 + q%5 {
			k := keyOf(uint64(q*100 + i))
			copy(k[:8], lead[:8])
			held = append(held, k)
		}
	}
	for i := range 300 {
		held = append(held, keyOf(uint64(1e6+i)))
	}
	for i, k := range held {
		d.put(&k, deltaEntry{seq: uint64(i + 1), row: i%3 != 0})
		model[k] = true
	}
	for i := 0; i < len(held); i += 7 {
		d.remove(&held[i])
		delete(model, held[i])
	}
	check := func(name string, lo, hi *Key) {
		t.Helper()
		var want []Key
		for k := range model {
			if (lo == nil || compareKeys(k, *lo) >= 0) && (hi == nil || compareKeys(k, *hi) < 0) {
				want = append(want, k)
			}
		}
		slices.SortFunc(want, compareKeys)
		c := d.cloneRange(lo, hi)
		got := slices.Clone(c.ents[:len(c.ents):len(c.ents)])
		var keys []Key
		for _, e := range got {
			keys = append(keys, e.k)
		}
		slices.SortFunc(keys, compareKeys)
		if !slices.Equal(keys, want) || c.len() != len(want) {
			t.Fatalf("%s: clone of [%x, %x) holds %d keys, want %d", name, lo[:6], hi[:6], len(keys), len(want))
		}
		c.release()
	}
	for i, k := range held {
		for _, bits := range []int{1, 8, 20, 21, 22, 23, 24, 30, 40, 64} {
			lo, hi := prefixRange(k[:], bits)
			if hi != nil {
				check(fmt.Sprintf("key %d, %d bits", i, bits), &lo, hi)
			}
		}
		// Bounds on held keys: k itself is in [k, k+1) and not in [k-1, k).
		next, prev := k, k
		incKey(&next, 1)
		incKey(&prev, -1)
		check(fmt.Sprintf("key %d alone", i), &k, &next)
		check(fmt.Sprintf("key %d excluded", i), &prev, &k)
	}
	for i := range 2000 {
		a, b := keyOf(uint64(rng.Uint64())), keyOf(uint64(rng.Uint64()))
		if compareKeys(a, b) > 0 {
			a, b = b, a
		}
		copy(b[:2], a[:2]) // mostly narrow
		if compareKeys(a, b) > 0 {
			a, b = b, a
		}
		check(fmt.Sprintf("random %d", i), &a, &b)
	}
	empty := newDelta(0)
	lo, hi := prefixRange(held[0][:], 64)
	if c := empty.cloneRange(&lo, hi); c.len() != 0 {
		t.Fatalf("an empty delta's clone holds %d keys", c.len())
	}
}

// incKey adds step (1 or -1) to k as a 256-bit big-endian number.
func incKey(k *Key, step int) {
	for i := len(k) - 1; i >= 0; i-- {
		if step > 0 {
			k[i]++
			if k[i] != 0 {
				return
			}
		} else {
			k[i]--
			if k[i] != 0xff {
				return
			}
		}
	}
}
