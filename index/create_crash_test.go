package index

import (
	"context"
	"errors"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// TestCreateCrash: a crash while Open creates an index, after Badger holds
// its metadata (the identity is synced) and before the key table exists,
// leaves an index that the next Open finishes creating: with a key table,
// format 3. (Format 1 recorded before the key table would open for good as
// an index without one: every entry in Badger, its large values in the
// value log.)
func TestCreateCrash(t *testing.T) {
	ctx := context.Background()
	errCrash := errors.New("crash")
	for _, tc := range []struct {
		name       string
		noKeyTable bool
		format     int
	}{
		{"key table", false, formatValues},
		{"no key table", true, formatBadger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var crashed string
			_, err := Open(dir, &Options{NoKeyTable: tc.noKeyTable, createCrash: func() error {
				crashed = copyDir(t, dir)
				return errCrash
			}})
			if !errors.Is(err, errCrash) || crashed == "" {
				t.Fatalf("Open with a crash in the creation: %v", err)
			}
			for _, d := range []string{crashed, dir} {
				db := mustOpen(t, d, nil)
				h := hashOf("after the crash")
				if err := db.PutBatch(ctx, []store.Entry{store.FullEntry(h, store.Value{Text: []byte("t")})}); err != nil {
					t.Fatal(err)
				}
				st, err := db.Stats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.FormatVersion != tc.format || db.st.hasKeyTable() == tc.noKeyTable {
					t.Errorf("%s: format %d, key table %v; want format %d", d, st.FormatVersion, db.st.hasKeyTable(), tc.format)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db = mustOpen(t, d, nil)
				if st, err := db.Stats(ctx); err != nil || st.FormatVersion != tc.format || st.Entries != 1 {
					t.Errorf("%s reopened: %+v, %v", d, st, err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
