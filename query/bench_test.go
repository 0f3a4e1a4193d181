package query

import (
	"fmt"
	"testing"

	"github.com/urlhash/urlhash/internal/corpus"
)

// benchURLs are 8192 real URLs and variations of them (corpus.Derive).
func benchURLs(b *testing.B) []string {
	b.Helper()
	base, err := corpus.ReadLines("../testdata/debian-package-urls.txt")
	if err != nil {
		b.Fatal(err)
	}
	return corpus.Derive(base, 8192, corpus.Seed)
}

// BenchmarkHashBatch hashes batches of URLs under the default profile, on
// one worker and on every core: one op is one batch, SetBytes the batch's
// URL text, and url/s the URLs hashed per second.
func BenchmarkHashBatch(b *testing.B) {
	urls := benchURLs(b)
	for _, workers := range []int{1, 0} {
		ix, _ := openTestIndex(b, &Options{Workers: workers})
		for _, n := range []int{1, 256, 8192} {
			batch := urls[:n]
			bytes := 0
			for _, u := range batch {
				bytes += len(u)
			}
			b.Run(fmt.Sprintf("workers=%d/batch=%d", ix.workers, n), func(b *testing.B) {
				b.SetBytes(int64(bytes))
				b.ReportAllocs()
				for b.Loop() {
					for _, r := range ix.HashBatch(batch) {
						if r.Err != nil {
							b.Fatal(r.Err)
						}
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "url/s")
			})
		}
	}
}
