package query_test

import (
	"fmt"
	"log"
	"os"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
)

func ExampleIndex_AddIfAbsent() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	seen, err := query.Open(dir, &query.Options{Profile: hashkey.New(hashkey.DropFragment())})
	if err != nil {
		log.Fatal(err)
	}
	defer seen.Close()
	for _, u := range []string{"https://example.com/a", "HTTPS://EXAMPLE.COM/a#top", "https://example.com/b"} {
		isNew, err := seen.AddIfAbsent(u)
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
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	list, err := query.Open(dir, &query.Options{SafeBrowsing: safebrowsing.V5})
	if err != nil {
		log.Fatal(err)
	}
	defer list.Close()
	h := hashkey.Sum([]byte("evil.example/"))
	if err := list.AddPrefix(h[:4], index.Value{}); err != nil {
		log.Fatal(err)
	}
	hits, err := list.Lookup("http://www.evil.example/login?next=/", safebrowsing.V5)
	if err != nil {
		log.Fatal(err)
	}
	for _, hit := range hits {
		fmt.Printf("%s matched %d bytes\n", hit.Expression, hit.Len)
	}
	// Output:
	// evil.example/ matched 4 bytes
}
