package backend_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestCancelledContext: on every backend, every method that can block
// returns an error wrapping context.Canceled when its context is
// cancelled, and writes nothing.
func TestCancelledContext(t *testing.T) {
	for _, b := range scenarioBackends {
		t.Run(b.name, func(t *testing.T) {
			db, err := b.setup(t, time.Now)()
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			h := hashkey.Sum([]byte("x"))
			e := store.FullEntry(h, store.Value{})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			calls := map[string]error{
				"PutBatch":        db.PutBatch(ctx, []store.Entry{e}),
				"Delete":          db.Delete(ctx, e),
				"Scan":            db.Scan(ctx, nil, 0, 0, func(store.Entry) error { return nil }),
				"Verify":          db.Verify(ctx),
				"SetProfile":      db.SetProfile(ctx, "p"),
				"store.Put":       store.Put(ctx, db, h, store.Value{}),
				"store.PutPrefix": store.PutPrefix(ctx, db, h[:4], store.Value{}),
			}
			_, calls["Get"] = db.Get(ctx, h)
			_, calls["HasBatch"] = db.HasBatch(ctx, []hashkey.Hash{h})
			_, calls["AddBatch"] = db.AddBatch(ctx, []store.Entry{e})
			_, calls["store.Add"] = store.Add(ctx, db, h, store.Value{})
			_, calls["VisitBatch"] = db.VisitBatch(ctx, []store.Entry{e}, time.Hour)
			_, _, calls["Match"] = db.Match(ctx, h)
			_, _, calls["Count"] = db.Count(ctx, nil, 0)
			_, _, calls["DeletePrefix"] = db.DeletePrefix(ctx, h[:1], 8)
			_, calls["Load"] = db.Load(ctx, slices.Values([]store.Entry{e}))
			_, calls["Stats"] = db.Stats(ctx)
			for name, err := range calls {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("%s with a cancelled context: %v, want context.Canceled", name, err)
				}
			}
			bg := context.Background()
			if n, p, err := db.Count(bg, nil, 0); n != 0 || p != 0 || err != nil {
				t.Errorf("Count after the cancelled writes = %d, %d, %v; want nothing stored", n, p, err)
			}
			if p, err := db.Profile(bg); p != "" || err != nil {
				t.Errorf("Profile after a cancelled SetProfile = %q, %v", p, err)
			}
		})
	}
}
