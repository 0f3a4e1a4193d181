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
// sighting is due, and records it, in one atomic step: the first sighting
// is due, one within the day is not (a day later it would be), and with
// revisitAfter 0 a page seen once is never due again.
func ExampleDB_VisitBatch() {
	ctx := context.Background()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	page := store.FullEntry(hashkey.Sum([]byte("https://example.com/")), store.Value{})
	for _, after := range []time.Duration{24 * time.Hour, 24 * time.Hour, 0} {
		due, err := db.VisitBatch(ctx, []store.Entry{page}, after)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("revisit after", after, "due", due[0])
	}
	v, _ := db.Get(ctx, page.Hash)
	fmt.Println("first seen recorded", !v.FirstSeen.IsZero(), "last seen recorded", !v.LastSeen.IsZero())
	// Output:
	// revisit after 24h0m0s due true
	// revisit after 24h0m0s due false
	// revisit after 0s due false
	// first seen recorded true last seen recorded true
}

// An entry with an expiry reads as absent from then on; DeletePrefix
// forgets a whole key range.
func ExampleDB_DeletePrefix() {
	ctx := context.Background()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	hour := time.Now().Add(time.Hour)
	var es []store.Entry
	for _, u := range []string{"https://a.example/", "https://b.example/", "https://c.example/"} {
		es = append(es, store.FullEntry(hashkey.Sum([]byte(u)), store.Value{Expires: hour}))
	}
	if err := db.PutBatch(ctx, es); err != nil {
		log.Fatal(err)
	}
	full, _, err := db.DeletePrefix(ctx, es[0].Hash[:1], 8)
	fmt.Println("deleted", full, err)
	s, _ := db.Stats(ctx)
	fmt.Println("entries", s.Entries, "expiring", s.Expiring)
	gone := hashkey.Sum([]byte("https://gone.example/"))
	if err := db.Put(ctx, gone, store.Value{Expires: time.Now().Add(-time.Second)}); err != nil {
		log.Fatal(err)
	}
	ok, err := db.Has(ctx, gone)
	fmt.Println("expired entry present", ok, err)
	// Output:
	// deleted 1 <nil>
	// entries 2 expiring 2
	// expired entry present false <nil>
}
