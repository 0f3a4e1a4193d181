package index

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// newestKeyTableLog returns the newest log segment of the key table of
// the index in dir.
func newestKeyTableLog(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, keyTableDir, "*.log"))
	if len(logs) == 0 {
		t.Fatal("no key table log segment")
	}
	slices.Sort(logs)
	return logs[len(logs)-1]
}

// TestKeyTableLostLogRefused: as for Badger's memtable logs
// (TestLostMemtableRefused), a key table log segment cut or removed after
// a crash loses acknowledged keys: Open refuses the index, naming the
// segment, "urlhash recover" and the file to remove to accept the loss.
// A torn tail of writes never acknowledged (no Sync) is accepted.
func TestKeyTableLostLogRefused(t *testing.T) {
	ctx := context.Background()
	cutTo := func(n int64) func(string) error {
		return func(name string) error {
			fi, err := os.Stat(name)
			if err != nil {
				return err
			}
			return os.Truncate(name, min(n, fi.Size()))
		}
	}
	tests := []struct {
		name    string
		unacked bool // a batch added after the Sync, before the crash
		damage  func(name string) error
		refused bool
		keys    int64 // after Open
	}{
		{"whole", false, func(string) error { return nil }, false, 100},
		{"acknowledged records cut at a record's end", false, cutTo(8), true, 0},
		{"acknowledged record torn", false, func(name string) error {
			fi, _ := os.Stat(name)
			return os.Truncate(name, fi.Size()-5)
		}, true, 0},
		{"segment removed", false, os.Remove, true, 0},
		{"unacknowledged batch torn", true, func(name string) error {
			fi, _ := os.Stat(name)
			return os.Truncate(name, fi.Size()-5)
		}, false, 100},
	}
	hs := randHashes(rand.New(rand.NewPCG(23, 1)), 101)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := mustOpen(t, dir, &Options{KeyTable: true})
			if _, err := db.AddBatch(ctx, entriesOf(hs[:100])); err != nil {
				t.Fatal(err)
			}
			if err := db.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.unacked {
				if _, err := db.AddBatch(ctx, entriesOf(hs[100:])); err != nil {
					t.Fatal(err)
				}
			}
			crashed := copyDir(t, dir) // the process dies here
			db.Close()
			seg := newestKeyTableLog(t, crashed)
			if err := tc.damage(seg); err != nil {
				t.Fatal(err)
			}
			db, err := Open(crashed, nil)
			if tc.refused {
				synced := filepath.Join(crashed, keyTableDir, "SYNCED")
				if err == nil {
					db.Close()
				}
				if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), seg) ||
					!strings.Contains(err.Error(), "urlhash recover --db "+crashed) || !strings.Contains(err.Error(), "remove "+synced) {
					t.Fatalf("Open = %v\nwant ErrCorrupt naming %s, urlhash recover and %s", err, seg, synced)
				}
				// Recover copies what is left and says what it found.
				to := filepath.Join(t.TempDir(), "recovered")
				rep, rerr := Recover(crashed, to, nil)
				if rerr != nil {
					t.Fatalf("Recover: %v", rerr)
				}
				if !rep.Lost || !slices.ContainsFunc(rep.Files, func(f RecoverFile) bool {
					return f.Name == keyTableDir+"/"+filepath.Base(seg) && (f.Lost > 0 || f.LostUnknown)
				}) {
					t.Errorf("Recover's report does not name %s as lost: %+v", filepath.Base(seg), rep.Files)
				}
				// Removing the file accepts the loss.
				if err := os.Remove(synced); err != nil {
					t.Fatal(err)
				}
				db, err = Open(crashed, nil)
			}
			if err != nil {
				t.Fatalf("Open = %v", err)
			}
			defer db.Close()
			s, err := db.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.Entries != tc.keys {
				t.Errorf("Entries = %d, want %d", s.Entries, tc.keys)
			}
			if err := db.Verify(ctx); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
}

// TestKeyTableRemovedRefused: an index that records a key table whose
// directory is gone is refused, not opened with an empty key table.
func TestKeyTableRemovedRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{KeyTable: true})
	if _, err := db.AddBatch(ctx, entriesOf(randHashes(rand.New(rand.NewPCG(23, 4)), 10))); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, keyTableDir)); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		db, err := Open(dir, &Options{ReadOnly: ro})
		if err == nil {
			db.Close()
		}
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "MANIFEST") || !strings.Contains(err.Error(), "urlhash recover") {
			t.Errorf("Open(read-only %v) = %v, want ErrCorrupt naming the key table's MANIFEST", ro, err)
		}
	}
}
