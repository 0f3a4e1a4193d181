package filter

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestValueSet checks the overlay's set against a map through growth,
// repeats, the value 0 and resets.
func TestValueSet(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var s valueSet
	model := map[uint64]bool{}
	check := func(stage string) {
		t.Helper()
		if s.len() != len(model) {
			t.Fatalf("%s: len %d, want %d", stage, s.len(), len(model))
		}
		got := s.appendTo(nil)
		slices.Sort(got)
		want := make([]uint64, 0, len(model))
		for v := range model {
			want = append(want, v)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: values differ from the model (%d against %d)", stage, len(got), len(want))
		}
		for range 1000 {
			v := r.Uint64N(1 << 20)
			if s.has(v) != model[v] {
				t.Fatalf("%s: has(%d) = %v", stage, v, s.has(v))
			}
		}
		if 2*s.n > len(s.slots) {
			t.Fatalf("%s: %d values in %d slots: more than half full", stage, s.n, len(s.slots))
		}
	}
	for round := range 3 {
		for range 50_000 {
			v := r.Uint64N(1 << 20) // repeats, and 0 now and then
			if s.add(v) == model[v] {
				t.Fatalf("round %d: add(%d) reported new %v", round, v, !model[v])
			}
			model[v] = true
		}
		check("filled")
		slots := len(s.slots)
		s.reset()
		clear(model)
		check("reset")
		if len(s.slots) != slots {
			t.Fatalf("reset dropped the slots (%d, had %d)", len(s.slots), slots)
		}
	}
}

// BenchmarkOverlay probes an overlay of 500,000 values (a full one at 8M
// keys) with absent values, against a Go map of the same values.
func BenchmarkOverlay(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var s valueSet
	m := map[uint64]struct{}{}
	for range 500_000 {
		v := r.Uint64()
		s.add(v)
		m[v] = struct{}{}
	}
	probes := make([]uint64, 1<<16)
	for i := range probes {
		probes[i] = r.Uint64()
	}
	b.Run("valueSet", func(b *testing.B) {
		i := 0
		for b.Loop() {
			s.has(probes[i&(1<<16-1)])
			i++
		}
	})
	b.Run("map", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_ = m[probes[i&(1<<16-1)]]
			i++
		}
	})
}
