package hasheduri_test

import (
	"testing"

	"github.com/urlhash/urlhash/hashkey/hasheduri"
)

// benchURLs are the inputs of testdata/hashed_uri.json and
// testdata/canonical.json.
func benchURLs(b *testing.B) []string {
	var dv draftVectors
	readJSON(b, "testdata/hashed_uri.json", &dv)
	var cc canonicalCases
	readJSON(b, "testdata/canonical.json", &cc)
	var urls []string
	for _, tc := range dv.Hashed {
		urls = append(urls, tc.Input)
	}
	for _, tc := range dv.Variants {
		urls = append(urls, tc.Input)
	}
	for _, tc := range cc.Canonical {
		urls = append(urls, tc.Input)
	}
	return urls
}

func BenchmarkGenerate(b *testing.B) {
	urls := benchURLs(b)
	for _, alg := range []hasheduri.Alg{hasheduri.MD5, hasheduri.SHA1, hasheduri.SHA256} {
		b.Run(alg.String(), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := hasheduri.Generate(urls[i%len(urls)], alg, hasheduri.KeepBoth, hasheduri.N); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkMatch(b *testing.B) {
	urls := benchURLs(b)
	for _, alg := range []hasheduri.Alg{hasheduri.MD5, hasheduri.SHA1, hasheduri.SHA256} {
		for _, v := range []hasheduri.Variant{hasheduri.N, hasheduri.P} {
			u, err := hasheduri.Generate("http://www.thus.net", alg, hasheduri.KeepNone, v)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(alg.String()+"/"+v.String(), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := u.Match(urls[i%len(urls)], v); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

func BenchmarkCanonical(b *testing.B) {
	urls := benchURLs(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := hasheduri.Canonical(urls[i%len(urls)], hasheduri.P); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkParse(b *testing.B) {
	const s = "hashed:x-sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855+frag+query"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hasheduri.Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}
