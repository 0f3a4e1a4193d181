package index_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// A crawler revisits a page once a day: VisitBatch answers whether each
// sighting is due, and records it, in one atomic step.
func ExampleDB_VisitBatch() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	db, err := index.Open("", &index.Options{InMemory: true, Now: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	page := store.FullEntry(hashkey.Sum([]byte("https://example.com/")), store.Value{})
	for _, step := range []time.Duration{0, time.Hour, 23 * time.Hour} {
		now = now.Add(step)
		due, err := db.VisitBatch(ctx, []store.Entry{page}, 24*time.Hour)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(now.Format(time.DateTime), due[0])
	}
	v, _ := db.Get(ctx, page.Hash)
	fmt.Println("first seen", v.FirstSeen.Format(time.DateTime), "last seen", v.LastSeen.Format(time.DateTime))
	// Output:
	// 2030-01-01 12:00:00 true
	// 2030-01-01 13:00:00 false
	// 2030-01-02 12:00:00 true
	// first seen 2030-01-01 12:00:00 last seen 2030-01-02 12:00:00
}

// An entry with an expiry reads as absent from then on; DeletePrefix
// forgets a whole key range.
func ExampleDB_DeletePrefix() {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := index.Open("", &index.Options{InMemory: true, Now: func() time.Time { return now }})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	var es []store.Entry
	for _, u := range []string{"https://a.example/", "https://b.example/", "https://c.example/"} {
		es = append(es, store.FullEntry(hashkey.Sum([]byte(u)), store.Value{Expires: now.Add(time.Hour)}))
	}
	if err := db.PutBatch(ctx, es); err != nil {
		log.Fatal(err)
	}
	full, _, err := db.DeletePrefix(ctx, es[0].Hash[:1], 8)
	fmt.Println("deleted", full, err)
	s, _ := db.Stats(ctx)
	fmt.Println("entries", s.Entries, "expiring", s.Expiring)
	now = now.Add(time.Hour)
	s, _ = db.Stats(ctx)
	fmt.Println("entries", s.Entries, "expiring", s.Expiring)
	// Output:
	// deleted 1 <nil>
	// entries 2 expiring 2
	// entries 0 expiring 0
}
