// Command crawler-revisit shows urlhash keeping a crawl fresh: pages are
// fetched when they are new or were last fetched a day ago or more
// (query.Index.Visit, "urlhash dedupe --revisit-after 24h"), by several
// workers at once, each due page by exactly one of them. So that it runs in
// seconds, "a day" is three seconds of the wall clock (the index's clock)
// here: the first round fetches every page, a second at once fetches none
// (nothing is due), a third four seconds after the first fetches every
// page again. Each entry records when it was first and last fetched.
//
//	go run ./examples/crawler-revisit
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
)

const (
	workers = 4
	pages   = 100
	// revisitAfter is how old a fetch must be before the page is fetched
	// again (a day for a real crawler). Visit counts whole seconds, so a
	// round that follows at once (well within two seconds) finds nothing
	// due.
	revisitAfter = 3 * time.Second
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal("crawler-revisit: ", err)
	}
}

// links simulates fetching a page: page n links to pages 2n and 2n+1 (up
// to pages), back to the home page and to itself.
func links(n int) []string {
	out := []string{fmt.Sprintf("https://news.example/p/%d", n), "https://news.example/p/1"}
	for _, m := range []int{2 * n, 2*n + 1} {
		if m <= pages {
			out = append(out, fmt.Sprintf("https://news.example/p/%d", m))
		}
	}
	return out
}

// run is the example; it writes what it shows to w.
func run(w io.Writer) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "crawler-revisit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := index.Open(dir, nil)
	if err != nil {
		return err
	}
	seen, err := query.New(ctx, db, nil)
	if err != nil {
		return err
	}
	defer seen.Close()

	for i, wait := range []time.Duration{0, 0, revisitAfter + time.Second} {
		time.Sleep(wait)
		fetched, err := crawl(ctx, seen)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "round %d, %v after the last: %d pages fetched\n", i+1, wait, fetched)
	}
	v, err := seen.Get(ctx, "https://news.example/p/1")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "p/1 last fetched at least %v after it was first fetched: %v\n", revisitAfter, v.LastSeen.Sub(v.FirstSeen) >= revisitAfter)
	return nil
}

// crawl runs one round from the home page: workers follow every link,
// fetching a page only when Visit reports it due (a page not due is not
// fetched, so its links are not followed: a real crawler would keep its
// frontier; the round ends where the site is fresh). It returns how many
// pages it fetched, and fails if one was fetched twice.
func crawl(ctx context.Context, seen *query.Index) (int, error) {
	frontier := make(chan int, pages*4)
	var pending sync.WaitGroup
	var fetched atomic.Int64
	var counts [pages + 1]atomic.Int32
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	enqueue := func(url string) {
		due, err := seen.Visit(ctx, url, revisitAfter)
		if err != nil {
			fail(err)
			return
		}
		if !due {
			return
		}
		var n int
		fmt.Sscanf(url, "https://news.example/p/%d", &n)
		pending.Add(1)
		frontier <- n
	}
	enqueue("https://news.example/p/1")
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for n := range frontier {
				fetched.Add(1)
				counts[n].Add(1)
				for _, l := range links(n) {
					enqueue(l)
				}
				pending.Done()
			}
		})
	}
	pending.Wait()
	close(frontier)
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	for n := range counts {
		if c := counts[n].Load(); c > 1 {
			return 0, fmt.Errorf("page %d fetched %d times in one round", n, c)
		}
	}
	return int(fetched.Load()), nil
}
