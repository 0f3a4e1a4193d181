package uts46

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// wptCase is an entry of the web-platform-tests files toascii.json and
// IdnaTestV2.json: the host given to new URL("https://" + input + "/x"),
// and the host that results, or null for a failure.
type wptCase struct {
	Comment         string  `json:"comment"`
	Input           string  `json:"input"`
	Output          *string `json:"output"`
	URLStandardOnly bool    `json:"urlStandardOnly"`
}

func loadWPT(t *testing.T, file string) []wptCase {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var cases []wptCase
	for _, r := range raw {
		if r[0] == '"' {
			continue // a comment line
		}
		var c wptCase
		if err := json.Unmarshal(r, &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// wptTally counts what a WPT run did, by outcome and reason.
type wptTally struct {
	passed     int
	superseded int // ASCII domains whose null output whatwg/url#914 changed
	unicode17  int // cases whose Unicode 16.0 expectation Unicode 17.0 changed
	skipped    map[string]int
}

func (w *wptTally) skip(reason string) {
	if w.skipped == nil {
		w.skipped = map[string]int{}
	}
	w.skipped[reason]++
}

func (w *wptTally) log(t *testing.T, file string, total int) {
	t.Helper()
	skipped := 0
	for reason, n := range w.skipped {
		skipped += n
		t.Logf("%s: skipped %d: %s", file, n, reason)
	}
	t.Logf("%s: %d cases: %d passed (%d of them with the whatwg/url#914 expectation, %d with the Unicode 17.0 one), %d skipped",
		file, total, w.passed, w.superseded, w.unicode17, skipped)
	if w.passed+skipped != total {
		t.Errorf("%s: %d passed + %d skipped != %d cases", file, w.passed, skipped, total)
	}
}

// hostParserSkip returns why the URL parser would not hand input to the
// host parser as it is, or "". WPT's IdnaTestV2.any.js percent-encodes
// ':', '/', '?', '#' and '\', which the host parser decodes again, so those
// reach domain to ASCII unchanged; the rest are the URL parser's own
// business.
func hostParserSkip(input string) string {
	switch {
	case input == "":
		return "empty input: new URL() cannot test it (IdnaTestV2.any.js skips it too)"
	case strings.ContainsAny(input, "\t\n\r"):
		return "tab or newline: the URL parser removes them before host parsing"
	case strings.Contains(input, "@") || input[0] == '[':
		return "'@' or a leading '[': userinfo or IPv6, not domain to ASCII"
	case hasPercentEscape(input):
		return "%XX escape: the host parser percent-decodes before domain to ASCII"
	}
	return ""
}

// hasPercentEscape reports whether s holds a '%' that percent-decoding
// would change: one followed by two hex digits. A lone '%' reaches domain
// to ASCII as it is.
func hasPercentEscape(s string) bool {
	isHex := func(c byte) bool {
		return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	}
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
	}
	return false
}

// endsInANumber is the URL Standard's ends-in-a-number checker, on an
// ASCII domain: such a host goes to the IPv4 parser, not domain to ASCII.
func endsInANumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	if strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X") {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return false
}

// urlWant returns what the URL profile must return for a WPT case: the
// file's output, except for an ASCII domain that the file, written before
// whatwg/url#914, expects to fail: the URL Standard now lowercases any
// ASCII domain, failing only if the result is empty or holds a forbidden
// domain code point.
func urlWant(c wptCase) (want *string, superseded bool) {
	if c.Output != nil || !isASCII(c.Input) || c.Input == "" {
		return c.Output, false
	}
	for i := 0; i < len(c.Input); i++ {
		if isForbiddenDomain(c.Input[i]) {
			return nil, false
		}
	}
	lower := strings.ToLower(c.Input)
	return &lower, true
}

// unicode17 holds the cases of testdata/IdnaTestV2.json whose expectation
// is Unicode 16.0's, not that of the pinned 17.0, with the 17.0 result:
// the file is WPT's IdnaTestV2.json as vendored before the 17.0 regeneration
// (see testdata/README.md). Each involves a CJK Unified Ideographs
// Extension J code point (U+323B0..U+3347F, new in 17.0): unassigned, so
// disallowed, in 16.0, valid in 17.0. Unicode's own 17.0.0 IdnaTestV2.txt
// (2025-05-01) has, for the first two,
//
//	𲤱20.音.ꡦ1.; ; ; xn--20-9802c.xn--0w5a.xn--1-eg4e.; [A4_2]; ;
//	xn--20-9802c.xn--0w5a.xn--1-eg4e.; 𲤱20.音.ꡦ1.; ; xn--20-9802c.xn--0w5a.xn--1-eg4e.; [A4_2]; ;
//
// (A4_2, the DNS length check, does not apply), and tr46@6.0.0 and x/net's
// Unicode 17.0.0 tables agree with the third; TestUnicode17Skew checks the
// code points.
var unicode17 = map[string]string{
	"\U0003293120.\u97f3.\ua8661.":      "xn--20-9802c.xn--0w5a.xn--1-eg4e.",
	"xn--20-9802c.xn--0w5a.xn--1-eg4e.": "xn--20-9802c.xn--0w5a.xn--1-eg4e.",
	"xn--9-i0j5967eg3qz.ss":             "xn--9-i0j5967eg3qz.ss",
}

func TestUnicode17Skew(t *testing.T) {
	for _, r := range []rune{0x32931, 0x32B9A} {
		if r < 0x323B0 || r > 0x3347F {
			t.Errorf("U+%04X is not in CJK Unified Ideographs Extension J", r)
		}
		if got, want := lookup(r).status(), statusValid; got != want {
			t.Errorf("status of U+%04X = %v, want %v", r, got, want)
		}
	}
	for in, want := range unicode17 {
		for _, p := range []*Profile{URL, Lookup} {
			if got, err := p.ToASCII(in); err != nil || got != want {
				t.Errorf("%v.ToASCII(%+q) = %q, %v; want %q", p, in, got, err, want)
			}
		}
	}
}

func runWPT(t *testing.T, file string) {
	cases := loadWPT(t, file)
	var tally wptTally
	for _, c := range cases {
		if reason := hostParserSkip(c.Input); reason != "" {
			tally.skip(reason)
			continue
		}
		if want, ok := unicode17[c.Input]; ok && file == "testdata/IdnaTestV2.json" {
			// Checked, for both profiles, by TestUnicode17Skew.
			if got, err := ToASCII(c.Input); err != nil || got != want {
				t.Errorf("%s: ToASCII(%+q) = %q, %v; want %q (Unicode 17.0)", file, c.Input, got, err, want)
				continue
			}
			tally.unicode17++
			tally.passed++
			continue
		}
		want, superseded := urlWant(c)
		got, err := ToASCII(c.Input)
		if want == nil {
			if err == nil {
				if endsInANumber(got) {
					// The host parser hands such a result to the IPv4
					// parser, which rejects what is not an address.
					tally.skip("result ends in a number: the IPv4 parser, not domain to ASCII, rejects it")
					continue
				}
				t.Errorf("%s: ToASCII(%+q) = %q, want an error (%s)", file, c.Input, got, c.Comment)
				continue
			}
		} else if err != nil || got != *want {
			t.Errorf("%s: ToASCII(%+q) = %q, %v; want %q (%s)", file, c.Input, got, err, *want, c.Comment)
			continue
		}
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Errorf("%s: ToASCII(%+q): error %T is not an *Error", file, c.Input, err)
		}
		if superseded {
			// What the file records is plain UTS #46: Lookup must still
			// reject the domain.
			if got, err := Lookup.ToASCII(c.Input); err == nil {
				t.Errorf("%s: Lookup.ToASCII(%+q) = %q, want an error (%s)", file, c.Input, got, c.Comment)
				continue
			}
			tally.superseded++
		}
		tally.passed++
	}
	tally.log(t, file, len(cases))
}

func TestWPTToASCII(t *testing.T) {
	runWPT(t, "testdata/toascii.json")
}

func TestWPTIdnaTestV2(t *testing.T) {
	if _, err := os.Stat("testdata/IdnaTestV2.json"); err != nil {
		t.Skip(err)
	}
	runWPT(t, "testdata/IdnaTestV2.json")
}
