package index

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/urlhash/urlhash/store"
)

// listedTables returns the tables dir's MANIFEST lists.
func listedTables(t *testing.T, dir string) []tableFile {
	t.Helper()
	s, err := inspectDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	bo := (&Options{}).withDefaults()
	b := bo.badgerOptions(dir)
	b.ReadOnly = true
	tables, err := checkDir(dir, &s, &b)
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

// A new index writes uncompressed tables; an index written with a codec
// keeps it when later writers do not name one; naming another switches
// the tables written from then on. Every entry reads back throughout.
func TestCompressionKept(t *testing.T) {
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
			if _, err := db.Load(slices.Values(entriesOf(keys[:2000]))); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = mustOpen(t, dir, &Options{Compression: tc.later})
			for _, h := range keys[2000:] {
				if err := db.Put(h, store.Value{}); err != nil {
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
			found, err := db.HasBatch(keys)
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

func TestCompressionRefused(t *testing.T) {
	if _, err := Open(t.TempDir(), &Options{Compression: "lz4"}); err == nil {
		t.Fatal("Compression lz4 accepted")
	}
}
