package safebrowsing

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/publicsuffix"
)

// slowExpressions is the obviously correct version of the expression rules,
// written from the documents with strings and no offsets, to check the fast
// one against. canonical must be a canonical URL.
func slowExpressions(p *Profile, canonical string) []string {
	_, rest, _ := strings.Cut(canonical, "://")
	slash := strings.IndexByte(rest, '/')
	host, pathQuery := rest[:slash], rest[slash:]
	path, query, _ := strings.Cut(pathQuery, "?")

	// For the host: the exact host name, then (unless it is an IP literal)
	// the shorter host names of the profile's rule.
	hosts := []string{host}
	_, err := netip.ParseAddr(host)
	isIP := err == nil || strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")
	if !isIP {
		labels := strings.Split(host, ".")
		suffix := func(k int) string { return strings.Join(labels[len(labels)-k:], ".") }
		switch p.rule {
		case lastFive:
			// Starting with the last five components and successively
			// removing the leading component; the TLD alone is skipped.
			for k := 5; k >= 2; k-- {
				if k < len(labels) {
					hosts = append(hosts, suffix(k))
				}
			}
		case fromETLD:
			// Starting at the eTLD+1 and adding leading components, up to
			// four host names; nothing when the host is a public suffix.
			if etld1, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
				n := strings.Count(etld1, ".") + 1
				for k := n + 3; k >= n; k-- {
					if k < len(labels) {
						hosts = append(hosts, suffix(k))
					}
				}
			}
		}
	}

	// For the path: the exact path with the query parameters, the exact
	// path, and the four paths from the root adding one component at a
	// time, each with a trailing slash.
	var paths []string
	if query != "" {
		paths = append(paths, path+"?"+query)
	}
	paths = append(paths, path)
	comps := strings.Split(path, "/") // "/a/b" is "", "a", "b"
	for k := 0; k < 4 && k+1 < len(comps); k++ {
		if prefix := strings.Join(comps[:k+1], "/") + "/"; prefix != path {
			paths = append(paths, prefix)
		}
	}

	var exprs []string
	for _, h := range hosts {
		for _, p := range paths {
			exprs = append(exprs, h+p)
		}
	}
	return exprs
}

// checkExpressions compares the fast expressions of raw with the reference
// and checks the limits and that no expression repeats.
func checkExpressions(t testing.TB, p *Profile, raw string) {
	t.Helper()
	canonical, got, err := p.Expressions(raw)
	if err != nil {
		return
	}
	want := slowExpressions(p, canonical)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: Expressions(%q) (canonical %q)\n got %q\nwant %q", p.Name(), raw, canonical, got, want)
	}
	if len(got) == 0 || len(got) > MaxExpressions {
		t.Fatalf("%s: Expressions(%q): %d expressions", p.Name(), raw, len(got))
	}
	seen := make(map[string]bool, len(got))
	for _, e := range got {
		if seen[e] {
			t.Fatalf("%s: Expressions(%q): %q twice in %q", p.Name(), raw, e, got)
		}
		seen[e] = true
	}
}

func TestExpressionVectors(t *testing.T) {
	type urlCase struct {
		URL  string   `json:"url"`
		Want []string `json:"want"`
	}
	var vec struct {
		LastFive     []urlCase `json:"last_five_components"`
		PublicSuffix []urlCase `json:"public_suffix"`
		V5HostRules  []struct {
			Input    string `json:"input"`
			WantHost string `json:"want_host"`
		} `json:"v5_host_rules"`
	}
	readJSON(t, "expressions.json", &vec)
	if len(vec.LastFive) == 0 || len(vec.PublicSuffix) == 0 || len(vec.V5HostRules) == 0 {
		t.Fatal("expressions.json: a section is empty")
	}
	run := func(p *Profile, cases []urlCase) {
		for _, tc := range cases {
			t.Run(p.Name()+"/"+tc.URL, func(t *testing.T) {
				_, got, err := p.Expressions(tc.URL)
				if err != nil {
					t.Fatal(err)
				}
				// Order within a list is not significant.
				got, want := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tc.Want))
				if !slices.Equal(got, want) {
					t.Errorf("Expressions(%q)\n got %q\nwant %q", tc.URL, got, want)
				}
				checkExpressions(t, p, tc.URL)
			})
		}
	}
	run(WebRisk, vec.LastFive)
	run(V5, vec.PublicSuffix)
	for _, tc := range vec.V5HostRules {
		t.Run("v5-host/"+tc.Input, func(t *testing.T) {
			got, err := V5.Canonical(tc.Input)
			if want := "http://" + tc.WantHost + "/"; err != nil || got != want {
				t.Errorf("Canonical(%q) = %q, %v; want %q", tc.Input, got, err, want)
			}
			// An IP literal has no host suffixes.
			_, exprs, err := V5.Expressions(tc.Input)
			if want := []string{tc.WantHost + "/"}; err != nil || !slices.Equal(exprs, want) {
				t.Errorf("Expressions(%q) = %q, %v; want %q", tc.Input, exprs, err, want)
			}
		})
	}
}

// expressionTests are our own cases for the host and path rules.
var expressionTests = []struct {
	url     string
	webrisk []string // nil: not checked
	v5      []string
}{
	// The query is a path string only when it is not empty.
	{url: "http://a.com/q?", webrisk: []string{"a.com/q", "a.com/"}, v5: []string{"a.com/q", "a.com/"}},
	// A public suffix is never a host on its own under V5; WebRisk only
	// skips the TLD.
	{url: "http://www.example.co.uk/",
		webrisk: []string{"www.example.co.uk/", "example.co.uk/", "co.uk/"},
		v5:      []string{"www.example.co.uk/", "example.co.uk/"}},
	{url: "http://co.uk/", webrisk: []string{"co.uk/"}, v5: []string{"co.uk/"}},
	{url: "http://localhost/", webrisk: []string{"localhost/"}, v5: []string{"localhost/"}},
	// Private-section suffixes of the list count under V5.
	{url: "http://a.b.github.io/",
		webrisk: []string{"a.b.github.io/", "b.github.io/", "github.io/"},
		v5:      []string{"a.b.github.io/", "b.github.io/"}},
	// Four path prefixes from the root at most, the exact path apart.
	{url: "http://a.b/1/2/3/4/5/6.html?x=y",
		webrisk: []string{"a.b/1/2/3/4/5/6.html?x=y", "a.b/1/2/3/4/5/6.html", "a.b/", "a.b/1/", "a.b/1/2/", "a.b/1/2/3/"}},
	{url: "http://a.b/1/2/3/", webrisk: []string{"a.b/1/2/3/", "a.b/", "a.b/1/", "a.b/1/2/"}},
	// IPv4 in any encoding and bracketed hosts have no suffixes.
	{url: "http://0x01020304/a", webrisk: []string{"1.2.3.4/a", "1.2.3.4/"}},
	{url: "http://[2001:db8::1]/", webrisk: []string{"[2001:db8::1]/"}, v5: []string{"[2001:db8::1]/"}},
	{url: "http://1.2.3.4.5/", webrisk: []string{"1.2.3.4.5/", "2.3.4.5/", "3.4.5/", "4.5/"}},
}

func TestExpressions(t *testing.T) {
	for _, tc := range expressionTests {
		for _, pc := range []struct {
			p    *Profile
			want []string
		}{{WebRisk, tc.webrisk}, {V5, tc.v5}} {
			if pc.want == nil {
				continue
			}
			t.Run(pc.p.Name()+"/"+tc.url, func(t *testing.T) {
				_, got, err := pc.p.Expressions(tc.url)
				if err != nil || !slices.Equal(got, pc.want) {
					t.Errorf("Expressions(%q) = %q, %v\nwant %q", tc.url, got, err, pc.want)
				}
				checkExpressions(t, pc.p, tc.url)
			})
		}
	}
}

// TestExpressionsReference checks the fast expressions against the
// reference on the corpus and on generated URLs with many host and path
// shapes.
func TestExpressionsReference(t *testing.T) {
	urls := generatedURLs(20000, 1)
	urls = append(urls, testCorpus(t)[:20000]...)
	for _, p := range []*Profile{WebRisk, V5} {
		for _, u := range urls {
			checkExpressions(t, p, u)
		}
	}
}

// generatedURLs returns n URLs with random hosts (IP literals, public
// suffixes of several lengths, many labels) and paths (dot segments, runs
// of slashes, escapes, queries), the same for the same seed.
func generatedURLs(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	suffixes := []string{"com", "co.uk", "uk", "github.io", "ck", "www.ck", "kawasaki.jp", "city.kawasaki.jp",
		"org", "xn--p1ai", "zz", "s3.amazonaws.com", "blogspot.com", ""}
	labels := []string{"a", "b", "www", "example", "x-y", "1", "0x1", "017", "B", "%41", ".", "..", "é", "xn--bcher-kva"}
	segs := []string{"a", "b", ".", "..", "", "%2e", "%2E%2e", "x.html", "%2F", "%3F", "?", "c d", "%25", "#"}
	out := make([]string, 0, n)
	var b strings.Builder
	for range n {
		b.Reset()
		switch rng.IntN(6) {
		case 0:
			b.WriteString("http://")
		case 1:
			b.WriteString("HTTPS://user:pw@")
		case 2:
			b.WriteString("ftp://")
		}
		switch rng.IntN(10) {
		case 0:
			fmt.Fprintf(&b, "%d.%d.%d.%d", rng.IntN(300), rng.IntN(256), rng.IntN(256), rng.IntN(256))
		case 1:
			fmt.Fprintf(&b, "%d", rng.Uint32())
		case 2:
			b.WriteString([]string{"[::1]", "[2001:0DB8::0:1]", "[::ffff:10.0.0.1]", "[64:ff9b::1.2.3.4]", "[x.y.z]"}[rng.IntN(5)])
		default:
			for k := rng.IntN(9); k > 0; k-- {
				b.WriteString(labels[rng.IntN(len(labels))])
				b.WriteByte('.')
			}
			b.WriteString(suffixes[rng.IntN(len(suffixes))])
		}
		if rng.IntN(5) == 0 {
			fmt.Fprintf(&b, ":%d", rng.IntN(70000))
		}
		for k := rng.IntN(9); k > 0; k-- {
			b.WriteByte('/')
			b.WriteString(segs[rng.IntN(len(segs))])
		}
		if rng.IntN(3) == 0 {
			b.WriteString("?" + segs[rng.IntN(len(segs))] + "=" + segs[rng.IntN(len(segs))])
		}
		out = append(out, b.String())
	}
	return out
}
