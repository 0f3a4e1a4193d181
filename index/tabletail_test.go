package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// TestTableTailDamageNamed damages, 64 bytes at a time, the last 2 KiB of
// a table (its last block, the block index, the footer): Badger reads the
// last block when it opens a table (its biggest key), with the block
// checksums on. Every damage must be an error wrapping store.ErrCorrupt
// that names the table, at Open or at Verify. Before, integrity's checks
// opened tables without block checksums, so a last block whose bytes
// still decompressed passed them, and badger.Open then failed with its
// own "Opening table: … checksum mismatch", not store.ErrCorrupt.
func TestTableTailDamageNamed(t *testing.T) {
	di := buildDamageIndex(t, damageConfigs[0])
	ssts, _ := filepath.Glob(filepath.Join(di.dir, "*.sst"))
	slices.SortFunc(ssts, func(a, b string) int {
		ia, _ := os.Stat(a)
		ib, _ := os.Stat(b)
		return int(ia.Size() - ib.Size())
	})
	name := filepath.Base(ssts[0])
	fi, err := os.Stat(ssts[0])
	if err != nil {
		t.Fatal(err)
	}
	for off := max(fi.Size()-2048, 0); off+64 <= fi.Size(); off += 64 {
		dir := copyDir(t, di.dir)
		rewriteFile(t, filepath.Join(dir, name), func(b []byte) []byte {
			for i := range 64 {
				b[off+int64(i)] ^= 0x3c
			}
			return b
		})
		db, err := Open(dir, di.opts(true))
		if err == nil {
			err = db.Verify(context.Background())
			db.Close()
		}
		if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s damaged at %d of %d bytes: %v; want store.ErrCorrupt naming it", name, off, fi.Size(), err)
		}
	}
}

// TestMetadataBlockDamageNamed damages the block of the metadata keys
// (the sync number, the format, the profile: the first block of the
// table whose keys start the key space). Badger answers "absent" for a
// key of a block that fails its checksum; a read-only Open took that for
// a lost memtable log ("writes acknowledged by sync N are missing"), or,
// without urlhash.synced, for a directory holding no index. The damaged
// table must be named instead.
func TestMetadataBlockDamageNamed(t *testing.T) {
	ctx := context.Background()
	for _, synced := range []bool{true, false} {
		t.Run(fmt.Sprintf("urlhash.synced %v", synced), func(t *testing.T) {
			dir := t.TempDir()
			o := damageOptions(damageConfigs[0], false)
			o.NoKeyTable = true
			db := mustOpen(t, dir, o)
			// Written through the memtable: the metadata keys and the
			// entries share a table of several blocks.
			if err := db.PutBatch(ctx, entriesOf(randHashes(rand.New(rand.NewPCG(81, 82)), 6000))); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if !synced {
				if err := os.Remove(filepath.Join(dir, syncedFileName)); err != nil {
					t.Fatal(err)
				}
			}
			var first string
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			for _, p := range ssts {
				integrity.WithTable(p, damageConfigs[0].compression, o.Badger.BlockSize, options.OnBlockRead, func(tb *table.Table) error {
					if k := y.ParseKey(tb.Smallest()); len(k) > 0 && k[0] == tagMeta {
						first = p
					}
					return nil
				})
			}
			if first == "" {
				t.Fatal("no table holds the metadata keys")
			}
			rewriteFile(t, first, func(b []byte) []byte {
				for i := range 16 {
					b[32+i] ^= 0x3c
				}
				return b
			})
			_, err := Open(dir, damageOptions(damageConfigs[0], true))
			if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(first)) {
				t.Fatalf("read-only Open with the metadata block damaged: %v; want store.ErrCorrupt naming %s", err, filepath.Base(first))
			}
		})
	}
}
