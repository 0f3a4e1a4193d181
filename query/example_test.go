package query_test

import (
	"context"
	"fmt"
	"log"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
)

func ExampleIndex_Add() {
	ctx := context.Background()
	profile, err := urlhash.New(urlhash.DropFragment())
	if err != nil {
		log.Fatal(err)
	}
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	seen, err := query.New(ctx, db, &query.Options{Profile: profile})
	if err != nil {
		log.Fatal(err)
	}
	defer seen.Close()
	for _, u := range []string{"https://example.com/a", "HTTPS://EXAMPLE.COM/a#top", "https://example.com/b"} {
		isNew, err := seen.Add(ctx, u)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(isNew, u)
	}
	// Output:
	// true https://example.com/a
	// false HTTPS://EXAMPLE.COM/a#top
	// true https://example.com/b
}

func ExampleIndex_Lookup() {
	ctx := context.Background()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	list, err := query.New(ctx, db, &query.Options{Profile: safebrowsing.V5})
	if err != nil {
		log.Fatal(err)
	}
	defer list.Close()
	// A list ships 4-byte prefixes of the SHA-256 of its expressions.
	h := hashkey.Sum([]byte("evil.example/"))
	if err := db.PutPrefix(ctx, h[:4], store.Value{}); err != nil {
		log.Fatal(err)
	}
	hits, err := list.Lookup(ctx, "http://www.evil.example/login?next=/", safebrowsing.V5)
	if err != nil {
		log.Fatal(err)
	}
	for _, hit := range hits {
		fmt.Printf("%s matched %d bytes\n", hit.Expression, hit.Len)
	}
	// Output:
	// evil.example/ matched 4 bytes
}
