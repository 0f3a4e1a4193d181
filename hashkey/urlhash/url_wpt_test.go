package urlhash

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// wptURLCase is one entry of testdata/wpt/urltestdata.json.
type wptURLCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

// wptSuperseded holds the entries whose expectation the URL Standard has
// changed since the vendored snapshot, with the current serialisation.
var wptSuperseded = map[string]string{
	// U+005E (^) joined the path percent-encode set.
	"foo://host/ !\"$%&'()*+,-./:;<=>@[\\]^_`{|}~": "foo://host/%20!%22$%&'()*+,-./:;%3C=%3E@[\\]%5E_%60%7B|%7D~",
	"wss://host/ !\"$%&'()*+,-./:;<=>@[\\]^_`{|}~": "wss://host/%20!%22$%&'()*+,-./:;%3C=%3E@[/]%5E_%60%7B|%7D~",
}

// loadWPTURLCases reads the URL parsing entries, skipping comment strings.
func loadWPTURLCases(t testing.TB) []wptURLCase {
	t.Helper()
	b, err := os.ReadFile("testdata/wpt/urltestdata.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var cases []wptURLCase
	for _, r := range raw {
		if len(r) > 0 && r[0] == '"' {
			continue
		}
		var c wptURLCase
		if err := json.Unmarshal(r, &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// inputScheme returns the lowercased scheme of a URL string, or "" when it
// has none, after the parser's preprocessing.
func inputScheme(s string) (scheme, rest string) {
	rs := string(preprocess(s))
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case isASCIIAlpha(rune(c)):
		case i > 0 && (isASCIIDigit(rune(c)) || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(rs[:i]), rs[i+1:]
		default:
			return "", ""
		}
	}
	return "", ""
}

// baseIndependent reports whether parsing c.Input against c.Base gives the
// same result as parsing it with no base: the input has a scheme, and
// either it differs from the base's scheme or two slashes follow it (so
// neither the special-relative nor the file-with-base states are entered).
func baseIndependent(c wptURLCase) bool {
	if c.Base == nil {
		return true
	}
	scheme, rest := inputScheme(c.Input)
	if scheme == "" {
		return false
	}
	baseScheme, _ := inputScheme(*c.Base)
	if special, _ := specialPort(scheme); !special {
		return true
	}
	return scheme != baseScheme || strings.HasPrefix(rest, "//")
}

func TestWPTURLTestData(t *testing.T) {
	cases := loadWPTURLCases(t)
	var applicable, passed, superseded int
	for _, c := range cases {
		if !baseIndependent(c) {
			continue
		}
		applicable++
		want, wantErr := c.Href, c.Failure
		if w, ok := wptSuperseded[c.Input]; ok {
			want = w
			superseded++
		}
		got, err := appendWHATWG(nil, c.Input, false)
		switch {
		case wantErr && err == nil:
			t.Errorf("parse(%q) = %q, want failure (base %v)", c.Input, got, deref(c.Base))
		case !wantErr && err != nil:
			t.Errorf("parse(%q): %v, want %q (base %v)", c.Input, err, want, deref(c.Base))
		case !wantErr && string(got) != want:
			t.Errorf("parse(%q) = %q, want %q (base %v)", c.Input, got, want, deref(c.Base))
		default:
			passed++
		}
	}
	t.Logf("urltestdata: %d entries, %d applicable with no base, %d passed (%d with superseded expectations)", len(cases), applicable, passed, superseded)
	if applicable < 500 {
		t.Errorf("only %d applicable entries", applicable)
	}
}

func deref(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// wptHostCase is one entry of toascii.json or IdnaTestV2.json: the host of
// "https://" + input + "/x", or null output for failure.
type wptHostCase struct {
	Comment string  `json:"comment"`
	Input   string  `json:"input"`
	Output  *string `json:"output"`
}

func loadWPTHostCases(t testing.TB, path string) []wptHostCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var cases []wptHostCase
	for _, r := range raw {
		if len(r) > 0 && r[0] == '"' {
			continue
		}
		var c wptHostCase
		if err := json.Unmarshal(r, &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

func TestWPTToASCII(t *testing.T) {
	for _, file := range []string{"testdata/wpt/toascii.json", "testdata/wpt/toascii-current.json", "testdata/wpt/IdnaTestV2.json"} {
		cases := loadWPTHostCases(t, file)
		passed := 0
		skipped := 0
		for _, c := range cases {
			// The empty input cannot be tested through a URL, and an input
			// holding a URL delimiter never reaches the host parser whole
			// (IdnaTestV2 rows such as "8ss.-?ⴏ" expect the UTS 46 failure
			// of the whole string): both are skipped, as the WPT harness
			// skips them.
			if c.Input == "" || strings.ContainsAny(c.Input, "/?#\\") {
				skipped++
				continue
			}
			got, err := appendWHATWG(nil, "https://"+c.Input+"/x", false)
			switch {
			case c.Output == nil && err == nil:
				t.Errorf("%s: %q: got %q, want failure %s", file, c.Input, got, c.Comment)
			case c.Output != nil && err != nil:
				t.Errorf("%s: %q: %v, want host %q %s", file, c.Input, err, *c.Output, c.Comment)
			case c.Output != nil && string(got) != "https://"+*c.Output+"/x":
				t.Errorf("%s: %q: got %q, want host %q %s", file, c.Input, got, *c.Output, c.Comment)
			default:
				passed++
			}
		}
		t.Logf("%s: %d cases, %d passed, %d skipped", file, len(cases), passed, skipped)
		if passed+skipped != len(cases) || passed < len(cases)*9/10 {
			t.Errorf("%s: %d of %d passed", file, passed, len(cases))
		}
	}
}

// TestWPTCurrent runs testdata/wpt/urltestdata-current.json: no-base
// entries of the current WPT urltestdata.json, including those added or
// changed after the vendored snapshot (opaque-path spaces, ^ in paths and
// userinfo); href null means failure.
func TestWPTCurrent(t *testing.T) {
	var doc struct {
		Cases []struct {
			Input string  `json:"input"`
			Href  *string `json:"href"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/wpt/urltestdata-current.json", &doc)
	if len(doc.Cases) < 100 {
		t.Fatalf("only %d cases", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		got, err := appendWHATWG(nil, c.Input, false)
		switch {
		case c.Href == nil && err == nil:
			t.Errorf("parse(%q) = %q, want failure", c.Input, got)
		case c.Href != nil && (err != nil || string(got) != *c.Href):
			t.Errorf("parse(%q) = %q, %v, want %q", c.Input, got, err, *c.Href)
		}
	}
}
