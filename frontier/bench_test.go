package frontier

import (
	"context"
	"fmt"
	"sync"
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
