package urlhash

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

// seedVectors are the url-hash README's table (the module's shared copy).
type seedVectors struct {
	Cases []struct {
		Input     string `json:"input"`
		Canonical string `json:"canonical"`
		SHA256    string `json:"sha256_hex"`
	} `json:"cases"`
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestSeedCanonicalAndHash(t *testing.T) {
	var vs seedVectors
	readJSON(t, "../testdata/urlhash_seed.json", &vs)
	if len(vs.Cases) == 0 {
		t.Fatal("no seed cases")
	}
	for _, tc := range vs.Cases {
		t.Run(tc.Input, func(t *testing.T) {
			got, err := Default.Canonical(tc.Input)
			if err != nil || got != tc.Canonical {
				t.Fatalf("Canonical(%q) = %q, %v, want %q", tc.Input, got, err, tc.Canonical)
			}
			h, err := Default.Hash(tc.Input)
			if err != nil || h.String() != tc.SHA256 {
				t.Fatalf("Hash(%q) = %v, %v, want %s", tc.Input, h, err, tc.SHA256)
			}
		})
	}
}

// canonicalCases complement the WPT data with the rules this package must
// keep, grouped by rule.
var canonicalCases = []struct {
	name, in, want string // want "" means failure
	dropFragment   bool
}{
	// Preprocessing: outer C0 control or space trimmed, tab/LF/CR removed.
	{"trim", "\x00 \thttp://a.b/ \x1f", "http://a.b/", false},
	{"tabnl", "ht\ttp://a\n.b/c\rd", "http://a.b/cd", false},
	// Invalid UTF-8: one U+FFFD per maximal ill-formed subpart.
	{"utf8-truncated", "http://a.b/\xe2\x82x", "http://a.b/%EF%BF%BDx", false},
	{"utf8-surrogate", "http://a.b/\xed\xa0\x80", "http://a.b/%EF%BF%BD%EF%BF%BD%EF%BF%BD", false},
	{"utf8-lone", "http://a.b/?\xff#\xc3", "http://a.b/?%EF%BF%BD#%EF%BF%BD", false},
	{"utf8-host", "http://a\xff.b/", "", false},
	// Path percent-encode set, including ^ (added to the standard in 2025).
	{"path-set", "http://a.b/ \"<>`{}^|?q", "http://a.b/%20%22%3C%3E%60%7B%7D%5E|?q", false},
	{"special-query", "http://a.b/?'\" x", "http://a.b/?%27%22%20x", false},
	{"query", "sc://a.b/?'\" x", "sc://a.b/?'%22%20x", false},
	// Opaque paths: a space before ? or # is %20 (2025).
	{"opaque-space", "a:b  ?c", "a:b %20?c", false},
	{"opaque-space-frag", "a:b #c", "a:b%20#c", false},
	// Fragment dropping.
	{"drop-fragment", "HTTP://A.B/c?d#e", "http://a.b/c?d", true},
	{"drop-fragment-slow", "http://ü.b/c#e", "http://xn--tda.b/c", true},
	// Hosts.
	{"ipv4-forms", "http://0x7f.1/", "http://127.0.0.1/", false},
	{"ipv4-octal", "http://0300.0250.1.1./", "http://192.168.1.1/", false},
	{"ipv4-invalid", "http://1.2.3.256/", "", false},
	{"ipv6", "http://[0:0:0:0:0:ffff:1.2.3.4]:8080/", "http://[::ffff:102:304]:8080/", false},
	{"idn-mapped", "https://ＡＢ）.com/", "https://ab).com/", false},
	{"forbidden-domain", "http://a%25b/", "", false},
	{"file-localhost", "file://LOCALHOST/c:/x/../..", "file:///c:/", false},
	// Failures.
	{"missing-scheme", "//a.b/", "", false},
	{"port-range", "http://a.b:65536/", "", false},
	{"empty-host", "http:///", "", false},
	{"credentials-no-host", "http://u@/", "", false},
}

func TestCanonicalCases(t *testing.T) {
	for _, tc := range canonicalCases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.dropFragment {
				opts = append(opts, DropFragment())
			}
			p, err := New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Canonical(tc.in)
			if tc.want == "" {
				var ue *hashkey.URLError
				if err == nil || !errors.As(err, &ue) || ue.Input != tc.in {
					t.Fatalf("Canonical(%q) = %q, %v, want *URLError", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Canonical(%q) = %q, %v, want %q", tc.in, got, err, tc.want)
			}
			checkFastAgrees(t, tc.in)
		})
	}
}

func TestAppendCanonicalKeepsDst(t *testing.T) {
	dst := []byte("prefix:")
	out, err := Default.AppendCanonical(dst, "no scheme")
	if err == nil || string(out) != "prefix:" {
		t.Fatalf("AppendCanonical on error = %q, %v", out, err)
	}
	out, err = Default.AppendCanonical(dst, "HTTP://X.Y")
	if err != nil || string(out) != "prefix:http://x.y/" {
		t.Fatalf("AppendCanonical = %q, %v", out, err)
	}
}

func TestDecodeLossy(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\xe2\x82b", "a\ufffdb"},
		{"\xf0\x9f\x98", "\ufffd"},
		{"\xf0\x9f\x98\x80", "😀"},
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xed\x9f\xbf", "\ud7ff"},
		{"\xe0\x80", "\ufffd\ufffd"},
	} {
		if got := string(decodeLossy(nil, tc.in)); got != tc.want {
			t.Errorf("decodeLossy(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
