package index

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// listedTables returns the tables dir's MANIFEST lists.
func listedTables(t *testing.T, dir string) []integrity.Table {
	t.Helper()
	s, err := integrity.Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	bo := (&Options{}).withDefaults()
	b := bo.badgerOptions(dir)
	b.ReadOnly = true
	tables, err := integrity.Check(dir, &s, &b, isSnapshotKey)
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

// A new index writes uncompressed tables; an index written with a codec
// keeps it when later writers do not name one; naming another switches
// the tables written from then on. Every entry reads back throughout.
func TestCompressionKept(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name  string
		first string // Compression of the first writer
		later string // of the second
		want  options.CompressionType
	}{
		{"default", "", "", options.None},
		{"snappy kept", "snappy", "", options.Snappy},
		{"zstd kept", "zstd", "", options.ZSTD},
		{"switched", "snappy", "none", options.None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			keys := randHashes(r, 3000)
			db := mustOpen(t, dir, &Options{Compression: tc.first, NoKeyTable: true}) // Badger's tables
			if _, err := db.Load(ctx, slices.Values(entriesOf(keys[:2000]))); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = mustOpen(t, dir, &Options{Compression: tc.later})
			for _, h := range keys[2000:] {
				if err := db.Put(ctx, h, store.Value{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil { // flushes level 0 (CompactL0OnClose)
				t.Fatal(err)
			}
			tables := listedTables(t, dir)
			if len(tables) < 2 {
				t.Fatalf("%d tables, want the load's and the later writes'", len(tables))
			}
			if got := codecOf(tables); got != tc.want {
				t.Fatalf("newest table's codec %v, want %v (all: %v)", got, tc.want, tables)
			}
			db = mustOpen(t, dir, &Options{ReadOnly: true})
			defer db.Close()
			found, err := db.HasBatch(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			for i, ok := range found {
				if !ok {
					t.Fatalf("key %d lost", i)
				}
			}
		})
	}
}

// An unknown codec is refused as invalid options, by name, before the
// directory is created.
func TestCompressionRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	db, err := Open(dir, &Options{Compression: "lz4"})
	if err == nil {
		db.Close()
		t.Fatal("Compression lz4 accepted")
	}
	if !errors.Is(err, store.ErrInvalidOptions) || !strings.Contains(err.Error(), `"lz4"`) {
		t.Fatalf("Open(Compression lz4) = %v, want store.ErrInvalidOptions naming \"lz4\"", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("refused Open left %s behind (stat: %v)", dir, err)
	}
}
