// Command hashed-uri shows how a filtering vendor publishes a URL list as
// hashed: URIs (draft-feather-hashed-uri-03) and how a client matches URLs
// against it without ever learning the listed URLs.
//
//	go run ./examples/hashed-uri
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal("hashed-uri: ", err)
	}
}

// run is the example; it writes what it shows to w.
func run(w io.Writer) error {
	ctx := context.Background()
	// The vendor's side: hash each listed URL. Query strings are kept for
	// the entry whose query matters.
	type entry struct {
		url  string
		keep hasheduri.Keep
	}
	private := []entry{
		{"http://gambling.example/", hasheduri.KeepNone},
		{"http://forum.example/board/offtopic/", hasheduri.KeepNone},
		{"http://video.example/watch?v=abc123", hasheduri.KeepQuery},
	}
	var published []string
	for _, e := range private {
		u, err := hasheduri.Generate(e.url, hasheduri.SHA256, e.keep, hasheduri.N)
		if err != nil {
			return err
		}
		published = append(published, u.String())
	}
	fmt.Fprintln(w, "published list:")
	for _, p := range published {
		fmt.Fprintln(w, "  "+p)
	}

	// The client's side: load the published URIs into an index, then test
	// URLs. Only digests are stored; the list reveals no URL.
	dir, err := os.MkdirTemp("", "hashed-uri-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := index.Open(dir, nil)
	if err != nil {
		return err
	}
	ix, err := query.New(ctx, db, nil)
	if err != nil {
		return err
	}
	defer ix.Close()
	for _, p := range published {
		u, err := hasheduri.Parse(p)
		if err != nil {
			return err
		}
		if err := ix.AddHashedURI(ctx, u); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nclient checks:")
	for _, raw := range []string{
		"HTTP://Gambling.Example:80/#top",
		"http://forum.example/board/offtopic/",
		"http://forum.example/board/news/",
		"http://video.example/watch?v=abc123",
		"http://video.example/watch?v=zzz999",
	} {
		matches, err := ix.MatchHashed(ctx, raw, hasheduri.N)
		if err != nil {
			return err
		}
		verdict := "not listed"
		if len(matches) > 0 {
			verdict = "listed (" + matches[0].String()[:30] + "...)"
		}
		fmt.Fprintf(w, "  %-40s %s\n", raw, verdict)
	}
	return nil
}
