package uts46

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var punycodeCases = []struct {
	name, decoded, encoded string
}{
	// RFC 3492 section 7.1.
	{"rfc-a-arabic", "\u0644\u064A\u0647\u0645\u0627\u0628\u062A\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064A\u061F", "egbpdaj6bu4bxfgehfvwxn"},
	{"rfc-b-chinese-simplified", "\u4ED6\u4EEC\u4E3A\u4EC0\u4E48\u4E0D\u8BF4\u4E2D\u6587", "ihqwcrb4cv8a8dqg056pqjye"},
	{"rfc-c-chinese-traditional", "\u4ED6\u5011\u7232\u4EC0\u9EBD\u4E0D\u8AAA\u4E2D\u6587", "ihqwctvzc91f659drss3x8bo0yb"},
	{"rfc-l-mixed", "3\u5E74B\u7D44\u91D1\u516B\u5148\u751F", "3B-ww4c5e180e575a65lsy2b"},
	{"rfc-p-mixed", "Maji\u3067Koi\u3059\u308B5\u79D2\u524D", "MajiKoi5-783gue6qz075azm5e"},
	{"rfc-s-ascii", "-> $1.00 <-", "-> $1.00 <--"},
	// punycode.js.
	{"single", "\u00fc", "tda"},
	{"several", "\u00fc\u00eb\u00e4\u00f6\u2665", "4can8av2009b"},
	{"mixed", "b\u00fccher", "bcher-kva"},
	{"astral", "\U0001F4A9", "ls8h"},
}

func TestPunycode(t *testing.T) {
	for _, tc := range punycodeCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := encodePunycode(nil, []rune(tc.decoded))
			if err != nil || string(got) != tc.encoded {
				t.Errorf("encode(%+q) = %q, %v; want %q", tc.decoded, got, err, tc.encoded)
			}
			if tc.decoded == strings.TrimSuffix(tc.encoded, "-") {
				return // all ASCII: decode gives the basic part, which is the same
			}
			dec, err := decodePunycode(nil, tc.encoded, MaxLabelLength)
			if err != nil || string(dec) != tc.decoded {
				t.Errorf("decode(%q) = %+q, %v; want %+q", tc.encoded, string(dec), err, tc.decoded)
			}
		})
	}
}

func TestPunycodeErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"-abc", ErrPunycode},        // delimiter first: '-' is no digit
		{"ls8h=", ErrPunycode},       // bad digit
		{"a", ErrPunycode},           // decodes to U+0080 fine, but...
		{"99999999999", ErrPunycode}, // overflow
		{encodeInt(0x110000-pcInitialN, pcInitialBias), ErrPunycode}, // U+110000
		{encodeInt(0xD800-pcInitialN, pcInitialBias), ErrPunycode},   // a surrogate
		{"b", ErrPunycode},         // truncated integer
		{"t\u00e9-a", ErrPunycode}, // non-ASCII basic part
	} {
		_, err := decodePunycode(nil, tc.in, MaxLabelLength)
		if tc.in == "a" {
			if err != nil {
				t.Errorf("decode(%q): %v, want success (U+0080)", tc.in, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("decode(%q) = %v, want %v", tc.in, err, tc.want)
		}
	}
	// The cap stops the decoder before it does the work.
	long, _ := encodePunycode(nil, []rune(strings.Repeat("ü", 5)))
	if _, err := decodePunycode(nil, string(long), 4); !errors.Is(err, ErrLabelTooLong) {
		t.Errorf("decode over the cap: %v", err)
	}
}

// encodeInt returns q as a generalized variable-length integer.
func encodeInt(q, bias int) string {
	var out []byte
	for k := pcBase; ; k += pcBase {
		t := threshold(k, bias)
		if q < t {
			break
		}
		out = append(out, encodeDigit(t+(q-t)%(pcBase-t)))
		q = (q - t) / (pcBase - t)
	}
	return string(append(out, encodeDigit(q)))
}

// slowEncode is RFC 3492 section 6.3 as written: quadratic.
func slowEncode(s []rune) (string, bool) {
	var out []byte
	b := 0
	for _, r := range s {
		if r < 0x80 {
			out = append(out, byte(r))
			b++
		}
	}
	if b > 0 {
		out = append(out, '-')
	}
	n, delta, bias, h := pcInitialN, 0, pcInitialBias, b
	for h < len(s) {
		m := int(utf8.MaxRune) + 1
		for _, r := range s {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range s {
			if int(r) < n {
				delta++
			}
			if int(r) == n {
				out = append(out, encodeInt(delta, bias)...)
				bias = adapt(delta, h+1, h == b)
				delta = 0
				h++
			}
		}
		delta++
		n++
	}
	return string(out), true
}

// slowDecode is RFC 3492 section 6.2 as written: quadratic.
func slowDecode(s string) ([]rune, bool) {
	b := strings.LastIndexByte(s, '-')
	var out []rune
	start := 0
	if b > 0 {
		for i := 0; i < b; i++ {
			out = append(out, rune(s[i]))
		}
		start = b + 1
	}
	n, i, bias := pcInitialN, 0, pcInitialBias
	for in := start; in < len(s); {
		oldi, w := i, 1
		for k := pcBase; ; k += pcBase {
			if in >= len(s) {
				return nil, false
			}
			d, ok := decodeDigit(s[in])
			in++
			if !ok || d > (pcMaxInt-i)/w {
				return nil, false
			}
			i += d * w
			t := threshold(k, bias)
			if d < t {
				break
			}
			if w > pcMaxInt/(pcBase-t) {
				return nil, false
			}
			w *= pcBase - t
		}
		bias = adapt(i-oldi, len(out)+1, oldi == 0)
		if i/(len(out)+1) > pcMaxInt-n {
			return nil, false
		}
		n += i / (len(out) + 1)
		i %= len(out) + 1
		if n > utf8.MaxRune || n >= 0xD800 && n <= 0xDFFF {
			return nil, false
		}
		out = slices.Insert(out, i, rune(n))
		i++
	}
	return out, true
}

// TestPunycodeAgainstSlow checks the O(n log n) coder against the textbook
// one on random labels, including repeated code points and long ones.
func TestPunycodeAgainstSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3492, 1))
	alphabets := [][]rune{
		[]rune("ab-9üéß"),
		[]rune("日本語中文한국어"),
		{0x80, 0x81, 0x10FFFF, 0xFFFF, 0x1F4A9, 'z'},
	}
	for iter := range 3000 {
		alpha := alphabets[iter%len(alphabets)]
		n := rng.IntN(40)
		if iter%100 == 0 {
			n = 1000 + rng.IntN(24)
		}
		s := make([]rune, n)
		for i := range s {
			s[i] = alpha[rng.IntN(len(alpha))]
		}
		want, _ := slowEncode(s)
		got, err := encodePunycode(nil, s)
		if err != nil || string(got) != want {
			t.Fatalf("encode(%+q) = %q, %v; want %q", string(s), got, err, want)
		}
		if !hasNonASCII(s) {
			continue
		}
		enc := want
		dec, err := decodePunycode(nil, enc, MaxLabelLength)
		if err != nil || !slices.Equal(dec, s) {
			t.Fatalf("decode(%q) = %+q, %v; want %+q", enc, string(dec), err, string(s))
		}
		// Random digit strings decode the same way, or fail both ways.
		junk := []byte(enc)
		junk[rng.IntN(len(junk))] = "abc-0189xyz"[rng.IntN(11)]
		want2, ok := slowDecode(string(junk))
		got2, err := decodePunycode(nil, string(junk), 1<<20)
		if ok != (err == nil) || ok && !slices.Equal(want2, got2) {
			t.Fatalf("decode(%q) = %+q, %v; slow %+q, %t", junk, string(got2), err, string(want2), ok)
		}
	}
}
