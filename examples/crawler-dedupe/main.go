// Command crawler-dedupe shows urlhash as a crawler's frontier filter:
// several workers fetch pages of a simulated site concurrently, and the
// links each page holds go through one exactly-once client (package
// dedupe), whose Handler puts the new ones in the frontier. Fragments are
// dropped from identities, so page#a and page#b are one page, and links
// that differ only in spelling (case, default port, dot segments) are one
// page too.
//
// The client journals each batch of links before it is stored, until its
// new links are in the frontier: a crawler killed in between gets them
// again when it restarts (dedupe.Open finishes the batch first), so that a
// crawler whose frontier is durable (this one's is in memory, for
// brevity) never loses a page it stored as seen.
//
//	go run ./examples/crawler-dedupe
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/urlhash/urlhash/dedupe"
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

	// The Handler gets the answer to each batch of links once it is
	// durable, in the order the batches were sent, and puts the new links
	// in the next round's frontier; the batch's journal is cleared when it
	// returns.
	var mu sync.Mutex
	var next []link
	page := map[string]int{} // the page each link names, by its text
	var duplicates int
	filter, err := dedupe.Open(ctx, seen, &dedupe.Options{Journal: filepath.Join(dir, "urlhash.dedupe")},
		func(b *dedupe.Batch) error {
			mu.Lock()
			defer mu.Unlock()
			for i, in := range b.Inputs {
				switch {
				case in.Err != nil:
					return in.Err
				case b.New[i]:
					next = append(next, link{in.Text, page[in.Text]})
				default:
					duplicates++
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	defer filter.Close()
	send := func(ls []link) error {
		urls := make([]string, len(ls))
		mu.Lock()
		for i, l := range ls {
			urls[i] = l.url
			page[l.url] = l.page
		}
		mu.Unlock()
		return filter.SendURLs(ctx, urls)
	}

	// The crawl goes in rounds: the workers fetch the round's pages at
	// once and send the links of each through the filter; Flush waits for
	// the last answers, and the new links are the next round.
	if err := send([]link{{"https://shop.example/p/1", 1}}); err != nil {
		return err
	}
	var crawled []int
	for {
		if err := filter.Flush(); err != nil {
			return err
		}
		round := next
		next = nil
		if len(round) == 0 {
			break
		}
		pages := make(chan link)
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for p := range pages {
					if err := send(links(p.page)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for _, p := range round {
			crawled = append(crawled, p.page)
			pages <- p
		}
		close(pages)
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
		}
	}
	if err := filter.Close(); err != nil {
		return err
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
	fmt.Fprintf(w, "%d workers fetched %d pages, each exactly once\n", workers, len(crawled))
	fmt.Fprintf(w, "%d duplicate links skipped (fragments, case, :443, dot segments)\n", duplicates)
	fmt.Fprintf(w, "%d identities in the frontier index\n", st.Entries)
	return nil
}
