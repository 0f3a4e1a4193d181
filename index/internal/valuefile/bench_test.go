package valuefile

import (
	"math/rand/v2"
	"testing"

	"github.com/urlhash/urlhash/internal/corpus"
)

// The value file's write and read paths, on the corpus's URLs in random
// (hash) order, as the key table writes them: go test -bench . -run '^$'
// ./index/internal/valuefile. Each reports ns a value.

// benchURLs returns 200,000 URLs derived from the corpus as the
// end-to-end benchmark derives them (go run ./bench), shuffled.
func benchURLs(b *testing.B) [][]byte {
	base := corpusURLs(b)
	texts := make([]string, len(base))
	for i, u := range base {
		texts[i] = string(u)
	}
	derived := corpus.Derive(texts, 200_000, corpus.Seed)
	urls := make([][]byte, len(derived))
	for i, u := range derived {
		urls[i] = []byte(u)
	}
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(urls), func(i, j int) { urls[i], urls[j] = urls[j], urls[i] })
	return urls
}

// BenchmarkWrite writes a value file: training its dictionary on the
// first values, and with the dictionary of another file given (a key
// table's later files).
func BenchmarkWrite(b *testing.B) {
	urls := benchURLs(b)
	_, info := write(b, urls[:20_000], Options{})
	for _, tc := range []struct {
		name string
		o    Options
	}{{"trained", Options{}}, {"given-dict", Options{Dict: info.Dict}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var m memFile
			for b.Loop() {
				m.b = m.b[:0]
				w := NewWriter(&m, tc.o)
				for _, u := range urls {
					if _, err := w.Add(u); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(urls)), "ns/value")
			b.ReportMetric(float64(len(m.b))/float64(len(urls)), "B/value")
		})
	}
}

// BenchmarkRead reads every other value back in ordinal order with a
// cursor (each block decoded once, as a sorted GetBatch reads them).
func BenchmarkRead(b *testing.B) {
	urls := benchURLs(b)
	m, _ := write(b, urls, Options{})
	c := NewCache(0)
	defer c.Close()
	r, err := Open(m, int64(len(m.b)), "bench.values", c)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		cur := r.NewCursor()
		for i := 0; i < len(urls); i += 2 {
			if v, err := cur.Value(uint32(i)); err != nil || len(v) != len(urls[i]) {
				b.Fatal("wrong value", err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(urls)/2), "ns/value")
}

// BenchmarkReadOne reads single values from random places without a
// cache, as a crawl frontier reads its records at scale (10M URLs: few
// reads hit a cache), from 4 KiB blocks compressed (as the key table
// writes them) and stored (Options.Stored). It reports ns and bytes a
// value.
func BenchmarkReadOne(b *testing.B) {
	urls := benchURLs(b)
	for _, tc := range []struct {
		name string
		o    Options
	}{{"compressed", Options{NoTrain: true, BlockSize: 4 << 10}}, {"stored", Options{Stored: true, BlockSize: 4 << 10}}} {
		b.Run(tc.name, func(b *testing.B) {
			m, _ := write(b, urls, tc.o)
			c := NewCache(0)
			defer c.Close()
			r, err := Open(m, int64(len(m.b)), "bench.values", c)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 3))
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				i := rng.IntN(len(urls))
				if buf, err = r.Value(uint32(i), buf[:0]); err != nil || len(buf) != len(urls[i]) {
					b.Fatal("wrong value", err)
				}
			}
			b.ReportMetric(float64(len(m.b))/float64(len(urls)), "B/value")
		})
	}
}
