package query_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
)

// check stands for the caller's error handling in the tour.
func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// Example_tour is the README's Library tour: the README shows the body of
// this function, and cmd/urlhash's TestReadmeLibraryTour checks that it
// is the same text.
func Example_tour() {
	h, err := urlhash.Default.Hash("HTTPS://Example.COM:443/a/../") // SHA-256 of "https://example.com/"
	check(err)
	fmt.Println(h)             // the hex form
	fmt.Println(h.Decimal())   // url-hash's four words
	fmt.Println(h.VeryShort()) // the first 8 bytes

	crawl, err := urlhash.New(urlhash.DropFragment()) // page#a and page#b are one page
	check(err)

	ctx := context.Background() // a request's, or one cancelled on SIGINT
	dir, err := os.MkdirTemp("", "tour")
	check(err)
	defer os.RemoveAll(dir)
	db, err := index.Open(filepath.Join(dir, "seen.idx"), nil) // or backend.Open(ctx, "postgres://…", nil)
	check(err)
	ix, err := query.New(ctx, db, &query.Options{Profile: crawl}) // records the profile, refuses another
	check(err)
	defer ix.Close()
	isNew, err := ix.Add(ctx, "https://example.com/a#top") // add if absent: true once, across goroutines
	check(err)
	ok, err := ix.Has(ctx, "https://EXAMPLE.com/a") // the same page
	check(err)
	rs, err := ix.HasBatch(ctx, []string{"https://example.com/a#b", "https://example.com/b"}) // hashed on every core
	check(err)
	fmt.Println(isNew, ok, rs[0].OK, rs[1].OK)

	ldb, err := index.Open(filepath.Join(dir, "list.idx"), nil)
	check(err)
	list, err := query.New(ctx, ldb, &query.Options{Profile: safebrowsing.V5})
	check(err)
	defer list.Close()
	evil, err := safebrowsing.V5.Hash("evil.example/") // a list entry: an expression's hash
	check(err)
	check(ldb.PutPrefix(ctx, evil[:4], store.Value{})) // list entries are hashes (here a 4-byte prefix), not URLs
	hits, err := list.Lookup(ctx, "http://www.evil.example/login", safebrowsing.V5)
	check(err)
	for _, hit := range hits {
		fmt.Println(hit.Expression, hit.Len) // the expression that matched, and how many bytes
	}
	// Output:
	// 0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7
	// 15978973112404087055-11952159289928715011-16949433277703541955-15558110937471207048
	// 0f115db062b7c0dd
	// true true true false
	// evil.example/ 4
}
