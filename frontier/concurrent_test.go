package frontier

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestConcurrentNoLoss: callers that get URLs, put what their pages link
// to and complete them, all at once in one queue, lose none: at the end
// every URL the crawl knows is completed (frontier-questions.md item 8:
// a due key read unlocked before its record was written was deleted as
// stale once the record was, the URL known and never handed out).
func TestConcurrentNoLoss(t *testing.T) {
	f, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	if err := f.SetDelay(ctx, "", "", 0); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	url := func(i int) string { return fmt.Sprintf("https://h.example/%d", i) }
	var seeds []Item
	for i := 0; i < n; i += 100 {
		seeds = append(seeds, Item{Info: URLInfo{URL: url(i)}})
	}
	mustPut(t, f, seeds)
	var wg sync.WaitGroup
	deadline := time.Now().Add(60 * time.Second)
	for k := range 4 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(k), 1))
			idle := 0
			for idle < 50 && time.Now().Before(deadline) {
				hs, err := f.GetURLs(ctx, GetParams{MaxURLs: 8, MaxPerQueue: 12, Transit: 3 * time.Second})
				if err != nil {
					t.Error(err)
					return
				}
				if len(hs) == 0 {
					idle++
					time.Sleep(5 * time.Millisecond)
					continue
				}
				idle = 0
				var items []Item
				ids := make([]ID, len(hs))
				for i, h := range hs {
					ids[i] = h.ID
					for range 6 {
						items = append(items, Item{Info: URLInfo{URL: url(rnd.IntN(n))}})
					}
				}
				if _, err := f.Put(ctx, items); err != nil {
					t.Error(err)
					return
				}
				if _, err := f.Complete(ctx, "", ids); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Drain what is left (a caller may have stopped early).
	for {
		hs := mustGet(t, f, GetParams{Transit: time.Minute})
		if len(hs) == 0 {
			break
		}
		var ids []ID
		for _, u := range hs {
			p, _ := f.prepare(&Item{Info: URLInfo{URL: u}})
			ids = append(ids, ID(p.u))
		}
		if _, err := f.Complete(ctx, "", ids); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := f.Stats("", ""); s.Size != 0 {
		t.Errorf("drained: %d URLs left queued or in transit", s.Size)
	}
	known := 0
	var lost []string
	for i := range n {
		it, err := f.URLStatus(ctx, "", url(i))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if known++; !it.IsCompleted() {
			lost = append(lost, url(i))
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d URLs known and not completed, never handed out: %q", len(lost), known, lost[:min(5, len(lost))])
	}
	if s, _ := f.Stats("", ""); s.Completed != int64(known) {
		t.Errorf("%d URLs known, %d counted completed", known, s.Completed)
	}
}
