package rice

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzDecode feeds the decoders hostile parameters, counts and data: they
// must return values or an error, never panic, and allocate in proportion
// to the data, not to the claimed count.
func FuzzDecode(f *testing.F) {
	cases, _ := readCases(f, "decode.txt")
	for _, c := range cases {
		f.Add(uint64(len(c[4])), 28, 3, mustHex(f, c[4]))
	}
	f.Add(uint64(5), 2, 2, []byte{0xf7, 0x02})
	f.Add(uint64(0), 3, 1<<30, []byte{0})
	f.Fuzz(func(t *testing.T, first uint64, k, count int, data []byte) {
		vs, err := Decode32(uint32(first), k, count, data)
		if err == nil {
			if len(vs) != count+1 || count > 8*len(data) {
				t.Fatalf("%d values for count %d from %d bytes", len(vs), count, len(data))
			}
			if !slices.IsSorted(vs) {
				t.Fatalf("unsorted %v", vs)
			}
			// Decoded values encode back to the same bits (the padding
			// of the last byte aside, which the decoder does not check).
			if count > 0 {
				_, _, again, err := Encode32(vs, k)
				if err == nil && (len(again) != len(data) || !bytes.Equal(again[:len(again)-1], data[:len(data)-1])) {
					t.Fatalf("re-encoded %x, decoded from %x", again, data)
				}
			}
		}
		if vs, err := Decode64(first, k, count, data); err == nil && !slices.IsSorted(vs) {
			t.Fatalf("unsorted %v", vs)
		}
		for _, size := range []int{16, 32} {
			firstb := make([]byte, size)
			firstb[size-1] = byte(first)
			out, err := DecodeWide(size, firstb, k+size*8-32, count, data)
			if err == nil && len(out) != size*(count+1) {
				t.Fatalf("%d bytes for count %d", len(out), count)
			}
		}
	})
}

// FuzzRoundTrip encodes sorted values and decodes them back.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 5)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, 30)
	f.Fuzz(func(t *testing.T, raw []byte, k int) {
		var vs []uint32
		for i := 0; i+4 <= len(raw); i += 4 {
			vs = append(vs, uint32(raw[i])<<24|uint32(raw[i+1])<<16|uint32(raw[i+2])<<8|uint32(raw[i+3]))
		}
		if len(vs) == 0 {
			return
		}
		slices.Sort(vs)
		k = 1 + (k&0xff)%31
		first, count, data, err := Encode32(vs, k)
		if err != nil {
			return // a quotient too large for k
		}
		got, err := Decode32(first, k, count, data)
		if err != nil {
			t.Fatalf("decode of encoded %v (k=%d): %v", vs, k, err)
		}
		if !slices.Equal(got, vs) {
			t.Fatalf("got %v, want %v", got, vs)
		}
		// The same values as 128-bit ones.
		var wide []byte
		for _, v := range vs {
			b := make([]byte, 16)
			b[12], b[13], b[14], b[15] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
			wide = append(wide, b...)
		}
		wk := 99 + k%28
		f16, c16, d16, err := EncodeWide(16, wide, wk)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeWide(16, f16, wk, c16, d16)
		if err != nil || !bytes.Equal(back, wide) {
			t.Fatalf("wide round trip: %v", err)
		}
	})
}
