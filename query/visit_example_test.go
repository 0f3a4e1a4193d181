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
// more; the clock here is a fake one that the example moves.
func ExampleIndex_Visit() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := index.Open("", &index.Options{InMemory: true, Now: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	seen, err := query.New(ctx, db, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer seen.Close()
	for _, step := range []time.Duration{0, 12 * time.Hour, 12 * time.Hour} {
		now = now.Add(step)
		due, err := seen.Visit(ctx, "https://example.com/news", 24*time.Hour)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(now.Format(time.DateTime), due)
	}
	// Forget every URL whose identity starts with the same 4 hex digits.
	h, _ := seen.Hash("https://example.com/news")
	n, _, err := seen.DeletePrefix(ctx, h.String()[:4])
	fmt.Println("deleted", n, err)
	// Output:
	// 2030-01-01 00:00:00 true
	// 2030-01-01 12:00:00 false
	// 2030-01-02 00:00:00 true
	// deleted 1 <nil>
}
