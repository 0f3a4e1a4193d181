package frontier

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/urlhash/urlhash/internal/fakeclock"
)

// openTest opens a frontier in a new directory on clock (nil: a new fake
// clock at fakeclock.Start) and closes it at the end of the test.
func openTest(t testing.TB, clock *fakeclock.Clock) (*Frontier, *fakeclock.Clock, string) {
	t.Helper()
	if clock == nil {
		clock = fakeclock.New(fakeclock.Start())
	}
	dir := filepath.Join(t.TempDir(), "frontier")
	f := reopen(t, dir, clock)
	return f, clock, dir
}

func reopen(t testing.TB, dir string, clock *fakeclock.Clock) *Frontier {
	t.Helper()
	f, err := Open(dir, &Options{now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// waitRecount waits for the background recount of a reopened frontier.
func waitRecount(f *Frontier) { f.recountWG.Wait() }

func discovered(crawl string, urls ...string) []Item {
	var items []Item
	for _, u := range urls {
		items = append(items, Item{Info: URLInfo{URL: u, Crawl: crawl}})
	}
	return items
}

func mustPut(t testing.TB, f *Frontier, items []Item) []PutResult {
	t.Helper()
	res, err := f.Put(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustGet(t testing.TB, f *Frontier, p GetParams) []string {
	t.Helper()
	hs, err := f.GetURLs(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hs {
		out = append(out, h.Info.URL)
	}
	return out
}

var _ = time.Second
