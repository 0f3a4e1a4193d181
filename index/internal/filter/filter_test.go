package filter

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/urlhash/urlhash/hashkey"
)

// randHashes returns n random hashes.
func randHashes(r *rand.Rand, n int) []hashkey.Hash {
	hs := make([]hashkey.Hash, n)
	for i := range hs {
		for j := 0; j < hashkey.Size; j += 8 {
			binary.LittleEndian.PutUint64(hs[i][j:], r.Uint64())
		}
	}
	return hs
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
	f := New(BitsFor(uint64(n)))
	var h hashkey.Hash
	for _, v := range lead {
		binary.BigEndian.PutUint64(h[:], v)
		f.AddFull(&h)
	}
	data, fl, _, err := f.Marshal()
	if err != nil || uint64(len(data)) < fl {
		panic(err)
	}
	out = append(out, filterFigures{"roaring64 leading k bits (chosen)",
		float64(fl) / float64(n),
		float64(f.MemBytes()) / float64(n),
		fp(func(v uint64) bool { binary.BigEndian.PutUint64(h[:], v); return f.MayHaveFull(&h) })})
	return out
}

func TestFilterFigures(t *testing.T) {
	const n = 20_000
	figures := measureFilters(n, 100_000, 1)
	for _, f := range figures {
		t.Logf("n=%d %-34s %6.2f B/entry serialized %7.2f B/entry in memory, FP %.4f%%",
			n, f.name, f.bytesPerKey, f.memPerKey, 100*f.falsePosRate)
	}
	// The chosen design is measured last (measureFilters).
	f := figures[len(figures)-1]
	if !strings.Contains(f.name, "(chosen)") {
		t.Fatalf("the last figure is %q, not the chosen filter's", f.name)
	}
	if f.bytesPerKey > 3 || f.falsePosRate > 0.0015 || f.falsePosRate == 0 {
		t.Errorf("chosen filter: %.2f B/entry, FP %.4f%%; want <= 3 and about 0.1%%",
			f.bytesPerKey, 100*f.falsePosRate)
	}
}

// FuzzUnmarshal feeds arbitrary bytes to Unmarshal: it fails cleanly (an
// error, never a panic), or yields a filter that answers probes and
// encodes to bytes that decode to the same encoding.
func FuzzUnmarshal(f *testing.F) {
	var h hashkey.Hash
	h[0], h[5] = 0xab, 0xcd
	flt := New(MinBits)
	flt.AddFull(&h)
	flt.AddPrefix(h[:4])
	data, fl, _, _ := flt.Marshal()
	f.Add(data, fl, uint8(MinBits))
	// A filter in the flat form: 5000 values of 20 bits.
	dense := New(MinBits)
	r := rand.New(rand.NewPCG(7, 8))
	for _, x := range randHashes(r, 5000) {
		dense.AddFull(&x)
	}
	data, fl, _, _ = dense.Marshal()
	f.Add(data, fl, uint8(MinBits))
	f.Add([]byte{0x3a, 0x30, 0, 0}, uint64(2), uint8(30))
	f.Add(make([]byte, 16), uint64(8), uint8(64))
	f.Fuzz(func(t *testing.T, data []byte, fullLen uint64, k uint8) {
		k = MinBits + k%(MaxBits-MinBits+1)
		if fullLen > uint64(len(data)) {
			return
		}
		flt, err := Unmarshal(k, data, fullLen, uint64(len(data))-fullLen)
		if err != nil {
			return
		}
		flt.MayHaveFull(&h)
		flt.MayHavePrefixOf(&h)
		enc, fl, sl, err := flt.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Unmarshal(k, enc, fl, sl)
		if err != nil {
			t.Fatalf("re-encoded filter does not decode: %v", err)
		}
		enc2, _, _, _ := again.Marshal()
		if !bytes.Equal(enc, enc2) {
			t.Fatal("encoding not stable across a round trip")
		}
		flt.AddFull(&h)
		if !flt.MayHaveFull(&h) {
			t.Fatal("added key reported absent")
		}
	})
}
