package hashkey

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParsePrefix(t *testing.T) {
	full := "0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7"
	for _, tc := range []struct {
		in   string
		want string // "" means an error
		bits int
	}{
		// Whole and half bytes, either case.
		{in: "0", want: "00", bits: 4},
		{in: "0f1", want: "0f10", bits: 12},
		{in: "ABcd", want: "abcd", bits: 16},
		{in: full, want: full, bits: 256},
		// Malformed: empty, a non-digit, longer than a hash.
		{in: ""},
		{in: "0g"},
		{in: full + "0"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			b, bits, err := ParsePrefix(tc.in)
			if tc.want == "" {
				var te *TextError
				if !errors.As(err, &te) || te.Input != tc.in {
					t.Fatalf("ParsePrefix(%q) error = %v, want a *TextError naming it", tc.in, err)
				}
				return
			}
			if got := fmt.Sprintf("%x", b); err != nil || got != tc.want || bits != tc.bits {
				t.Fatalf("ParsePrefix(%q) = %s, %d, %v; want %s, %d", tc.in, got, bits, err, tc.want, tc.bits)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	full := "0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7"
	for _, tc := range []struct {
		in   string
		want int // bytes given; 0 means an error
	}{
		{full, Size},
		{strings.ToUpper(full), Size},
		{"15978973112404087055-11952159289928715011-16949433277703541955-15558110937471207048", Size},
		{full[:8], 4},
		{full[:62], 31},
		{full[:6], 0},  // shorter than the minimum prefix
		{full[:9], 0},  // half a byte
		{full[:63], 0}, // neither a prefix nor a hash
		{"zz" + full[2:], 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			h, n, err := ParseKey(tc.in, 4)
			if tc.want == 0 {
				if err == nil {
					t.Fatalf("ParseKey(%q) = %x, %d; want an error", tc.in, h, n)
				}
				return
			}
			if err != nil || n != tc.want {
				t.Fatalf("ParseKey(%q) = %d bytes, %v; want %d", tc.in, n, err, tc.want)
			}
			if n < Size && hex.EncodeToString(h[:n]) != strings.ToLower(tc.in) {
				t.Fatalf("ParseKey(%q) = %x", tc.in, h[:n])
			}
		})
	}
}

// FuzzParsePrefix: never panics; what parses prints back as the input
// (lowercased, with a zero low nibble for an odd count).
func FuzzParsePrefix(f *testing.F) {
	for _, s := range []string{"0", "0f1", "ABCD", strings.Repeat("f", 64), strings.Repeat("f", 65), "", "g", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, bits, err := ParsePrefix(s)
		if err != nil {
			return
		}
		if bits != 4*len(s) || len(b) != (len(s)+1)/2 {
			t.Fatalf("ParsePrefix(%q) = %x, %d bits", s, b, bits)
		}
		if got := hex.EncodeToString(b)[:len(s)]; got != strings.ToLower(s) {
			t.Fatalf("ParsePrefix(%q) prints back as %q", s, got)
		}
		if len(s)%2 == 1 && b[len(b)-1]&0x0f != 0 {
			t.Fatalf("ParsePrefix(%q): low nibble of a half byte is not zero", s)
		}
	})
}

// FuzzParseKey: never panics; a full key round-trips through String, a
// prefix through hex.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"0f115db0", strings.Repeat("a", 64), strings.Repeat("a", 63), "1-2-3-4", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, n, err := ParseKey(s, 4)
		if err != nil {
			return
		}
		switch {
		case n == Size:
			if back, err := ParseHash(h.String()); err != nil || back != h {
				t.Fatalf("ParseKey(%q) = %v does not round-trip", s, h)
			}
		case n < 4 || n >= Size:
			t.Fatalf("ParseKey(%q) = %d bytes", s, n)
		case hex.EncodeToString(h[:n]) != strings.ToLower(s):
			t.Fatalf("ParseKey(%q) = %x", s, h[:n])
		}
	})
}
