package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// valueLogs returns the value-log files of dir by number, oldest first.
func valueLogs(t *testing.T, dir string) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	slices.SortFunc(names, func(a, b string) int {
		x, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(a), ".vlog"))
		y, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(b), ".vlog"))
		return x - y
	})
	return names
}

// TestHeaderlessValueLog: every writable Open makes Badger create a new
// value log (it never appends to an old one), sized and given its 20-byte
// header through a memory map; a power loss soon after can keep the file
// with 0 bytes (its creation reached the disk, its size and header did
// not), and Badger refuses it ("Open existing file: … Create a new file":
// 9 of 24 direct power losses under LazyFS). A newest value log without its
// header holds nothing acknowledged (see integrity's repairValueLogs): a
// writable Open gives it its header and opens with every entry; a
// read-only one says the index needs a writable open. An older value log
// without a header lost values a sync acknowledged: refused, named.
func TestHeaderlessValueLog(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		size   int  // the file's bytes, all zero
		older  bool // an older value log, not the newest
		refuse bool
	}{
		{name: "newest, 0 bytes", size: 0},
		{name: "newest, header cut", size: 7},
		{name: "newest, sized, no header", size: 1 << 20},
		{name: "older, 0 bytes", size: 0, older: true, refuse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := mustOpen(t, dir, &Options{valueThreshold: 4 << 10})
			big := bytes.Repeat([]byte("v"), 6000) // over the value threshold: in the value log
			hs := randHashes(rand.New(rand.NewPCG(7, 8)), 50)
			for i, h := range hs {
				v := store.Value{}
				if i%10 == 0 {
					v.Text = big
				}
				if err := db.Put(ctx, h, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			logs := valueLogs(t, dir)
			last, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(logs[len(logs)-1]), ".vlog"))
			name := filepath.Join(dir, fmt.Sprintf("%06d.vlog", last+1))
			if tc.older {
				// A value log older than the newest lost its size and
				// header; a newer one follows it.
				name = logs[len(logs)-1]
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%06d.vlog", last+1)), make([]byte, integrity.LogHeaderSize), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(name, make([]byte, tc.size), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.refuse {
				_, err := Open(dir, nil)
				if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(name)) || !strings.Contains(err.Error(), "urlhash recover") {
					t.Fatalf("Open with an older value log of %d bytes: %v, want ErrCorrupt naming %s and recover", tc.size, err, filepath.Base(name))
				}
				return
			}
			if tc.size == 0 {
				if _, err := Open(dir, &Options{ReadOnly: true}); !errors.Is(err, store.ErrNeedsRecovery) {
					t.Fatalf("read-only Open: %v, want ErrNeedsRecovery", err)
				}
			}
			db, err := Open(dir, nil)
			if err != nil {
				t.Fatalf("writable Open: %v", err)
			}
			for i, h := range hs {
				v, err := db.Get(ctx, h)
				if err != nil || (i%10 == 0) != (len(v.Text) == len(big)) {
					t.Fatalf("Get %d after the Open: %d bytes, %v", i, len(v.Text), err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = mustOpen(t, dir, &Options{ReadOnly: true})
			db.Close()
		})
	}
}
