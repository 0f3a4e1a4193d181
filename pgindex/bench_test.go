package pgindex

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// benchN is the index size of the benchmarks: URLHASH_BENCH_N, default
// 100k (a run of all of them takes about a minute).
func benchN(b *testing.B) int {
	if s := os.Getenv("URLHASH_BENCH_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("URLHASH_BENCH_N=%q: want an integer >= 1000", s)
		}
		return n
	}
	return 100_000
}

// benchBatch is the batch size of the batch benchmarks.
const benchBatch = 1000

// backends runs fn as sub-benchmarks on a new Badger index (in
// b.TempDir) and a new PostgreSQL index, opened by open for each run.
func backends(b *testing.B, fn func(b *testing.B, open func() backend)) {
	b.Run("badger", func(b *testing.B) {
		fn(b, func() backend { return openBadger(b) })
	})
	b.Run("postgres", func(b *testing.B) {
		testURL(b)
		fn(b, func() backend { return openTestDB(b, nil) })
	})
}

func keyEntries(hs []hashkey.Hash) []store.Entry {
	es := make([]store.Entry, len(hs))
	for i := range hs {
		es[i] = store.Entry{Hash: hs[i], Len: hashkey.Size}
	}
	return es
}

// BenchmarkLoad imports benchN keys into an empty index (urlhash import).
func BenchmarkLoad(b *testing.B) {
	n := benchN(b)
	es := keyEntries(randHashes(rand.New(rand.NewPCG(1, 1)), n))
	backends(b, func(b *testing.B, open func() backend) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			db := open()
			b.StartTimer()
			res, err := db.Load(context.Background(), slices.Values(es))
			if err != nil || res.Added != int64(n) {
				b.Fatalf("Load = %+v, %v", res, err)
			}
			b.StopTimer()
			db.Close() // Badger's caches; the schema is dropped at the end
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
	})
}

// loaded returns an index holding hs.
func loaded(b *testing.B, open func() backend, hs []hashkey.Hash) backend {
	db := open()
	if _, err := db.Load(context.Background(), slices.Values(keyEntries(hs))); err != nil {
		b.Fatal(err)
	}
	return db
}

// batchBenchmark runs op on batches of benchBatch keys, stored and new
// ones alternately, against an index of benchN keys on each backend; seed
// picks the keys. It reports ns/key.
func batchBenchmark(b *testing.B, seed uint64, op func(db backend, batch []hashkey.Hash) error) {
	r := rand.New(rand.NewPCG(seed, seed))
	hs := randHashes(r, benchN(b))
	backends(b, func(b *testing.B, open func() backend) {
		db := loaded(b, open, hs)
		r := rand.New(rand.NewPCG(seed+1, seed+1))
		batch := make([]hashkey.Hash, benchBatch)
		b.ReportAllocs()
		for b.Loop() {
			fresh := randHashes(r, len(batch)/2)
			for i := range batch {
				if i%2 == 0 {
					batch[i] = hs[r.IntN(len(hs))]
				} else {
					batch[i] = fresh[i/2]
				}
			}
			if err := op(db, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/key")
	})
}

// BenchmarkAddIfAbsentBatch adds batches of benchBatch keys, half of them
// stored already, to an index of benchN keys (urlhash dedupe).
func BenchmarkAddIfAbsentBatch(b *testing.B) {
	entries := make([]store.Entry, benchBatch)
	batchBenchmark(b, 2, func(db backend, batch []hashkey.Hash) error {
		for i := range batch {
			entries[i] = store.Entry{Hash: batch[i]}
		}
		_, err := db.AddBatch(context.Background(), entries)
		return err
	})
}

// BenchmarkAddIfAbsent adds one key per call, half of them stored
// already: one round trip each on PostgreSQL.
func BenchmarkAddIfAbsent(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	hs := randHashes(r, benchN(b))
	backends(b, func(b *testing.B, open func() backend) {
		db := loaded(b, open, hs)
		r := rand.New(rand.NewPCG(5, 5))
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			h := hs[r.IntN(len(hs))]
			if i++; i%2 == 0 {
				h = randHashes(r, 1)[0]
			}
			if _, err := db.Add(context.Background(), h, store.Value{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHasBatch looks up batches of benchBatch keys, half of them
// stored, in an index of benchN keys (urlhash has).
func BenchmarkHasBatch(b *testing.B) {
	batchBenchmark(b, 6, func(db backend, batch []hashkey.Hash) error {
		_, err := db.HasBatch(context.Background(), batch)
		return err
	})
}
