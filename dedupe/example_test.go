package dedupe_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/urlhash/urlhash/dedupe"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
)

// A crawler's frontier filter: every discovered link is sent, and the
// Handler gets, batch after batch in order, which links were new.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dedupe-example-")
	defer os.RemoveAll(dir)
	db, err := index.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	ix, err := query.New(ctx, db, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	c, err := dedupe.Open(ctx, ix, &dedupe.Options{Journal: filepath.Join(dir, "urlhash.dedupe")},
		func(b *dedupe.Batch) error {
			for i, in := range b.Inputs {
				switch {
				case in.Err != nil:
					fmt.Println("invalid:", in.Text)
				case b.New[i]:
					fmt.Println("new:", in.Text)
				}
			}
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	c.SendURLs(ctx, []string{"https://example.com/", "https://EXAMPLE.com:443/a/../", "http://[::1"})
	c.SendURLs(ctx, []string{"https://example.com/next", "https://example.com/"})
	if err := c.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// new: https://example.com/
	// invalid: http://[::1
	// new: https://example.com/next
}

// A Handler that cannot take a batch (here: the frontier is full) stops
// the client, and the batch stays in its journal: the next client of the
// index hands its new inputs over again, marked Recovered, before
// anything else.
func ExampleOpen_recovered() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dedupe-example-")
	defer os.RemoveAll(dir)
	db, err := index.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	ix, err := query.New(ctx, db, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	opts := &dedupe.Options{Journal: filepath.Join(dir, "urlhash.dedupe")}
	full := errors.New("frontier full")
	c, err := dedupe.Open(ctx, ix, opts, func(b *dedupe.Batch) error { return full })
	if err != nil {
		log.Fatal(err)
	}
	c.SendURLs(ctx, []string{"https://example.com/a", "https://example.com/b"})
	fmt.Println("first client:", c.Close())

	c, err = dedupe.Open(ctx, ix, opts, func(b *dedupe.Batch) error {
		for i, in := range b.Inputs {
			if b.New[i] {
				fmt.Println("new:", in.Text, "recovered:", b.Recovered)
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	c.SendURLs(ctx, []string{"https://example.com/a", "https://example.com/c"})
	if err := c.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// first client: frontier full
	// new: https://example.com/a recovered: true
	// new: https://example.com/b recovered: true
	// new: https://example.com/c recovered: false
}
