// Command blocklist shows urlhash as a Safe Browsing style local list: the
// client keeps only 4-byte hash prefixes of the listed expressions (small,
// and revealing little), looks URLs up locally, and confirms a prefix hit
// against the full hashes, as a client confirms with the list server.
//
//	go run ./examples/blocklist
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
)

// listed are the expressions the list provider blocks: a whole site, a path
// prefix, and one exact URL with its query.
var listed = []string{
	"malware.example/",
	"bank.example.net/login/",
	"cdn.example.org/ads/pixel.gif?id=7",
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal("blocklist: ", err)
	}
}

// run is the example; it writes what it shows to w.
func run(w io.Writer) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "blocklist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	profile := safebrowsing.V5
	db, err := index.Open(dir, nil)
	if err != nil {
		return err
	}
	list, err := query.New(ctx, db, &query.Options{Profile: profile})
	if err != nil {
		return err
	}
	defer list.Close()

	// The provider's side: full hashes it keeps, 4-byte prefixes it ships.
	fullHashes := make(map[hashkey.Hash]string)
	for _, expr := range listed {
		h := hashkey.Sum([]byte(expr))
		fullHashes[h] = expr
		p, err := safebrowsing.Prefix(h, 4)
		if err != nil {
			return err
		}
		if err := db.PutPrefix(ctx, p, store.Value{}); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "local list: %d prefixes of 4 bytes (%s rules)\n\n", len(listed), profile.Name())

	for _, u := range []string{
		"http://www.malware.example/download/setup.exe",
		"https://bank.example.net/login/step2?session=1",
		"https://bank.example.net/about",
		"http://cdn.example.org/ads/pixel.gif?id=7",
		"http://cdn.example.org/ads/pixel.gif?id=8",
		"https://www.example.com/",
	} {
		hits, err := list.Lookup(ctx, u, profile)
		if err != nil {
			return err
		}
		verdict := "safe"
		for _, hit := range hits {
			// A 4-byte prefix hit only says "maybe": confirm the full hash.
			if expr, ok := fullHashes[hit.Hash]; ok {
				verdict = fmt.Sprintf("BLOCKED (expression %s, prefix %x confirmed)", expr, hit.Hash[:hit.Len])
				break
			}
			verdict = "safe (prefix hit, full hash not listed)"
		}
		fmt.Fprintf(w, "%-50s %s\n", u, verdict)
	}
	return nil
}
