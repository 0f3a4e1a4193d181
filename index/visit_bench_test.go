package index

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// BenchmarkDiskTimes measures the disk cost of seen times and expiry per
// entry (disk-B/entry): the same keys loaded plain, with seen times, with
// an expiry, with both, and written by VisitBatch (the dedupe
// --revisit-after path, through the write-ahead log, measured after Close
// flushes). Loaded times are spread over 30 days. 250k keys (URLHASH_BENCH_N/4); the timed loop is
// VisitBatch of 1000 stored keys that are not due.
func BenchmarkDiskTimes(b *testing.B) {
	ctx := context.Background()
	n := benchN(b) / 4
	keys := randHashes(rand.New(rand.NewPCG(51, 52)), n)
	seen := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		value store.Value
		visit bool
	}{
		{"load-plain", store.Value{}, false},
		{"load-times", store.Value{FirstSeen: seen, LastSeen: seen.Add(time.Hour)}, false},
		{"load-ttl", store.Value{Expires: seen.Add(24 * time.Hour)}, false},
		{"load-times+ttl", store.Value{FirstSeen: seen, LastSeen: seen, Expires: seen.Add(24 * time.Hour)}, false},
		{"visit", store.Value{}, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			o := &Options{now: func() time.Time { return seen }}
			db, err := Open(dir, o)
			if err != nil {
				b.Fatal(err)
			}
			// Times spread over 30 days, as a crawl's are: snappy would
			// compress identical ones away.
			r := rand.New(rand.NewPCG(53, 54))
			spread := func(t time.Time) time.Time {
				if t.IsZero() {
					return t
				}
				return t.Add(time.Duration(r.IntN(30*86400)) * time.Second)
			}
			es := entriesOf(keys)
			for i := range es {
				v := tc.value
				v.FirstSeen = spread(v.FirstSeen)
				if !v.LastSeen.IsZero() {
					v.LastSeen = v.FirstSeen.Add(time.Duration(r.IntN(30*86400)) * time.Second)
				}
				v.Expires = spread(v.Expires)
				es[i].Value = v
			}
			if tc.visit {
				for c := range slices.Chunk(es, 10_000) {
					if _, err := db.VisitBatch(ctx, c, time.Hour); err != nil {
						b.Fatal(err)
					}
				}
			} else if _, err := db.Load(ctx, slices.Values(es)); err != nil {
				b.Fatal(err)
			}
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
			_, _, disk, _ := dirBytes(dir)
			if db, err = Open(dir, o); err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			i := 0
			for b.Loop() {
				lo := (i * 1000) % (n - 1000)
				if _, err := db.VisitBatch(ctx, es[lo:lo+1000], time.Hour); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(disk)/float64(n), "disk-B/entry")
		})
	}
}

// BenchmarkVisitBatch is the served revisit path (dedupe --revisit-after
// through urlhash serve): VisitBatch of batches of 1,000 bare sightings
// on an index of format 3, a quarter of them new and the rest stored and
// not due, as four crawlers sharing one seen-set see them. ns/sighting
// and allocations are what the served revisit pays beyond AddKeys (see
// BenchmarkAddKeys).
func BenchmarkVisitBatch(b *testing.B) {
	ctx := context.Background()
	db := openTestDB(b, false, nil)
	rng := rand.New(rand.NewPCG(61, 62))
	stored := randHashes(rng, 200000)
	if _, err := db.VisitBatch(ctx, entriesOf(stored), 24*time.Hour); err != nil {
		b.Fatal(err)
	}
	es := make([]store.Entry, 1000)
	b.ReportAllocs()
	for b.Loop() {
		fresh := randHashes(rng, len(es)/4)
		for i := range es {
			if i < len(fresh) {
				es[i] = store.FullEntry(fresh[i], store.Value{})
			} else {
				es[i] = store.FullEntry(stored[rng.IntN(len(stored))], store.Value{})
			}
		}
		if _, err := db.VisitBatch(ctx, es, 24*time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(es)), "ns/sighting")
}

// BenchmarkVisitKeys is BenchmarkVisitBatch through VisitKeys, as urlhash
// serve runs a body of bare keys: no entry per sighting.
func BenchmarkVisitKeys(b *testing.B) {
	ctx := context.Background()
	db := openTestDB(b, false, nil)
	rng := rand.New(rand.NewPCG(61, 62))
	stored := randHashes(rng, 200000)
	visited := make([]bool, len(stored))
	if err := db.VisitKeys(ctx, stored, 24*time.Hour, visited, nil); err != nil {
		b.Fatal(err)
	}
	keys := make([]hashkey.Hash, 1000)
	visited = visited[:len(keys)]
	b.ReportAllocs()
	for b.Loop() {
		for i := range keys {
			if i < len(keys)/4 {
				for w := 0; w < hashkey.Size; w += 8 {
					binary.LittleEndian.PutUint64(keys[i][w:], rng.Uint64()) // new: 2^-256 to collide
				}
			} else {
				keys[i] = stored[rng.IntN(len(stored))]
			}
		}
		if err := db.VisitKeys(ctx, keys, 24*time.Hour, visited, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/sighting")
}
