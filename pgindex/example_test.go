package pgindex_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/pgindex"
	"github.com/urlhash/urlhash/store"
)

// Example deduplicates URLs against an index that several crawler hosts
// share. It needs a server, so it has no checked output; with one, it
// prints "true false true".
func Example() {
	ctx := context.Background()
	db, err := pgindex.Open(ctx, os.Getenv("URLHASH_TEST_POSTGRES"), &pgindex.Options{
		Schema:  "crawl_frontier",
		Profile: "urlhash+sha256;unicode=17.0.0",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	h := hashkey.Sum([]byte("https://example.com/"))
	added, err := db.Add(context.Background(), h, store.Value{Text: []byte("https://example.com/")})
	if err != nil {
		log.Fatal(err)
	}
	again, err := db.Add(context.Background(), h, store.Value{})
	if err != nil {
		log.Fatal(err)
	}
	ok, err := db.Has(context.Background(), h)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(added, again, ok)
}
