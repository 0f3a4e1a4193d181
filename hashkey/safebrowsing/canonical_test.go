package safebrowsing

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

func readJSON(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestCanonicalVectors checks every Canonicalize() example of the Web Risk
// document, given as exact input bytes, under both profiles.
func TestCanonicalVectors(t *testing.T) {
	var vec struct {
		Cases []struct {
			Input    string `json:"input"`
			InputHex string `json:"input_hex"`
			Want     string `json:"want"`
		} `json:"cases"`
	}
	readJSON(t, "webrisk_canonicalize.json", &vec)
	if len(vec.Cases) != 33 {
		t.Fatalf("got %d cases, want 33", len(vec.Cases))
	}
	for _, p := range []*Profile{WebRisk, V5} {
		for _, tc := range vec.Cases {
			raw, err := hex.DecodeString(tc.InputHex)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(p.Name()+"/"+tc.Input, func(t *testing.T) {
				got, err := p.Canonical(string(raw))
				if err != nil {
					t.Fatalf("Canonical(%q): %v", raw, err)
				}
				if got != tc.Want {
					t.Errorf("Canonical(%q) = %q, want %q", raw, got, tc.Want)
				}
				again, err := p.Canonical(got)
				if err != nil || again != got {
					t.Errorf("Canonical(%q) = %q, %v; want it unchanged", got, again, err)
				}
			})
		}
	}
}

// canonicalTests are our own cases, grouped by the rule they cover. Both
// profiles agree on them unless wantV5 is set.
var canonicalTests = []struct {
	in, want, wantV5 string
}{
	// Scheme: missing means http; lowercased; host and port without one.
	{in: "HTTP://Example.COM/A", want: "http://example.com/A"},
	{in: "ftp://ftp.gnu.org/gnu/", want: "ftp://ftp.gnu.org/gnu/"},
	{in: "www.example.com:8080/x", want: "http://www.example.com/x"},
	{in: "localhost:8080", want: "http://localhost/"},
	{in: "example.com?q", want: "http://example.com/?q"},
	{in: "1.2.3.4:80/", want: "http://1.2.3.4/"},

	// Userinfo and port dropped; escapes decoded before the URL is split.
	{in: "http://user:pw@Example.com:81/", want: "http://example.com/"},
	{in: "http://a@b@c.com/", want: "http://c.com/"},
	{in: "http://user%40evil.com@good.com/", want: "http://good.com/"},
	{in: "http://example.com%2Fpath%3Fq", want: "http://example.com/path?q"},

	// Fragment: cut at the first raw '#', escaped '#' kept.
	{in: "http://a.com/#", want: "http://a.com/"},
	{in: "http://a.com/x%23y#z", want: "http://a.com/x%23y"},
	{in: "http://a.com/x?%23#", want: "http://a.com/x?%23"},

	// Repeated unescaping, tab/CR/LF removed but not their escapes.
	{in: "http://a.com/%2541", want: "http://a.com/A"},
	{in: "http://a.com/%%32%35%34%31", want: "http://a.com/A"},
	{in: "http://a.com/%%32%35%", want: "http://a.com/%25%25"},
	{in: "http://a.com/%09%0a%0D", want: "http://a.com/%09%0A%0D"},
	{in: "http://a.com/\t%\t41", want: "http://a.com/A"},
	{in: "http://a.com/%zz%4", want: "http://a.com/%25zz%254"},

	// Escaping: <= 0x20, >= 0x7F, '#', '%' with uppercase hex; nothing else.
	{in: "http://a.com/\x7f\xff é", want: "http://a.com/%7F%FF%20%C3%A9"},
	{in: "http://a.com/a b?c d", want: "http://a.com/a%20b?c%20d"},
	{in: "http://a.com/<>\"'{}|\\^`", want: "http://a.com/<>\"'{}|\\^`"},

	// Host dots.
	{in: "http://..a..b...c../", want: "http://a.b.c/"},
	{in: "http://..../", want: ""}, // no host

	// IPv4 in every legal encoding; not an address when a part is too large.
	{in: "http://0x7f.1/", want: "http://127.0.0.1/"},
	{in: "http://0X7F.0.0.01/", want: "http://127.0.0.1/"},
	{in: "http://017700000001/", want: "http://127.0.0.1/"},
	{in: "http://10.0x10203/", want: "http://10.1.2.3/"},
	{in: "http://1.2.3/", want: "http://1.2.0.3/"},
	{in: "http://4294967295/", want: "http://255.255.255.255/"},
	{in: "http://4294967296/", want: "http://4294967296/"},
	{in: "http://1.256.3.4/", want: "http://1.256.3.4/"},
	{in: "http://1.2.3.4.5/", want: "http://1.2.3.4.5/"},
	{in: "http://08.1.1.1/", want: "http://08.1.1.1/"},
	{in: "http://0x.1.1.1/", want: "http://0x.1.1.1/"},
	{in: "http://1.2.3.4./", want: "http://1.2.3.4/"},

	// IPv6: normalised by V5 only; mapped and NAT64 become IPv4.
	{in: "http://[2001:0DB8:0000::1]:443/", want: "http://[2001:0db8:0000::1]/", wantV5: "http://[2001:db8::1]/"},
	{in: "http://[::FFFF:1.2.3.4]/", want: "http://[::ffff:1.2.3.4]/", wantV5: "http://1.2.3.4/"},
	{in: "http://[::ffff:0102:0304]/", want: "http://[::ffff:0102:0304]/", wantV5: "http://1.2.3.4/"},
	{in: "http://[64:ff9b::102:304]/", want: "http://[64:ff9b::102:304]/", wantV5: "http://1.2.3.4/"},
	{in: "http://[fe80::1%25eth0]/", want: "http://[fe80::1%25eth0]/"},
	{in: "http://[1.2.3.4]/", want: "http://[1.2.3.4]/"},
	{in: "http://.[A]:80/", want: "http://[a]/"},

	// IDN: valid UTF-8 hosts to punycode, others kept as escaped bytes.
	{in: "http://BÜCHER.example/", want: "http://xn--bcher-kva.example/"},
	{in: "http://b%C3%BCcher.example/", want: "http://xn--bcher-kva.example/"},
	{in: "http://例え.テスト/", want: "http://xn--r8jz45g.xn--zckzah/"},
	{in: "http://a\u3002b.com/", want: "http://a.b.com/"},
	{in: "http://\xc3\x28.com/", want: "http://%C3(.com/"},
	{in: "http://é_x.com/", want: "http://xn--_x-9ia.com/"},
	// IDN hosts with bytes STD3 forbids still become punycode, label by
	// label, as Google's clients and the url-hash profile do.
	{in: "http://a_b.münchen.de/", want: "http://a_b.xn--mnchen-3ya.de/"},
	{in: "http://ａ$ｂ.münchen.de/", want: "http://a$b.xn--mnchen-3ya.de/"},
	{in: "http://münchen.اa.de/", want: "http://xn--mnchen-3ya.%D8%A7a.de/"}, // a label UTS 46 refuses keeps its bytes

	// Path: dot segments, slashes collapsed, never the query.
	{in: "http://a.com/a/./b/../c", want: "http://a.com/a/c"},
	{in: "http://a.com/a/b/.", want: "http://a.com/a/b/"},
	{in: "http://a.com/a/b/..", want: "http://a.com/a/"},
	{in: "http://a.com/../../x", want: "http://a.com/x"},
	{in: "http://a.com/%2E%2E/x/%2e", want: "http://a.com/x/"},
	{in: "http://a.com/a//../b", want: "http://a.com/b"},
	{in: "http://a.com/.../x", want: "http://a.com/.../x"},
	{in: "http://a.com///?//./", want: "http://a.com/?//./"},

	// Not web URLs.
	{in: "mailto:a@example.com", want: ""},
	{in: "javascript:alert(1)", want: ""},
	{in: "javascript://example.com/%0aalert(1)", want: ""},
	{in: "data:text/html,hi", want: ""},
	{in: "file:///etc/passwd", want: ""},
	{in: "urn:isbn:0451450523", want: ""},
	{in: "/relative/path", want: ""},
	{in: "?q", want: ""},
	{in: "//example.com/", want: ""},
	{in: "http:///x", want: ""},
	{in: "", want: ""},
	{in: "  \t ", want: ""},
}

func TestCanonical(t *testing.T) {
	for _, p := range []*Profile{WebRisk, V5} {
		for _, tc := range canonicalTests {
			want := tc.want
			if p == V5 && tc.wantV5 != "" {
				want = tc.wantV5
			}
			t.Run(p.Name()+"/"+tc.in, func(t *testing.T) {
				got, err := p.Canonical(tc.in)
				if want == "" {
					var ue *hashkey.URLError
					if err == nil || !errors.Is(err, hashkey.ErrUnsupportedURL) || !errors.As(err, &ue) || ue.Input != tc.in || ue.Profile != p.Name() {
						t.Fatalf("Canonical(%q) = %q, %v; want a *hashkey.URLError wrapping ErrUnsupportedURL", tc.in, got, err)
					}
					return
				}
				if err != nil || got != want {
					t.Fatalf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, want)
				}
				again, err := p.Canonical(got)
				if err != nil || again != got {
					t.Errorf("Canonical(%q) = %q, %v; want it unchanged", got, again, err)
				}
			})
		}
	}
}

func TestAppendCanonicalKeepsDst(t *testing.T) {
	dst := []byte("prefix:")
	got, err := WebRisk.AppendCanonical(dst, "HTTP://A.com")
	if err != nil || string(got) != "prefix:http://a.com/" {
		t.Fatalf("AppendCanonical = %q, %v", got, err)
	}
	got, err = WebRisk.AppendCanonical(dst, "mailto:x")
	if err == nil || string(got) != "prefix:" {
		t.Fatalf("AppendCanonical(mailto) = %q, %v; want dst unchanged and an error", got, err)
	}
}

func TestParseProfile(t *testing.T) {
	for _, p := range []*Profile{WebRisk, V5} {
		got, err := ParseProfile(p.Name())
		if err != nil || got != p {
			t.Errorf("ParseProfile(%q) = %v, %v", p.Name(), got, err)
		}
	}
	if _, err := ParseProfile("urlhash"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("ParseProfile(urlhash) error = %v, want ErrUnknownProfile", err)
	}
}

// TestPort: a port is dropped only when it is a port; anything else after
// the host's ':' makes the URL invalid rather than cutting the host short.
func TestPort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{ // want "" means ErrPort
		{"http://good.com:evil.com/", ""},
		{"http://a%3Ab.com/", ""}, // unescaped before the authority is read
		{"http://.[]0/0", ""},
		{"http://a.com:65536/", ""},
		{"http://a.com:8o/", ""},
		{"http://a.com:80/x", "http://a.com/x"},
		{"http://a.com:/x", "http://a.com/x"},
		{"http://u:p@a.com:8080/", "http://a.com/"},
		{"http://[1:2::3]:443/", "http://[1:2::3]/"},
	} {
		for _, p := range []*Profile{WebRisk, V5} {
			t.Run(p.Name()+"/"+tc.in, func(t *testing.T) {
				got, err := p.Canonical(tc.in)
				if tc.want == "" {
					var ue *hashkey.URLError
					if !errors.Is(err, ErrPort) || !errors.As(err, &ue) || ue.Input != tc.in {
						t.Fatalf("Canonical(%q) = %q, %v; want a *hashkey.URLError wrapping ErrPort", tc.in, got, err)
					}
					return
				}
				if err != nil || got != tc.want {
					t.Fatalf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
			})
		}
	}
}
