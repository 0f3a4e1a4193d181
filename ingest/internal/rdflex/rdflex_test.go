package rdflex

import (
	"strings"
	"testing"
)

// iriTests are bodies of IRIREFs (after '<') with what IRIRef makes of
// them, whole.
var iriTests = []struct {
	name, src string
	want      string // the decoded IRI
	n         int    // bytes consumed
	kind      Kind   // of the error, when msg is set
	off       int
	msg       string
}{
	// Plain, escaped and non-ASCII IRIs.
	{"plain", "http://a/b> rest", "http://a/b", 11, 0, 0, ""},
	{"empty", ">", "", 1, 0, 0, ""},
	{"u escape", `http://a/\u00E9>`, "http://a/é", 16, 0, 0, ""},
	{"U escape", `http://a/\U0001F600>`, "http://a/😀", 20, 0, 0, ""},
	{"utf-8", "http://a/é>", "http://a/é", 12, 0, 0, ""},
	// Characters IRIREF forbids.
	{"space", "http://a b>", "", 0, InvalidIRI, 8, "forbidden character ' '"},
	{"newline", "http://a\n>", "", 0, InvalidIRI, 8, "newline in an IRI"},
	{"escaped gt", `http://a/\u003E>`, "", 0, InvalidIRI, 9, `escape of forbidden character '>'`},
	{"bad utf-8", "http://a/\xff>", "", 0, InvalidIRI, 9, "invalid UTF-8"},
	// Escapes that are no UCHAR.
	{"echar in an IRI", `http://a/\n>`, "", 0, Syntax, 9, `invalid escape "\\n"`},
	{"bad hex", `http://a/\u00G9>`, "", 0, Syntax, 9, `invalid escape "\\u00G"`},
	{"surrogate", `http://a/\uD800>`, "", 0, Syntax, 9, `escape "\\uD800" is not a Unicode scalar value`},
	{"too large", `http://a/\U00110000>`, "", 0, Syntax, 9, `escape "\\U00110000" is not a Unicode scalar value`},
	{"cut escape", `http://a/\u00`, "", 0, Syntax, 9, `incomplete escape "\\u00"`},
	// The end.
	{"unterminated", "http://a/b", "", 0, Syntax, 10, "unterminated IRI"},
	{"too long", strings.Repeat("a", 65) + ">", "", 0, TooLong, 0, "an IRI of more than 64 bytes"},
}

func TestIRIRef(t *testing.T) {
	for _, tc := range iriTests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, done, err := IRIRef(nil, []byte(tc.src), true, 64)
			if tc.msg != "" {
				if err == nil || err.Kind != tc.kind || err.Off != tc.off || err.Msg != tc.msg {
					t.Fatalf("IRIRef(%q) error = %+v, want {%d %d %q}", tc.src, err, tc.kind, tc.off, tc.msg)
				}
				return
			}
			if err != nil || !done || string(got) != tc.want || n != tc.n {
				t.Fatalf("IRIRef(%q) = %q, %d, %v, %v; want %q, %d", tc.src, got, n, done, err, tc.want, tc.n)
			}
		})
	}
}

// TestIRIRefPieces: an IRIREF given in pieces, as a streaming reader reads
// it, scans as it does whole, cut anywhere (in an escape, in a UTF-8
// sequence).
func TestIRIRefPieces(t *testing.T) {
	for _, tc := range iriTests {
		for cut := range len(tc.src) {
			checkPieces(t, tc.src, cut)
		}
	}
}

// checkPieces scans src given first cut bytes, then the rest, and compares
// with a scan of src whole.
func checkPieces(t *testing.T, src string, cut int) {
	t.Helper()
	want, wn, wdone, werr := IRIRef(nil, []byte(src), true, 64)
	got, n, done, err := IRIRef(nil, []byte(src[:cut]), false, 64)
	if err == nil && !done {
		var m int
		got, m, done, err = IRIRef(got, []byte(src[n:]), true, 64)
		if err != nil {
			err.Off += n
		}
		n += m
	}
	if err != nil && err.Kind == TooLong {
		err.Off = werr.Off // where a long IRI is noticed depends on its pieces
	}
	if (err == nil) != (werr == nil) || err != nil && *err != *werr || err == nil && (string(got) != string(want) || n != wn || done != wdone) {
		t.Fatalf("IRIRef(%q) cut at %d = %q, %d, %v, %+v; whole %q, %d, %v, %+v", src, cut, got, n, done, err, want, wn, wdone, werr)
	}
}

func FuzzIRIRef(f *testing.F) {
	for _, tc := range iriTests {
		f.Add(tc.src, uint8(len(tc.src)/2))
	}
	f.Fuzz(func(t *testing.T, src string, cut uint8) {
		checkPieces(t, src, min(int(cut), len(src)))
	})
}

func TestUCHAR(t *testing.T) {
	for _, tc := range []struct {
		src   string
		atEOF bool
		r     rune
		size  int
		msg   string
	}{
		{`\u0041x`, true, 'A', 6, ""},
		{`\U0001F600`, true, '😀', 10, ""},
		{`\u00`, false, 0, 0, ""}, // more to come
		{`\`, false, 0, 0, ""},
		{`\`, true, 0, 0, `incomplete escape "\\"`},
		{`\x41`, false, 0, 0, `invalid escape "\\x"`},
		{`\u0G`, false, 0, 0, `invalid escape "\\u0G"`},
		{`\uDFFF`, true, 0, 0, `escape "\\uDFFF" is not a Unicode scalar value`},
	} {
		r, size, err := UCHAR([]byte(tc.src), tc.atEOF)
		if tc.msg != "" {
			if err == nil || err.Msg != tc.msg || err.Kind != Syntax {
				t.Errorf("UCHAR(%q, %v) error %+v, want %q", tc.src, tc.atEOF, err, tc.msg)
			}
			continue
		}
		if err != nil || r != tc.r || size != tc.size {
			t.Errorf("UCHAR(%q, %v) = %q, %d, %v; want %q, %d", tc.src, tc.atEOF, r, size, err, tc.r, tc.size)
		}
	}
}

func TestIsECHAR(t *testing.T) {
	var got []byte
	for c := range 256 {
		if IsECHAR(byte(c)) {
			got = append(got, byte(c))
		}
	}
	if string(got) != `"'\bfnrt` {
		t.Errorf("ECHAR letters %q", got)
	}
}

// TestPNChars checks the name classes, built on XML's, against the ranges
// Turtle's grammar writes out, over every rune.
func TestPNChars(t *testing.T) {
	base := func(r rune) bool {
		switch {
		case 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z':
			return true
		case 0xC0 <= r && r <= 0xD6, 0xD8 <= r && r <= 0xF6, 0xF8 <= r && r <= 0x2FF,
			0x370 <= r && r <= 0x37D, 0x37F <= r && r <= 0x1FFF, 0x200C <= r && r <= 0x200D,
			0x2070 <= r && r <= 0x218F, 0x2C00 <= r && r <= 0x2FEF, 0x3001 <= r && r <= 0xD7FF,
			0xF900 <= r && r <= 0xFDCF, 0xFDF0 <= r && r <= 0xFFFD, 0x10000 <= r && r <= 0xEFFFF:
			return true
		}
		return false
	}
	u := func(r rune) bool { return base(r) || r == '_' }
	chars := func(r rune) bool {
		return u(r) || r == '-' || '0' <= r && r <= '9' || r == 0xB7 || 0x300 <= r && r <= 0x36F || 0x203F <= r && r <= 0x2040
	}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if IsPNCharsBase(r) != base(r) || IsPNCharsU(r) != u(r) || IsPNChars(r) != chars(r) {
			t.Fatalf("%U: PN_CHARS_BASE %v, PN_CHARS_U %v, PN_CHARS %v; the grammar says %v, %v, %v",
				r, IsPNCharsBase(r), IsPNCharsU(r), IsPNChars(r), base(r), u(r), chars(r))
		}
	}
}
