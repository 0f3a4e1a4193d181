package query_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
)

// A crawler fetches a URL when it is new or was last fetched a day ago or
// more: the first sighting is due, a second within the day is not (the
// index's clock is the wall clock).
func ExampleIndex_Visit() {
	ctx := context.Background()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	seen, err := query.New(ctx, db, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer seen.Close()
	for range 2 {
		due, err := seen.Visit(ctx, "https://example.com/news", 24*time.Hour)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("due", due)
	}
	// Forget every URL whose identity starts with the same 4 hex digits.
	h, _ := seen.Hash("https://example.com/news")
	n, _, err := seen.DeletePrefix(ctx, h.String()[:4])
	fmt.Println("deleted", n, err)
	// Output:
	// due true
	// due false
	// deleted 1 <nil>
}
