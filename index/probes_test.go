package index

import (
	"context"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestFilterProbes: Stats counts each lookup the filter answered "absent",
// each it let through that was found, and each false positive.
func TestFilterProbes(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, true, nil)
	stored := hashOf("stored")
	if err := db.Put(ctx, stored, store.Value{}); err != nil {
		t.Fatal(err)
	}
	absent := stored
	absent[0] ^= 0xff // another leading byte: the filter says "absent"
	twin := stored
	twin[hashkey.Size-1] ^= 0xff // the same leading bits: a false positive
	type counts struct{ absent, found, fp int64 }
	tests := []struct {
		name string
		op   func() error
		want counts
	}{
		{"get stored", func() error { _, err := db.Get(ctx, stored); return err }, counts{0, 1, 0}},
		{"get absent", func() error { db.Get(ctx, absent); return nil }, counts{1, 0, 0}},
		{"get twin", func() error { db.Get(ctx, twin); return nil }, counts{0, 0, 1}},
		{"has", func() error {
			for _, h := range []hashkey.Hash{stored, absent, twin} {
				if _, err := db.Has(ctx, h); err != nil {
					return err
				}
			}
			return nil
		}, counts{1, 1, 1}},
		{"has batch", func() error {
			_, err := db.HasBatch(ctx, []hashkey.Hash{stored, absent, twin, absent})
			return err
		}, counts{2, 1, 1}},
		{"has batch all absent", func() error { _, err := db.HasBatch(ctx, []hashkey.Hash{absent}); return err }, counts{1, 0, 0}},
		{"match", func() error {
			for _, h := range []hashkey.Hash{stored, absent, twin} {
				if _, _, err := db.Match(ctx, h); err != nil {
					return err
				}
			}
			return nil
		}, counts{1, 1, 1}},
		{"add batch", func() error {
			_, err := db.AddBatch(ctx, []store.Entry{store.FullEntry(stored, store.Value{}), store.FullEntry(twin, store.Value{})})
			return err
		}, counts{0, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, err := db.DetailedStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.op(); err != nil {
				t.Fatal(err)
			}
			after, err := db.DetailedStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := counts{after.FilterAbsent - before.FilterAbsent, after.FilterFound - before.FilterFound,
				after.FilterFalsePositives - before.FilterFalsePositives}
			if got != tc.want {
				t.Errorf("absent, found, false positives: got %v, want %v", got, tc.want)
			}
		})
	}
}
