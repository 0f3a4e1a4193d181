package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

// TestRecoverKeyTableRecords: Recover copies the idempotency records,
// those in Badger and those only in the key table's log (a crash between
// the log and Badger, see TestKeyTableRecordCrash): a retried batch gets
// its first answer from the copy, not a new one.
func TestRecoverKeyTableRecords(t *testing.T) {
	ctx := context.Background()
	hs := randHashes(rand.New(rand.NewPCG(23, 2)), 3)
	rec := func(key string) *Record {
		return &Record{Key: key, TTL: time.Hour, Answer: func(added []bool) []byte { return fmt.Appendf(nil, "%s %v", key, added) }}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, db *DB, dir string) string // returns the directory to recover
	}{
		{"in the log and Badger, crashed", func(t *testing.T, db *DB, dir string) string {
			return copyDir(t, dir)
		}},
		{"in the log only, crashed", func(t *testing.T, db *DB, dir string) string {
			db.st.testRecordCrash = func() error { return errors.New("crash") }
			db.AddBatchRecorded(ctx, entriesOf(hs[2:]), rec("batch-2")) // its record reaches the log only
			return copyDir(t, dir)
		}},
		{"merged into Badger, closed", func(t *testing.T, db *DB, dir string) string {
			db.Close()
			mustOpen(t, dir, nil).Close() // Open merges the log
			return dir
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "src")
			db := mustOpen(t, dir, &Options{KeyTable: true})
			defer db.Close()
			if _, err := db.AddBatchRecorded(ctx, entriesOf(hs[:2]), rec("batch-1")); err != nil {
				t.Fatal(err)
			}
			if err := db.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			src := tc.setup(t, db, dir)
			to := filepath.Join(t.TempDir(), "recovered")
			if _, err := Recover(src, to, nil); err != nil {
				t.Fatalf("Recover: %v", err)
			}
			got := mustOpen(t, to, nil)
			defer got.Close()
			want := map[string]string{"batch-1": "batch-1 [true true]"}
			if db.st.testRecordCrash != nil {
				want["batch-2"] = "batch-2 [true]"
			}
			for key, w := range want {
				b, ok, err := got.Recorded(key)
				if err != nil || !ok || string(b) != w {
					t.Errorf("Recorded(%s) after Recover = %q, %v, %v; want %q", key, b, ok, err, w)
				}
			}
			if s, _ := got.Stats(ctx); s.Entries != int64(1+len(want)) {
				t.Errorf("Entries = %d, want %d", s.Entries, 1+len(want))
			}
		})
	}
}
