package frontier

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCrawl puts b.N discovered URLs over 1,000 hosts from 4
// goroutines in batches of 50, then drains them with GetURLs and marks
// them completed: the frontier's own cost, without gRPC.
func BenchmarkCrawl(b *testing.B) {
	b.Run("complete", func(b *testing.B) { benchmarkCrawl(b, false) })
	b.Run("known", func(b *testing.B) { benchmarkCrawl(b, true) })
}

// benchmarkCrawl marks the URLs completed with Complete, or with Put of
// Known items (as a gRPC client does).
func benchmarkCrawl(b *testing.B, known bool) {
	f, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	if err := f.SetDelay(ctx, "", "", 0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for k := range 4 {
		wg.Go(func() {
			var items []Item
			for i := k; i < b.N; i += 4 {
				items = append(items, Item{Info: URLInfo{URL: fmt.Sprintf("https://h%d.example/p/%d", i%1000, i)}})
				if len(items) == 50 {
					if _, err := f.Put(ctx, items); err != nil {
						b.Error(err)
						return
					}
					items = items[:0]
				}
			}
			if _, err := f.Put(ctx, items); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	put := time.Since(start)
	start = time.Now()
	for range 4 {
		wg.Go(func() {
			for {
				hs, err := f.GetURLs(ctx, GetParams{MaxQueues: 200, MaxPerQueue: 25})
				if err != nil {
					b.Error(err)
					return
				}
				if len(hs) == 0 {
					return
				}
				if known {
					items := make([]Item, len(hs))
					for i := range hs {
						items[i] = Item{Info: hs[i].Info, Known: true}
					}
					if _, err := f.Put(ctx, items); err != nil {
						b.Error(err)
						return
					}
					continue
				}
				ids := make([]ID, len(hs))
				for i := range hs {
					ids[i] = hs[i].ID
				}
				if _, err := f.Complete(ctx, "", ids); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/put.Seconds(), "puts/s")
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "drains/s")
}

// The shape of issue 36's goal (go run ./bench -only frontier): URLs over
// 10,000 hosts, put by 4 clients in batches of 50, drained by 4 clients
// with GetURLs of 25 URLs from each of 200 queues, marked completed with
// Known puts as a gRPC client does.
const (
	benchHosts   = 10000
	benchClients = 4
	benchBatch   = 50
)

// benchPut puts n URLs as the goal's clients do.
func benchPut(tb testing.TB, f *Frontier, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for k := range benchClients {
		wg.Go(func() {
			items := make([]Item, 0, benchBatch)
			for i := k; i < n; i += benchClients {
				items = append(items, Item{Info: URLInfo{URL: fmt.Sprintf("https://h%d.example/p/%d", i%benchHosts, i)}})
				if len(items) == benchBatch || i+benchClients >= n {
					if _, err := f.Put(ctx, items); err != nil {
						tb.Error(err)
						return
					}
					items = items[:0]
				}
			}
		})
	}
	wg.Wait()
}

// benchDrain hands out every URL and completes it, as the goal's clients
// do, and returns how many were handed out.
func benchDrain(tb testing.TB, f *Frontier) int64 {
	ctx := context.Background()
	var wg sync.WaitGroup
	var handed atomic.Int64
	for range benchClients {
		wg.Go(func() {
			for {
				hs, err := f.GetURLs(ctx, GetParams{MaxQueues: 200, MaxPerQueue: 25, Transit: 300 * time.Second})
				if err != nil {
					tb.Error(err)
					return
				}
				if len(hs) == 0 {
					return
				}
				handed.Add(int64(len(hs)))
				items := make([]Item, len(hs))
				for i := range hs {
					items[i] = Item{Info: hs[i].Info, Known: true}
				}
				if _, err := f.Put(ctx, items); err != nil {
					tb.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return handed.Load()
}

// BenchmarkPut puts b.N discovered URLs over 10,000 hosts from 4
// goroutines in batches of 50 (the put of issue 36's goal, without gRPC).
func BenchmarkPut(b *testing.B) {
	f, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	b.ResetTimer()
	benchPut(b, f, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
}

// BenchmarkDrain hands out b.N URLs over 10,000 hosts (put untimed) with
// GetURLs from 4 goroutines and marks them completed with Known puts (the
// drain of issue 36's goal, without gRPC), after a reopen.
func BenchmarkDrain(b *testing.B) {
	dir := b.TempDir()
	f, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.SetDelay(context.Background(), "", "", 0); err != nil {
		b.Fatal(err)
	}
	benchPut(b, f, b.N)
	// Reopened, as the goal's server is: the URLs are in the key table's
	// files, not in its memory.
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if f, err = Open(dir, nil); err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	b.ResetTimer()
	if n := benchDrain(b, f); n != int64(b.N) {
		b.Fatalf("handed out %d URLs of %d", n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
}
