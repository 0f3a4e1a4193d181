package safebrowsing

import (
	"sync"
	"testing"

	"github.com/nlnwa/whatwg-url/canonicalizer"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/internal/corpus"
)

// corpusSize is the number of URLs the benchmarks derive from the corpus.
const corpusSize = 200_000

// loadCorpus derives corpusSize URLs from hashkey's corpus of real URLs,
// reproducibly (corpus.Derive with its default seed: extra path segments,
// queries, fragments, letter case, default ports, dot segments, escapes).
var loadCorpus = sync.OnceValues(func() ([]string, error) {
	base, err := corpus.ReadLines("../../testdata/debian-package-urls.txt")
	if err != nil {
		return nil, err
	}
	return corpus.Derive(base, corpusSize, corpus.Seed), nil
})

func testCorpus(tb testing.TB) []string {
	tb.Helper()
	urls, err := loadCorpus()
	if err != nil {
		tb.Fatal(err)
	}
	return urls
}

// BenchmarkCanonical canonicalises the whole derived corpus per operation,
// with this package and with the Safe Browsing canonicalizer of
// github.com/nlnwa/whatwg-url, side by side; compare their ns/url.
//
//	go test -run='^$' -bench=Canonical -benchtime=5x ./hashkey/safebrowsing
func BenchmarkCanonical(b *testing.B) {
	urls := testCorpus(b)
	for _, p := range []*Profile{WebRisk, V5} {
		b.Run(p.Name(), func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 1024)
			failed := 0
			for b.Loop() {
				failed = 0
				for _, u := range urls {
					var err error
					if buf, err = p.AppendCanonical(buf[:0], u); err != nil {
						failed++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(urls)), "ns/url")
			b.ReportMetric(float64(failed), "failed")
		})
	}
	b.Run("whatwg-url", func(b *testing.B) {
		b.ReportAllocs()
		failed := 0
		n := 0
		for b.Loop() {
			failed = 0
			for _, u := range urls {
				v, err := canonicalizer.GoogleSafeBrowsing.Parse(u)
				if err != nil {
					failed++
					continue
				}
				n += len(v.Href(false))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(urls)), "ns/url")
		b.ReportMetric(float64(failed), "failed")
	})
}

// BenchmarkExpressions canonicalises, expands and hashes every expression
// of each corpus URL; ns/url covers all of it, exprs/url is the mean number
// of expressions (SHA-256 computed) per URL.
func BenchmarkExpressions(b *testing.B) {
	urls := testCorpus(b)
	for _, p := range []*Profile{WebRisk, V5} {
		b.Run(p.Name(), func(b *testing.B) {
			b.ReportAllocs()
			var buf Buffer
			var sink hashkey.Hash
			exprs := 0
			for b.Loop() {
				exprs = 0
				for _, u := range urls {
					if p.Expand(&buf, u) != nil {
						continue
					}
					for i := range buf.Len() {
						h := buf.Hash(i)
						sink[0] ^= h[0]
					}
					exprs += buf.Len()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(urls)), "ns/url")
			b.ReportMetric(float64(exprs)/float64(len(urls)), "exprs/url")
		})
	}
}

// BenchmarkExpressions30 expands and hashes, 1000 times per operation, a
// URL with the full 30 expressions.
func BenchmarkExpressions30(b *testing.B) {
	const u = "http://a.b.c.d.e.f.example.com/1/2/3/4/5.html?q=1"
	const n = 1000
	for _, p := range []*Profile{WebRisk, V5} {
		b.Run(p.Name(), func(b *testing.B) {
			b.ReportAllocs()
			var buf Buffer
			var sink hashkey.Hash
			for b.Loop() {
				for range n {
					if err := p.Expand(&buf, u); err != nil {
						b.Fatal(err)
					}
					for i := range buf.Len() {
						h := buf.Hash(i)
						sink[0] ^= h[0]
					}
				}
			}
			if buf.Len() != MaxExpressions {
				b.Fatalf("%d expressions, want %d", buf.Len(), MaxExpressions)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/url")
		})
	}
}

// TestAllocations checks that canonicalising and expanding allocate
// nothing once the buffers have grown, except, under V5, the one allocation
// x/net/publicsuffix makes per host name (the error of its netip.ParseAddr
// check).
func TestAllocations(t *testing.T) {
	urls := []string{
		"http://a.b.c.d.e.f.example.com/1/2/3/4/5.html?q=1",
		"HTTP://User@WWW.Example.CO.UK:8080/a/./b/../%2541%20c?x#frag",
		"http://0x7f.1/x",
		"ftp://ftp.gnu.org/gnu/aspell/dict/he/",
	}
	for _, p := range []*Profile{WebRisk, V5} {
		buf := make([]byte, 0, 1024)
		var b Buffer
		var hashes []hashkey.Hash
		for _, u := range urls {
			_ = p.Expand(&b, u) // grow
			hashes = b.AppendHashes(hashes[:0])
			n := testing.AllocsPerRun(100, func() {
				buf, _ = p.AppendCanonical(buf[:0], u)
				if err := p.Expand(&b, u); err != nil {
					t.Fatal(err)
				}
				hashes = b.AppendHashes(hashes[:0])
			})
			want := 0.0
			if p == V5 && u != "http://0x7f.1/x" {
				want = 1
			}
			if n != want {
				t.Errorf("%s: %q: %v allocations, want %v", p.Name(), u, n, want)
			}
		}
	}
}
