package safebrowsing

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// naiveUnescape is the documents' unescaping read literally: remove tab, CR
// and LF, then remove percent-escapes in whole passes over the string until
// a pass changes nothing.
func naiveUnescape(s string) string {
	s = strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(s)
	for {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] == '%' && i+2 < len(s) && hexVal[s[i+1]] != 0xff && hexVal[s[i+2]] != 0xff {
				b.WriteByte(hexVal[s[i+1]]<<4 | hexVal[s[i+2]])
				i += 2
				continue
			}
			b.WriteByte(s[i])
		}
		if b.String() == s {
			return s
		}
		s = b.String()
	}
}

// checkCanonicalForm reports why c is not in canonical form, or "".
func checkCanonicalForm(c string) string {
	i := strings.Index(c, "://")
	if i <= 0 || strings.IndexByte(c[i+3:], '/') <= 0 {
		return "no scheme://host/"
	}
	for j := 0; j < len(c); j++ {
		b := c[j]
		if b == '%' {
			if j+2 >= len(c) || !strings.ContainsRune(upperhex, rune(c[j+1])) || !strings.ContainsRune(upperhex, rune(c[j+2])) {
				return "'%' not followed by two uppercase hex digits"
			}
			continue
		}
		if escapeSet[b] {
			return "unescaped byte " + hex.EncodeToString([]byte{b})
		}
	}
	return ""
}

// FuzzCanonical checks, for any byte string and both profiles: no panic;
// the canonical form is well formed and canonicalising it again changes
// nothing; the fast expressions equal the reference; the linear
// unescaping equals whole passes until stable.
func FuzzCanonical(f *testing.F) {
	var vec struct {
		Cases []struct {
			InputHex string `json:"input_hex"`
		} `json:"cases"`
	}
	readJSON(f, "webrisk_canonicalize.json", &vec)
	for _, tc := range vec.Cases {
		b, _ := hex.DecodeString(tc.InputHex)
		f.Add(string(b))
	}
	for _, tc := range canonicalTests {
		f.Add(tc.in)
	}
	for _, tc := range expressionTests {
		f.Add(tc.url)
	}
	for _, u := range generatedURLs(50, 7) {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if got, want := string(appendUnescaped([]byte("x"), raw)), "x"+naiveUnescape(raw); got != want {
			t.Fatalf("appendUnescaped(%q) = %q, want %q", raw, got[1:], want[1:])
		}
		for _, p := range []*Profile{WebRisk, V5} {
			c, err := p.Canonical(raw)
			if err != nil {
				continue
			}
			if why := checkCanonicalForm(c); why != "" {
				t.Fatalf("%s: Canonical(%q) = %q: %s", p.Name(), raw, c, why)
			}
			again, err := p.Canonical(c)
			if err != nil || again != c {
				t.Fatalf("%s: Canonical(%q) = %q, but Canonical(%q) = %q, %v", p.Name(), raw, c, c, again, err)
			}
			checkExpressions(t, p, raw)
			// The zero-allocation path agrees with the string one.
			var b Buffer
			if err := p.Expand(&b, raw); err != nil || !bytes.Equal(b.Canonical(), []byte(c)) {
				t.Fatalf("%s: Expand(%q) canonical %q, %v; want %q", p.Name(), raw, b.Canonical(), err, c)
			}
		}
	})
}

// FuzzExpressions builds URLs from a host and a path, to reach the host
// rules (IDN, IP literals, public suffixes) more often than FuzzCanonical,
// and checks idempotence and the expressions against the reference.
func FuzzExpressions(f *testing.F) {
	f.Add("a.b.example.co.uk", "1/2/3/4/5.html?x")
	f.Add("BÜCHER.example", "a/../b")
	f.Add("[::ffff:1.2.3.4]:80", "")
	f.Add("[64:ff9b::102:304]", "x")
	f.Add("0x7f.0.0.1", "%2e%2E/")
	f.Add("a\u3002b\uff0ecom", "q?")
	f.Add("x.y.z.s3.amazonaws.com", "a//b/./c")
	f.Add("www.ck", "")
	f.Add("a.b.c.kawasaki.jp", "x")
	f.Fuzz(func(t *testing.T, host, path string) {
		raw := "http://" + host + "/" + path
		for _, p := range []*Profile{WebRisk, V5} {
			c, err := p.Canonical(raw)
			if err != nil {
				continue
			}
			if again, err := p.Canonical(c); err != nil || again != c {
				t.Fatalf("%s: Canonical(%q) = %q, but Canonical(%q) = %q, %v", p.Name(), raw, c, c, again, err)
			}
			checkExpressions(t, p, raw)
		}
	})
}
