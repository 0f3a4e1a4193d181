package urlhash

import (
	"crypto/sha256"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// derivedCorpus returns n URLs built reproducibly from base (the Debian
// corpus): a math/rand/v2 PCG seeded with (2026, 1122) walks base in order,
// cycling, and emits each URL as is or with one or two of these variations:
//
//   - an extra path segment ("/index.html", "/a/b/c", "/download/v1.2.3.tar.gz")
//   - a query ("?id=<n>&lang=en", "?q=a+b%20c")
//   - a fragment ("#section-<n>", "#top")
//   - the scheme and host in upper case
//   - an explicit port (the scheme's default, or :8080)
//   - a trailing slash
//
// The mix keeps the real hosts and paths of the corpus while covering the
// components a crawler sees most. The cmd/urlhash benchmark may reuse this
// recipe (same seed, same variations) to report comparable figures.
func derivedCorpus(base []string, n int) []string {
	r := rand.New(rand.NewPCG(2026, 1122))
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		u := base[i%len(base)]
		for k := r.IntN(3); k > 0; k-- {
			u = varyURL(r, u)
		}
		out = append(out, u)
	}
	return out
}

// varyURL applies one variation of derivedCorpus to u.
func varyURL(r *rand.Rand, u string) string {
	path := strings.TrimSuffix(u, "/")
	switch r.IntN(6) {
	case 0:
		return path + []string{"/index.html", "/a/b/c", "/download/v1.2.3.tar.gz"}[r.IntN(3)]
	case 1:
		if r.IntN(2) == 0 {
			return u + "?id=" + strconv.Itoa(r.IntN(100000)) + "&lang=en"
		}
		return u + "?q=a+b%20c"
	case 2:
		if r.IntN(2) == 0 {
			return u + "#section-" + strconv.Itoa(r.IntN(100))
		}
		return u + "#top"
	case 3:
		// Upper-case the scheme and host.
		if i := strings.Index(u, "://"); i > 0 {
			end := len(u)
			if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
				end = i + 3 + j
			}
			return strings.ToUpper(u[:end]) + u[end:]
		}
	case 4:
		// An explicit port after the host.
		if i := strings.Index(u, "://"); i > 0 {
			end := len(u)
			if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
				end = i + 3 + j
			}
			if strings.ContainsAny(u[i+3:end], ":@[") {
				return u
			}
			port := ":8080"
			if r.IntN(2) == 0 {
				switch u[:i] {
				case "http":
					port = ":80"
				case "https":
					port = ":443"
				case "ftp":
					port = ":21"
				}
			}
			return u[:end] + port + u[end:]
		}
	case 5:
		if !strings.HasSuffix(u, "/") {
			return u + "/"
		}
	}
	return u
}

// benchCorpusSize is the size of the derived benchmark corpus.
const benchCorpusSize = 200000

func benchCorpus(b *testing.B) []string {
	b.Helper()
	return derivedCorpus(readCorpus(b), benchCorpusSize)
}

// BenchmarkCanonicalHash is the url-hash identity of one URL: the
// canonical form appended into a reused buffer, then SHA-256. One op is
// one URL, so ns/op is ns/URL.
func BenchmarkCanonicalHash(b *testing.B) {
	urls := benchCorpus(b)
	buf := make([]byte, 0, 1024)
	var sink [32]byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		buf, err = Default.AppendCanonical(buf[:0], urls[i%len(urls)])
		if err != nil {
			continue
		}
		sink = sha256.Sum256(buf)
	}
	_ = sink
}

// BenchmarkCanonical is BenchmarkCanonicalHash without the digest.
func BenchmarkCanonical(b *testing.B) {
	urls := benchCorpus(b)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf, _ = Default.AppendCanonical(buf[:0], urls[i%len(urls)])
	}
}

// BenchmarkCanonicalFull forces the conformant state-machine path, to show
// what the fast path saves.
func BenchmarkCanonicalFull(b *testing.B) {
	urls := benchCorpus(b)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf, _ = appendFull(buf[:0], urls[i%len(urls)], false)
	}
}

// BenchmarkPeerWhatwgURL is the same work with github.com/nlnwa/whatwg-url:
// Parse, Href, SHA-256.
func BenchmarkPeerWhatwgURL(b *testing.B) {
	urls := benchCorpus(b)
	p := newOracle()
	var sink [32]byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u, err := p.Parse(urls[i%len(urls)])
		if err != nil {
			continue
		}
		sink = sha256.Sum256([]byte(u.Href(false)))
	}
	_ = sink
}

func TestDerivedCorpus(t *testing.T) {
	base := readCorpus(t)
	a, b := derivedCorpus(base, 5000), derivedCorpus(base, 5000)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatal("derivedCorpus is not reproducible")
	}
	p := newOracle()
	var fast int
	for _, s := range a {
		checkFastAgrees(t, s)
		if _, ok := appendFast(nil, s, false); ok {
			fast++
		}
		got, err := appendWHATWG(nil, s, false)
		want, werr := oracleHref(p, s)
		if err != nil || werr != nil || string(got) != want {
			t.Errorf("%q: ours %q, %v; oracle %q, %v", s, got, err, want, werr)
		}
	}
	if fast < len(a)*95/100 {
		t.Errorf("fast path took only %d of %d derived URLs", fast, len(a))
	}
}

func TestCanonicalAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts differ under coverage or race")
	}
	buf := make([]byte, 0, 512)
	for _, s := range []string{
		"https://Example.COM:443/a/b%20c/d.html?x=1&y='2'#Frag ment",
		"http://ftp.gnu.org/gnu/aspell/dict/",
		"ftp://ftp.fu-berlin.de:2121/pub/unix",
	} {
		n := testing.AllocsPerRun(100, func() {
			var err error
			buf, err = Default.AppendCanonical(buf[:0], s)
			if err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("AppendCanonical(%q): %v allocs, want 0", s, n)
		}
		n = testing.AllocsPerRun(100, func() {
			if _, err := Default.Hash(s); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("Hash(%q): %v allocs, want 0", s, n)
		}
	}
}

// newOracle is the Go whatwg-url implementation used as the speed peer of
// the benchmarks (github.com/nlnwa/whatwg-url, which follows an older
// URL Standard; correctness is checked against the current reference in
// TestAgainstReference).
func newOracle() whatwg.Parser {
	return whatwg.NewParser(whatwg.WithPathPercentEncodeSet(whatwg.PathPercentEncodeSet.Set('^')))
}

func oracleHref(p whatwg.Parser, s string) (string, error) {
	u, err := p.Parse(s)
	if err != nil {
		return "", err
	}
	return u.Href(false), nil
}

// BenchmarkHostile: canonicalisation cost stays near-linear in the input
// on hostile hosts: one CJK label of 10k characters (over the 1024 cap,
// refused before the expensive work), a label just under the cap, and a
// 1 MB URL of many IDN labels.
func BenchmarkHostile(b *testing.B) {
	label := func(n int) string { return strings.Repeat("\u4e2d", n) }
	var many strings.Builder
	many.WriteString("http://")
	for many.Len() < 1<<20 {
		many.WriteString(label(50) + ".")
	}
	many.WriteString("example/")
	for _, c := range []struct{ name, in string }{
		{"label-10k", "http://" + label(10000) + ".example/"},
		{"label-1000", "http://" + label(1000) + ".example/"},
		{"url-1MB", many.String()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.in)))
			for b.Loop() {
				_, _ = appendWHATWG(nil, c.in, false)
			}
		})
	}
}
