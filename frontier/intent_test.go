package frontier

import (
	"context"
	"slices"
	"testing"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// TestRepair: Open repairs what a power loss may leave of an
// unacknowledged put whose intent survived: records without their due
// keys (one in a queue whose meta entry was lost too) are queued again, a
// record that says completed without its done key is completed, an intent
// naming a URL whose record was lost repairs nothing; the intents are
// deleted. Without the repair the URLs are known (a put answers present)
// and never handed out.
func TestRepair(t *testing.T) {
	f, clock, dir := openTest(t, nil)
	ctx := context.Background()
	urls := []string{"https://a.example/1", "https://a.example/2", "https://b.example/1", "https://c.example/1"}
	mustPut(t, f, discovered("", urls...))
	mustPut(t, f, []Item{{Info: URLInfo{URL: "https://a.example/done"}, Known: true}})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// What a power loss leaves: a.example/2's due key, a.example/done's
	// done key, b.example's meta entry and b.example/1's due key lost,
	// the record of c.example/2 (never acknowledged) lost with its due
	// key; the intents of the puts kept.
	db, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := countIntents(t, db); n != 0 {
		t.Fatalf("%d intents left by the puts", n)
	}
	id := func(url string) uid {
		p, err := f.prepare(&Item{Info: URLInfo{URL: url}})
		if err != nil {
			t.Fatal(err)
		}
		return p.u
	}
	var lose []store.Entry
	for _, url := range []string{"https://a.example/2", "https://b.example/1", "https://c.example/1"} {
		lose = append(lose, dueEntries(t, db, id(url))...)
	}
	_, da := queueHashes(DefaultCrawl, "a.example")
	lose = append(lose, store.FullEntry(doneKey(da, id("https://a.example/done")), store.Value{}),
		store.FullEntry(metaKey(tagQueue, DefaultCrawl, "b.example"), store.Value{}),
		store.FullEntry(recordKey(id("https://c.example/1")), store.Value{}))
	if n, err := db.DeleteBatch(ctx, lose); err != nil || n != len(lose) {
		t.Fatalf("deleted %d of %d: %v", n, len(lose), err)
	}
	g := &Frontier{intentSeq: 1}
	in1 := g.intentLocked([]uid{id("https://a.example/1"), id("https://a.example/2"), id("https://b.example/1"), id("https://c.example/1")})
	in2 := g.intentLocked([]uid{id("https://a.example/done")})
	if err := db.PutBatch(ctx, []store.Entry{in1, in2}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	f = reopen(t, dir, clock)
	waitRecount(f)
	if n := countIntents(t, f.db); n != 0 {
		t.Errorf("%d intents left after the repair", n)
	}
	s, _ := f.Stats("", "")
	if s.Size != 3 || s.Completed != 1 || s.Queues != 3 {
		t.Errorf("after the repair: %+v, want 3 queued and 1 completed in 3 queues", s)
	}
	got := mustGet(t, f, GetParams{})
	slices.Sort(got)
	if want := []string{"https://a.example/1", "https://a.example/2", "https://b.example/1"}; !slices.Equal(got, want) {
		t.Errorf("handed out %q, want %q", got, want)
	}
	res := mustPut(t, f, discovered("", "https://c.example/1", "https://a.example/done"))
	if res[0].Status != PutNew || res[1].Status != PutPresent {
		t.Errorf("put again: %+v, want c.example/1 new, a.example/done present", res)
	}
	if it, err := f.URLStatus(ctx, "", "https://a.example/done"); err != nil || !it.IsCompleted() {
		t.Errorf("a.example/done: %+v %v, want completed", it, err)
	}
}

// dueEntries returns the due keys of u in db.
func dueEntries(t *testing.T, db *index.DB, u uid) []store.Entry {
	t.Helper()
	var out []store.Entry
	err := db.ForEach(context.Background(), func(e store.Entry) error {
		if e.Value.IsZero() && e.Hash[0]|e.Hash[1]|e.Hash[2]|e.Hash[3] != 0 && [16]byte(e.Hash[16:]) == u {
			out = append(out, store.FullEntry(e.Hash, store.Value{}))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d due keys of %x", len(out), u)
	}
	return out
}

// countIntents counts the intent entries in a frontier's index.
func countIntents(t *testing.T, db *index.DB) int {
	t.Helper()
	n := 0
	err := db.Scan(context.Background(), make([]byte, 4), metaBits, 0, func(e store.Entry) error {
		if d := e.Value.Data; len(d) > 0 && d[0] == tagIntent {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
