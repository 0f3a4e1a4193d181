package filter

import (
	"bytes"
	"errors"
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

// TestEncode: Encode writes what Marshal returns, for both forms, and a
// writer that fails partway makes it fail, never report a short encoding
// as whole.
func TestEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	sparse, flat := New(40), New(33)
	for _, h := range randHashes(r, 1000) {
		sparse.AddFull(&h)
	}
	for _, h := range randHashes(r, 200_000) {
		flat.AddFull(&h)
	}
	flat.AddPrefix([]byte{1, 2, 3, 4})
	if sparse.IsFlat() || !flat.IsFlat() {
		t.Fatalf("forms: sparse flat %v, flat flat %v", sparse.IsFlat(), flat.IsFlat())
	}
	for name, f := range map[string]*Filter{"bitmap": sparse, "flat": flat} {
		want, wfl, wsl, err := f.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		fl, sl, err := f.Encode(&buf)
		if err != nil || fl != wfl || sl != wsl || !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("%s: Encode = %d+%d bytes (%v), Marshal %d+%d", name, fl, sl, err, wfl, wsl)
		}
		for _, cut := range []int{0, 7, len(want) / 2, len(want) - 1} {
			if _, _, err := f.Encode(&failingWriter{left: cut}); !errors.Is(err, errDiskFull) {
				t.Errorf("%s: Encode with a writer failing after %d bytes: %v", name, cut, err)
			}
		}
	}
}

var errDiskFull = errors.New("disk full")

// failingWriter takes left bytes, then fails.
type failingWriter struct{ left int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errDiskFull
	}
	w.left -= len(p)
	return len(p), nil
}
