package index

import (
	"context"
	"errors"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestCancelLongLoops: a scan and a load cancelled midway stop within
// ctxEvery keys (Badger takes no context), and the load stores nothing;
// in memory (Badger alone) and on disk (key-only entries in the key
// table, whose scan loop checks the context too).
func TestCancelLongLoops(t *testing.T) {
	for _, mem := range []bool{true, false} {
		t.Run(map[bool]string{true: "memory", false: "key table"}[mem], func(t *testing.T) {
			cancelLongLoops(t, mem)
		})
	}
}

func cancelLongLoops(t *testing.T, mem bool) {
	db := openTestDB(t, mem, nil)
	bg := context.Background()
	const n = 5 * ctxEvery
	es := make([]store.Entry, n)
	for i := range es {
		es[i] = store.FullEntry(hashkey.Sum([]byte{byte(i), byte(i >> 8)}), store.Value{})
	}
	if _, err := db.AddBatch(bg, es); err != nil { // key-only: the key table on disk
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(bg)
	seen := 0
	err := db.Scan(ctx, nil, 0, 0, func(store.Entry) error {
		if seen++; seen == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen > 10+ctxEvery {
		t.Errorf("Scan cancelled at entry 10: %v after %d entries; want context.Canceled within %d", err, seen, 10+ctxEvery)
	}

	other := openTestDB(t, mem, nil)
	ctx, cancel = context.WithCancel(bg)
	fed := 0
	_, err = other.Load(ctx, func(yield func(store.Entry) bool) {
		for _, e := range es {
			if fed++; fed == 10 {
				cancel()
			}
			if !yield(e) {
				return
			}
		}
	})
	if !errors.Is(err, context.Canceled) || fed > 10+ctxEvery {
		t.Errorf("Load cancelled at entry 10: %v after %d entries; want context.Canceled within %d", err, fed, 10+ctxEvery)
	}
	if full, _, err := other.Count(bg, nil, 0); full != 0 || err != nil {
		t.Errorf("Count after the cancelled load = %d, %v; want 0", full, err)
	}
}
