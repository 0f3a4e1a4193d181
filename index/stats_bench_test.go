package index

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/urlhash/urlhash/store"
)

// BenchmarkStatsTTL measures Stats of an index of URLHASH_BENCH_N entries
// (default 1M), a third of them expiring over the next day (86,400
// distinct seconds): "open" is Stats in an open index (/metrics), "process"
// is a read-only Open, Stats and Close (urlhash stats).
func BenchmarkStatsTTL(b *testing.B) {
	ctx := context.Background()
	n := benchN(b)
	dir := b.TempDir()
	db, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	hs := randHashes(rand.New(rand.NewPCG(21, 8)), n)
	_, err = db.Load(ctx, func(yield func(store.Entry) bool) {
		for i, h := range hs {
			e := store.Entry{Hash: h}
			if i%3 == 0 {
				e.Value.Expires = now.Add(time.Duration(3600+i%86400) * time.Second)
			}
			if !yield(e) {
				return
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	hs = nil
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	want := int64((n + 2) / 3)
	b.Run("open", func(b *testing.B) {
		db, err := Open(dir, &Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		for b.Loop() {
			s, err := db.Stats(ctx)
			if err != nil || s.Entries != int64(n) || s.Expiring != want {
				b.Fatalf("Stats = %d entries, %d expiring, %v; want %d, %d", s.Entries, s.Expiring, err, n, want)
			}
		}
	})
	b.Run("process", func(b *testing.B) {
		for b.Loop() {
			db, err := Open(dir, &Options{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			s, err := db.Stats(ctx)
			if err != nil || s.Entries != int64(n) || s.Expiring != want {
				b.Fatalf("Stats = %d entries, %d expiring, %v; want %d, %d", s.Entries, s.Expiring, err, n, want)
			}
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
