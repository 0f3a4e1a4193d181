package hashkey

import (
	"strings"
	"testing"
)

// parseForms are the text forms of one hash that ParseHash reads: lower
// and upper case hex, and the decimal words.
func parseForms() []struct{ name, s string } {
	h := Sum([]byte("https://example.com/"))
	return []struct{ name, s string }{
		{"hex", h.String()},
		{"HEX", strings.ToUpper(h.String())},
		{"decimal", h.Decimal()},
	}
}

// TestParseHashAllocs: every text form parses without allocating.
func TestParseHashAllocs(t *testing.T) {
	for _, f := range parseForms() {
		if n := testing.AllocsPerRun(100, func() { ParseHash(f.s) }); n != 0 {
			t.Errorf("ParseHash(%s) allocates %v times, want 0", f.name, n)
		}
	}
}

// BenchmarkParseHash parses one hash in each text form; SetBytes is the
// text's length.
func BenchmarkParseHash(b *testing.B) {
	for _, f := range parseForms() {
		want := MustParseHash(f.s)
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.s)))
			b.ReportAllocs()
			for b.Loop() {
				h, err := ParseHash(f.s)
				if err != nil || h != want {
					b.Fatalf("ParseHash(%q) = %v, %v", f.s, h, err)
				}
			}
		})
	}
}

// BenchmarkParseShort parses the two shorter hashes from hex.
func BenchmarkParseShort(b *testing.B) {
	h := Sum([]byte("https://example.com/"))
	for _, f := range []struct {
		name  string
		s     string
		parse func(string) error
	}{
		{"short", h.Short().String(), func(s string) error { _, err := ParseShort(s); return err }},
		{"very-short", h.VeryShort().String(), func(s string) error { _, err := ParseVeryShort(s); return err }},
	} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.s)))
			b.ReportAllocs()
			for b.Loop() {
				if err := f.parse(f.s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
