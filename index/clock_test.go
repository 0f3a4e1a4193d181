package index_test

import (
	"context"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/clockhook"
	"github.com/urlhash/urlhash/internal/fakeclock"
	"github.com/urlhash/urlhash/store"
)

// TestClockHook checks that internal/clockhook, the way the module's tests
// outside this package set the index's clock, governs expiry.
func TestClockHook(t *testing.T) {
	clock := fakeclock.New(fakeclock.Start())
	o := &index.Options{InMemory: true}
	clockhook.SetIndex(o, clock.Now)
	db, err := index.Open("", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := hashkey.Sum([]byte("https://example.com/"))
	if err := db.Put(context.Background(), h, store.Value{Expires: clock.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		advance time.Duration
		want    bool
	}{{0, true}, {time.Hour - time.Second, true}, {time.Second, false}} {
		clock.Advance(tc.advance)
		if got, err := db.Has(context.Background(), h); err != nil || got != tc.want {
			t.Errorf("at %v: Has = %v, %v, want %v", clock.Now(), got, err, tc.want)
		}
	}
}
