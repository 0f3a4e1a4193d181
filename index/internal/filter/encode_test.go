package filter

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

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
