// Command crawler-dedupe shows urlhash as a crawler's frontier filter:
// several workers fetch pages of a simulated site concurrently, and every
// discovered link enters the frontier only if Add says it is new.
// Fragments are dropped from identities, so page#a and page#b are one page,
// and links that differ only in spelling (case, default port, dot segments)
// are one page too.
//
//	go run ./examples/crawler-dedupe
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
)

const workers = 4

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal("crawler-dedupe: ", err)
	}
}

// links simulates fetching a page: page n of the site links to pages 2n and
// 2n+1 (up to 200), back to the home page /p/1, and to itself with a
// fragment, each spelled a little differently.
func links(n int) []link {
	var out []link
	for _, m := range []int{2 * n, 2*n + 1} {
		if m <= 200 {
			out = append(out, link{fmt.Sprintf("https://shop.example/p/%d", m), m})
		}
	}
	return append(out,
		link{"HTTPS://Shop.Example:443/p/1", 1},
		link{fmt.Sprintf("https://shop.example/p/x/../%d#reviews", n), n},
	)
}

// link is a discovered URL and the simulated page it names.
type link struct {
	url  string
	page int
}

// run is the example; it writes what it shows to w.
func run(w io.Writer) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "crawler-dedupe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	profile, err := urlhash.New(urlhash.DropFragment())
	if err != nil {
		return err
	}
	db, err := index.Open(dir, nil)
	if err != nil {
		return err
	}
	seen, err := query.New(ctx, db, &query.Options{Profile: profile})
	if err != nil {
		return err
	}
	defer seen.Close()

	frontier := make(chan link, 1024)
	var pending sync.WaitGroup
	var fetched, duplicates atomic.Int64
	var mu sync.Mutex
	var crawled []int

	enqueue := func(url string, page int) error {
		isNew, err := seen.Add(ctx, url)
		if err != nil {
			return err
		}
		if !isNew {
			duplicates.Add(1)
			return nil
		}
		pending.Add(1)
		frontier <- link{url, page}
		return nil
	}
	if err := enqueue("https://shop.example/p/1", 1); err != nil {
		return err
	}

	// The first error wins; later ones are dropped so that no worker blocks.
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for t := range frontier {
				fetched.Add(1)
				mu.Lock()
				crawled = append(crawled, t.page)
				mu.Unlock()
				for _, l := range links(t.page) {
					if err := enqueue(l.url, l.page); err != nil {
						errOnce.Do(func() { firstErr = err })
					}
				}
				pending.Done()
			}
		})
	}
	pending.Wait()
	close(frontier)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	sort.Ints(crawled)
	for i, p := range crawled {
		if p != i+1 {
			return fmt.Errorf("page %d crawled out of place: each page must be fetched exactly once", p)
		}
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d workers fetched %d pages, each exactly once\n", workers, fetched.Load())
	fmt.Fprintf(w, "%d duplicate links skipped (fragments, case, :443, dot segments)\n", duplicates.Load())
	fmt.Fprintf(w, "%d identities in the frontier index\n", st.Entries)
	return nil
}
