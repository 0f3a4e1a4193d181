package pgindex

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestKeyRange(t *testing.T) {
	tests := []struct {
		name           string
		prefix         []byte
		bits           int
		wantLo, wantHi []byte
	}{
		// Whole bytes.
		{"empty", nil, 0, []byte{}, maxKey},
		{"one byte", []byte{0xab}, 8, []byte{0xab}, []byte{0xac}},
		{"carry", []byte{0x12, 0xff}, 16, []byte{0x12, 0xff}, []byte{0x13, 0x00}},
		{"all ones", []byte{0xff, 0xff}, 16, []byte{0xff, 0xff}, maxKey},
		// Half bytes and odd bits: bits past the prefix are cleared.
		{"nibble", []byte{0xab}, 4, []byte{0xa0}, []byte{0xb0}},
		{"three nibbles", []byte{0xab, 0xcd}, 12, []byte{0xab, 0xc0}, []byte{0xab, 0xd0}},
		{"nibble carry", []byte{0xaf, 0xf7}, 12, []byte{0xaf, 0xf0}, []byte{0xb0, 0x00}},
		{"one bit", []byte{0x80}, 1, []byte{0x80}, maxKey},
		{"one zero bit", []byte{0x7f}, 1, []byte{0x00}, []byte{0x80}},
		{"longer prefix than bits", []byte{1, 2, 3}, 8, []byte{1}, []byte{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, _ := keyRange(tc.prefix, tc.bits)
			if !bytes.Equal(lo, tc.wantLo) || !bytes.Equal(hi, tc.wantHi) {
				t.Errorf("keyRange(%x, %d) = [%x, %x), want [%x, %x)", tc.prefix, tc.bits, lo, hi, tc.wantLo, tc.wantHi)
			}
		})
	}
}

// TestKeyRangeAgreesWithBits checks the range against the definition: a
// key of at least nbytes bytes is in [lo, hi) exactly when its leading
// bits equal the prefix's.
func TestKeyRangeAgreesWithBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		bits := r.IntN(33)
		if r.IntN(4) == 0 {
			bits = r.IntN(257)
		}
		prefix := make([]byte, (bits+7)/8)
		for i := range prefix {
			prefix[i] = byte(r.Uint32())
		}
		key := make([]byte, 4+r.IntN(29))
		for i := range key {
			key[i] = byte(r.Uint32())
		}
		if r.IntN(2) == 0 { // make matches common
			copy(key, prefix)
			if len(key) > 0 && r.IntN(2) == 0 {
				key[r.IntN(len(key))] ^= 1 << r.IntN(8)
			}
		}
		lo, hi, nbytes := keyRange(prefix, bits)
		got := len(key) >= nbytes && bytes.Compare(key, lo) >= 0 && bytes.Compare(key, hi) < 0
		want := hasBitPrefix(key, prefix, bits)
		if got != want {
			t.Fatalf("key %x, prefix %x/%d: in [%x, %x) = %v, bit prefix = %v", key, prefix, bits, lo, hi, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://u:secret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgresql://u@h/db", "postgresql://u@h/db"},
		{"postgres://u@h/db?password=secret", "postgres://u@h/db?password=xxxxx"},
		{"host=h user=u password=secret dbname=db", "host=h user=u password=xxxxx dbname=db"},
		{"host=h password = 'se cret' dbname=db", "host=h password = xxxxx dbname=db"},
		{"host=h dbname=db", "host=h dbname=db"},
	}
	for _, tc := range tests {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, s := range []string{"Urlhash", "1abc", "a-b", "a b", `a"b`, string(make([]byte, 64))} {
		if err := (&Options{Schema: s}).Validate(); err == nil {
			t.Errorf("schema %q accepted", s)
		}
	}
	for _, s := range []string{"", "urlhash", "_x1", "crawl_2026"} {
		if err := (&Options{Schema: s}).Validate(); err != nil {
			t.Errorf("schema %q: %v", s, err)
		}
	}
}
