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
	t.Logf("%s: %d cases: %d passed (%d of them with the whatwg/url#914 expectation), %d skipped",
		file, total, w.passed, w.superseded, skipped)
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
	case strings.ContainsAny(input, "@%") || input[0] == '[':
		return "'@', '%' or a leading '[': userinfo, percent-decoding or IPv6, before domain to ASCII"
	}
	return ""
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

func runWPT(t *testing.T, file string) {
	cases := loadWPT(t, file)
	var tally wptTally
	for _, c := range cases {
		if reason := hostParserSkip(c.Input); reason != "" {
			tally.skip(reason)
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
