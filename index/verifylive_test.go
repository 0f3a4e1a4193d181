package index

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// writeClosed writes 1000 random keys (rand.NewPCG(seed, seed+1)) to a new
// index in dir and closes it, so that its tables are on disk; it returns
// the closed DB.
func writeClosed(t *testing.T, dir string, seed uint64) *DB {
	t.Helper()
	db := mustOpen(t, dir, nil)
	if err := db.PutBatch(context.Background(), entriesOf(randHashes(rand.New(rand.NewPCG(seed, seed+1)), 1000))); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return db
}

// Verify of a writable index reports a table file the MANIFEST does not
// list, unless this process holds it open (a table a compaction is
// writing, or one it replaced whose last reader is not done): those are
// Badger's, and TestDiskFullTmpfs saw them fail Verify about once in ten
// runs.
func TestVerifyUnlistedTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeClosed(t, dir, 93)
	db := mustOpen(t, dir, nil)
	defer db.Close()
	b, err := os.ReadFile(largestTable(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	// Badger numbers its tables from 1: 0 is never listed.
	orphan := table.NewFilename(0, dir)
	if err := os.WriteFile(orphan, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		f, err := os.Open(orphan)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Verify(ctx)
		f.Close()
		if err != nil {
			t.Fatalf("Verify with an unlisted table this process holds open: %v", err)
		}
	}
	err = db.Verify(ctx)
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "000000.sst not listed in MANIFEST") {
		t.Fatalf("Verify with an unlisted table nobody holds open = %v, want store.ErrCorrupt naming 000000.sst", err)
	}
	if err := os.Remove(orphan); err != nil {
		t.Fatal(err)
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatalf("Verify once the table is gone: %v", err)
	}
}

// A table file cut to nothing while integrity.WithTable has it mapped (Badger
// deleting a table a compaction replaced, while Verify reads it) is an
// error, not a fault that kills the process.
func TestWithTableFileCutShort(t *testing.T) {
	dir := t.TempDir()
	db := writeClosed(t, dir, 95)
	p := largestTable(t, dir)
	err := integrity.WithTable(p, db.bo.Compression, db.bo.BlockSize, options.OnBlockRead, func(tb *table.Table) error {
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
		return integrity.VerifyBlocks(tb)
	})
	if err == nil {
		t.Fatal("integrity.WithTable of a table cut short under it = nil")
	}
}
