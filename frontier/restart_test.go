package frontier

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/urlhash/urlhash/internal/fakeclock"
)

// TestGetBeforeRecount: a reopened frontier hands out URLs before it has
// counted its queues (a restart answers at once), and the recount that
// follows keeps what was handed out meanwhile in transit.
func TestGetBeforeRecount(t *testing.T) {
	clock := fakeclock.New(fakeclock.Start())
	dir := filepath.Join(t.TempDir(), "frontier")
	f := reopen(t, dir, clock)
	var items []Item
	for i := range 2000 {
		items = append(items, Item{Info: URLInfo{URL: fmt.Sprintf("https://h%d.example/%d", i%200, i)}})
	}
	mustPut(t, f, items)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(dir, &Options{now: clock.Now, noRecount: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := mustGet(t, f, GetParams{MaxQueues: 10, MaxPerQueue: 1}); len(got) != 10 {
		t.Fatalf("before the recount: handed out %d URLs, want 10", len(got))
	}
	if s, _ := f.Stats("", ""); s.InTransit != 10 || s.Queues != 200 {
		t.Errorf("before the recount: %+v, want 10 in transit in 200 queues", s)
	}
	f.recountWG.Add(1)
	f.recount()
	s, _ := f.Stats("", "")
	if s.Size != 2000 || s.InTransit != 10 || s.Recounting {
		t.Errorf("after the recount: %+v, want size 2000 with 10 in transit", s)
	}
	ctx := context.Background()
	if _, err := f.Complete(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
}
