// Command threatlist-sync keeps a local copy of a threat list up to date
// with the Web Risk Update API, as "urlhash sync" does, using package
// threatlist: a first sync gets a RESET, the next ones a DIFF, and lookups
// answer from the index in between.
//
// Without flags it runs against a list server of its own (a urlhash server
// over an index of 4-byte prefixes), so that it runs anywhere:
//
//	go run ./examples/threatlist-sync
//
// With -endpoint it syncs one list from a real server into -db, once:
//
//	WEBRISK_API_KEY=... go run ./examples/threatlist-sync -endpoint https://webrisk.googleapis.com -db malware
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
)

func main() {
	endpoint := flag.String("endpoint", "", "a Web Risk API base URL (default: a local list server)")
	dir := flag.String("db", "", "the index directory (with -endpoint)")
	threatType := flag.String("threat-type", "MALWARE", "the list")
	flag.Parse()
	var err error
	if *endpoint != "" {
		err = syncOnce(context.Background(), os.Stdout, *endpoint, os.Getenv("WEBRISK_API_KEY"), *dir, *threatType)
	} else {
		err = run(os.Stdout)
	}
	if err != nil {
		log.Fatal("threatlist-sync: ", err)
	}
}

// syncOnce syncs the list of threatType from endpoint into dir.
func syncOnce(ctx context.Context, w io.Writer, endpoint, key, dir, threatType string) error {
	if dir == "" {
		return fmt.Errorf("-db DIR is required with -endpoint")
	}
	db, err := index.Open(dir, &index.Options{Profile: query.ProfileRecord(safebrowsing.WebRisk)})
	if err != nil {
		return err
	}
	defer db.Close()
	lists, err := threatlist.Open(ctx, db)
	if err != nil {
		return err
	}
	c := &threatlist.Client{Endpoint: endpoint, Key: key}
	u, err := lists.SyncWebRisk(context.Background(), c, threatlist.DiffRequest{ThreatType: threatType})
	if err != nil {
		return err
	}
	s := lists.State(threatlist.WebRiskName(threatType))
	fmt.Fprintf(w, "reset %v, +%d -%d, %d entries, next sync at %s\n", u.Reset, u.Additions.Len(), len(u.Removals), s.List.Len(), u.Next)
	return nil
}

// run is the example against a local list server; it writes what it
// shows to w.
func run(w io.Writer) error {
	ctx := context.Background()
	// The list server: a urlhash server over an index of 4-byte prefixes
	// of listed expressions. It answers computeDiff from them.
	profile := query.ProfileRecord(safebrowsing.WebRisk)
	src, err := index.Open("", &index.Options{InMemory: true, Profile: profile})
	if err != nil {
		return err
	}
	defer src.Close()
	list := func(expr string) error {
		h := hashkey.Sum([]byte(expr))
		return src.PutPrefix(ctx, h[:4], store.Value{})
	}
	for _, e := range []string{"malware.example/", "phish.example.net/login/"} {
		if err := list(e); err != nil {
			return err
		}
	}
	// ListRefresh -1: the server reads its index at every request (by
	// default, at most every 10 seconds), so the change below shows at once.
	ts := httptest.NewServer(server.New(src, &server.Options{ThreatType: "MALWARE", ListRefresh: -1}))
	defer ts.Close()

	// The client's index, in a directory: the list's state (version
	// token, checksum, previous versions) is kept beside it.
	dir, err := os.MkdirTemp("", "threatlist-sync-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := index.Open(dir, &index.Options{Profile: profile})
	if err != nil {
		return err
	}
	defer db.Close()
	lists, err := threatlist.Open(ctx, db)
	if err != nil {
		return err
	}
	c := &threatlist.Client{Endpoint: ts.URL}
	ix, err := query.New(ctx, db, nil)
	if err != nil {
		return err
	}
	sync := func() error {
		u, err := lists.SyncWebRisk(context.Background(), c, threatlist.DiffRequest{ThreatType: "MALWARE"})
		if err != nil {
			return err
		}
		kind := "DIFF"
		if u.Reset {
			kind = "RESET"
		}
		n := lists.State(threatlist.WebRiskName("MALWARE")).List.Len()
		fmt.Fprintf(w, "sync: %s +%d -%d, the list holds %d prefixes\n", kind, u.Additions.Len(), len(u.Removals), n)
		return nil
	}
	lookup := func(url string) error {
		hits, err := ix.Lookup(ctx, url, safebrowsing.WebRisk)
		if err != nil {
			return err
		}
		if len(hits) == 0 {
			fmt.Fprintf(w, "  %s: not listed\n", url)
		}
		for _, h := range hits {
			fmt.Fprintf(w, "  %s: listed (%s, %d-byte prefix)\n", url, h.Expression, h.Len)
		}
		return nil
	}
	urls := []string{"http://www.malware.example/x.exe", "https://phish.example.net/login/form", "https://new-threat.example/"}
	if err := sync(); err != nil {
		return err
	}
	for _, u := range urls {
		if err := lookup(u); err != nil {
			return err
		}
	}
	// The list changes: one expression goes, another comes.
	gone := hashkey.Sum([]byte("malware.example/"))
	if err := src.Delete(ctx, store.Entry{Hash: gone, Len: 4}); err != nil {
		return err
	}
	if err := list("new-threat.example/"); err != nil {
		return err
	}
	if err := sync(); err != nil {
		return err
	}
	for _, u := range urls {
		if err := lookup(u); err != nil {
			return err
		}
	}
	return nil
}
