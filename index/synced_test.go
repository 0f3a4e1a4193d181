package index

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// TestLostMemtableRefused: a crashed index (a copy of the directory of an
// open index after Sync) whose memtable log is deleted or cut loses
// acknowledged writes; Open refuses it, naming the log and the way to
// recover (issue 21, item 4). The untouched copy opens with every key.
func TestLostMemtableRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{MemTableSize: 1 << 20, NoKeyTable: true}) // Badger's memtables
	defer db.Close()
	hs := randHashes(rand.New(rand.NewPCG(21, 21)), 2000)
	if _, err := db.AddBatch(ctx, entriesOf(hs)); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, mem string)
	}{
		{"untouched", nil},
		{"deleted", func(t *testing.T, mem string) {
			if err := os.Remove(mem); err != nil {
				t.Fatal(err)
			}
		}},
		{"cut", func(t *testing.T, mem string) {
			if err := os.Truncate(mem, 4096); err != nil {
				t.Fatal(err)
			}
		}},
		{"emptied", func(t *testing.T, mem string) {
			if err := os.Truncate(mem, 0); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			crashed := copyDir(t, dir)
			mems, _ := filepath.Glob(filepath.Join(crashed, "*.mem"))
			if len(mems) == 0 {
				t.Fatal("no memtable log in the crashed copy")
			}
			if c.damage != nil {
				for _, m := range mems {
					c.damage(t, m)
				}
			}
			got, err := Open(crashed, nil)
			if c.damage == nil {
				if err != nil {
					t.Fatalf("Open of the untouched copy: %v", err)
				}
				defer got.Close()
				found, err := got.HasBatch(ctx, hs)
				if err != nil {
					t.Fatal(err)
				}
				for i, ok := range found {
					if !ok {
						t.Fatalf("key %d lost in the untouched copy", i)
					}
				}
				return
			}
			if err == nil {
				got.Close()
				t.Fatal("Open of a copy that lost its memtable log succeeded")
			}
			if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), ".mem") || !strings.Contains(err.Error(), "urlhash recover --db "+crashed) {
				t.Errorf("Open = %v; want ErrCorrupt naming the memtable log and urlhash recover", err)
			}
			// Removing the record, as the error says, accepts the loss.
			if err := os.Remove(filepath.Join(crashed, syncedFileName)); err != nil {
				t.Fatal(err)
			}
			if got, err = Open(crashed, nil); err != nil {
				t.Fatalf("Open after removing %s: %v", syncedFileName, err)
			}
			got.Close()
		})
	}
}

// TestDamagedKeyRegistryNamed: a damaged KEYREGISTRY is an error wrapping
// store.ErrCorrupt that names the file and urlhash recover, not Badger's
// bare "Encryption key mismatch" (issue 21, item 12).
func TestDamagedKeyRegistryNamed(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	if err := db.Put(context.Background(), hashOf("k"), store.Value{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"sanity text flipped", func(b []byte) []byte { b[20] ^= 0xff; return b }},
		{"cut in the sanity text", func(b []byte) []byte { return b[:20] }},
		{"cut in the IV", func(b []byte) []byte { return b[:8] }},
		{"a damaged data key", func(b []byte) []byte { return append(b, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := copyDir(t, dir)
			name := filepath.Join(d, "KEYREGISTRY")
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{false, true} {
				db, err := Open(d, &Options{ReadOnly: ro})
				if err == nil {
					db.Close()
					t.Fatalf("Open (read-only %v) of a damaged KEYREGISTRY succeeded", ro)
				}
				if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "urlhash recover") {
					t.Errorf("Open (read-only %v) = %v; want ErrCorrupt naming %s and urlhash recover", ro, err, name)
				}
			}
		})
	}
}
