package query

import (
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzParseHexPrefix: never panics; what parses prints back as the input
// (lowercased, with a trailing zero nibble for an odd count).
func FuzzParseHexPrefix(f *testing.F) {
	for _, s := range []string{"0", "0f1", "ABCD", strings.Repeat("f", 64), strings.Repeat("f", 65), "", "g", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, bits, err := ParseHexPrefix(s)
		if err != nil {
			return
		}
		if bits != 4*len(s) || len(b) != (len(s)+1)/2 {
			t.Fatalf("ParseHexPrefix(%q) = %x, %d bits", s, b, bits)
		}
		got := hex.EncodeToString(b)[:len(s)]
		if got != strings.ToLower(s) {
			t.Fatalf("ParseHexPrefix(%q) prints back as %q", s, got)
		}
		if len(s)%2 == 1 && b[len(b)-1]&0x0f != 0 {
			t.Fatalf("ParseHexPrefix(%q): low nibble of a half byte is not zero", s)
		}
	})
}
