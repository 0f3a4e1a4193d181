package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/store"
)

// snapIndex builds an index in dir holding hs (half with a value, in
// Badger; half key-only, in the key table unless noKT) and closes it
// cleanly, which writes the snapshot.
func snapIndex(t *testing.T, dir string, hs []hashkey.Hash, noKT bool) {
	t.Helper()
	ctx := context.Background()
	db := mustOpen(t, dir, &Options{NoKeyTable: noKT})
	es := entriesOf(hs)
	for i := range es[:len(es)/2] {
		es[i].Value.Text = []byte(fmt.Sprint("https://example.com/", i))
	}
	if err := db.PutBatch(ctx, es); err != nil {
		t.Fatal(err)
	}
	if err := db.PutPrefix(ctx, hs[0][:4], store.Value{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawSnapshot reads the snapshot header and the chunk keys from dir's
// Badger directly.
func rawSnapshot(t *testing.T, dir string) (hdr snapshotHeader, chunks int) {
	t.Helper()
	bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithReadOnly(true))
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(txn *badger.Txn) error {
		b, err := getCopy(txn, metaKey(metaSnapshot))
		if err != nil || b == nil {
			return fmt.Errorf("snapshot header: %v", err)
		}
		if err := hdr.decode(b); err != nil {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: metaKey(metaFilter)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			chunks++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hdr, chunks
}

// writeV1Snapshot turns dir's current snapshot into the form this package
// wrote before snapshot files (version 1: the encoding in Badger, split
// into n chunks, the file removed unless keepFile), as a program of that
// time would have at Close. With damageHeader, the header does not decode.
func writeV1Snapshot(t *testing.T, dir string, n int, keepFile, damageHeader bool) {
	t.Helper()
	name := filepath.Join(dir, snapshotFileName)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	data := b[len(snapshotFileMagic)+8 : len(b)-4]
	if !keepFile {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	hdr, _ := rawSnapshot(t, dir)
	bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	v1 := snapshotHeader{State: bdb.MaxVersion() + 1, Entries: hdr.Entries, PrefixEntries: hdr.PrefixEntries,
		Bits: hdr.Bits, Chunks: uint32(n), FullLen: hdr.FullLen, ShortLen: hdr.ShortLen,
		CRC: crc32.Checksum(data, castagnoli)}
	err = bdb.Update(func(txn *badger.Txn) error {
		for i := range n {
			if err := txn.Set(filterChunkKey(uint32(i)), data[i*len(data)/n:(i+1)*len(data)/n]); err != nil {
				return err
			}
		}
		enc := v1.appendBinary(nil)
		if damageHeader {
			enc = enc[:len(enc)-1]
		}
		// No entry expires: the counts' record may go (Open counts none).
		if err := txn.Delete(metaKey(metaExpiry)); err != nil {
			return err
		}
		return txn.Set(metaKey(metaSnapshot), enc)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkAll fails unless db finds every one of hs, and the prefix entry.
func checkAll(t *testing.T, db *DB, hs []hashkey.Hash) {
	t.Helper()
	ctx := context.Background()
	got, err := db.HasBatch(ctx, hs)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if !ok {
			t.Fatalf("HasBatch: key %d of %d absent", i, len(hs))
		}
	}
	if _, ok, err := db.Match(ctx, hs[0]); err != nil || !ok {
		t.Fatalf("Match = %v, %v", ok, err)
	}
	s, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != int64(len(hs)) || s.PrefixEntries != 1 {
		t.Fatalf("Stats: %d entries, %d prefix entries; want %d, 1", s.Entries, s.PrefixEntries, len(hs))
	}
}

// reopen opens dir, checks whether it loaded the snapshot and that every
// key is found, and closes it.
func reopen(t *testing.T, dir string, opts *Options, hs []hashkey.Hash, wantLoaded bool) {
	t.Helper()
	db := mustOpen(t, dir, opts)
	if db.snapshotUsed() != wantLoaded {
		t.Errorf("loadedSnapshot = %v, want %v", db.snapshotUsed(), wantLoaded)
	}
	checkAll(t, db, hs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// halfFilter is a filter holding half of hs: a wrong
// filter, which answers "absent" for the other half.
func halfFilter(hs []hashkey.Hash, bits uint8) *filter.Filter {
	f := filter.New(bits)
	for i := range hs[:len(hs)/2] {
		f.AddFull(&hs[i])
	}
	return f
}

// The snapshot's encoding is in a file of its own, none of it in Badger,
// and Open reads it back, writable or read-only.
func TestSnapshotFile(t *testing.T) {
	hs := randHashes(rand.New(rand.NewPCG(81, 82)), 5000)
	for _, noKT := range []bool{false, true} {
		t.Run(fmt.Sprintf("nokeytable=%v", noKT), func(t *testing.T) {
			dir := t.TempDir()
			snapIndex(t, dir, hs, noKT)
			hdr, chunks := rawSnapshot(t, dir)
			if !hdr.File || chunks != 0 {
				t.Fatalf("header %+v, %d chunks in Badger; want a file's, none", hdr, chunks)
			}
			fi, err := os.Stat(filepath.Join(dir, snapshotFileName))
			if err != nil {
				t.Fatal(err)
			}
			if uint64(fi.Size()) != hdr.Size {
				t.Fatalf("file of %d bytes, header says %d", fi.Size(), hdr.Size)
			}
			if _, err := os.Stat(filepath.Join(dir, snapshotFileName+".tmp")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("temporary file left: %v", err)
			}
			reopen(t, dir, &Options{ReadOnly: true}, hs, true)
			if again, _ := rawSnapshot(t, dir); again != hdr {
				t.Fatalf("header %+v after a read-only session, was %+v", again, hdr)
			}
			reopen(t, dir, nil, hs, true)
			reopen(t, dir, nil, hs, true)
		})
	}
}

// Every way the file and its header can disagree (a crash between the
// two writes, damage, a file from elsewhere) makes Open rebuild the
// filter, never refuse the index nor trust a wrong filter; the next Close
// writes a snapshot that loads again.
func TestSnapshotFileMismatch(t *testing.T) {
	hs := randHashes(rand.New(rand.NewPCG(83, 84)), 5000)
	file := func(dir string) string { return filepath.Join(dir, snapshotFileName) }
	rewrite := func(fn func(b []byte) []byte) func(*testing.T, string) {
		return func(t *testing.T, dir string) { rewriteFile(t, file(dir), fn) }
	}
	// replace writes the file a crash before the header's commit leaves:
	// for the given state, holding a filter of half the keys.
	replace := func(dState uint64) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			hdr, _ := rawSnapshot(t, dir)
			if _, _, _, err := writeSnapshotFile(dir, hdr.State+dState, halfFilter(hs, hdr.Bits).Encode); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(*testing.T, string)
	}{
		{"file missing", func(t *testing.T, dir string) {
			if err := os.Remove(file(dir)); err != nil {
				t.Fatal(err)
			}
		}},
		{"file empty", rewrite(func([]byte) []byte { return nil })},
		{"file truncated", rewrite(func(b []byte) []byte { return b[:len(b)-1] })},
		{"file truncated to its head", rewrite(func(b []byte) []byte { return b[:len(snapshotFileMagic)+8] })},
		{"file extended", rewrite(func(b []byte) []byte { return append(b, 0) })},
		{"file magic", rewrite(func(b []byte) []byte { b[0] ^= 1; return b })},
		{"file state", rewrite(func(b []byte) []byte { b[len(snapshotFileMagic)+7] ^= 1; return b })},
		{"file data byte", rewrite(func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b })},
		{"file checksum", rewrite(func(b []byte) []byte { b[len(b)-1] ^= 1; return b })},
		{"file for the next state (header not committed)", replace(1)},
		{"file for an older state", replace(^uint64(0))},
		{"file of the same state, other content", replace(0)},
		{"file is a directory", func(t *testing.T, dir string) {
			if err := os.Remove(file(dir)); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(file(dir), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"header of an unknown version", func(t *testing.T, dir string) {
			// A header and file that match but for the header's version.
			bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
			if err != nil {
				t.Fatal(err)
			}
			defer bdb.Close()
			state := bdb.MaxVersion() + 1
			f, err := os.ReadFile(file(dir))
			if err != nil {
				t.Fatal(err)
			}
			binary.BigEndian.PutUint64(f[len(snapshotFileMagic):], state)
			crc := crc32.Checksum(f[:len(f)-4], castagnoli)
			binary.BigEndian.PutUint32(f[len(f)-4:], crc)
			if err := os.WriteFile(file(dir), f, 0o644); err != nil {
				t.Fatal(err)
			}
			err = bdb.Update(func(txn *badger.Txn) error {
				b, err := getCopy(txn, metaKey(metaSnapshot))
				if err != nil {
					return err
				}
				var h snapshotHeader
				if err := h.decode(b); err != nil {
					return err
				}
				h.State, h.CRC = state, crc
				b = h.appendBinary(nil)
				b[len(snapshotMagicV2)-1] = 3
				return txn.Set(metaKey(metaSnapshot), b)
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			snapIndex(t, dir, hs, false)
			tc.damage(t, dir)
			if tc.name == "file is a directory" {
				reopen(t, dir, &Options{ReadOnly: true}, hs, false)
				return // Close cannot replace a directory; checked read-only only
			}
			reopen(t, dir, &Options{ReadOnly: true}, hs, false)
			reopen(t, dir, nil, hs, false)
			reopen(t, dir, nil, hs, true)
		})
	}
}

// A crash between the file's write and its header's commit: the file of
// the new state stays beside the old header.
func TestSnapshotFileCrash(t *testing.T) {
	ctx := context.Background()
	hs := randHashes(rand.New(rand.NewPCG(85, 86)), 6000)
	dir := t.TempDir()
	snapIndex(t, dir, hs[:3000], false)
	before, _ := rawSnapshot(t, dir)
	db := mustOpen(t, dir, nil)
	if err := db.PutBatch(ctx, entriesOf(hs[3000:])); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("crash")
	db.testSnapshotCrash = func() error { return crash }
	if err := db.Close(); !errors.Is(err, crash) {
		t.Fatalf("Close = %v, want the crash", err)
	}
	if after, _ := rawSnapshot(t, dir); after != before {
		t.Fatalf("header %+v after the crash, was %+v", after, before)
	}
	reopen(t, dir, nil, hs, false)
	reopen(t, dir, nil, hs, true)
}

// An index written before snapshot files (its snapshot in Badger's value
// log, in chunks) loads that snapshot; its next Close writes the file and
// deletes the chunks. A read-only open reads the chunks and writes nothing.
func TestSnapshotVersion1(t *testing.T) {
	hs := randHashes(rand.New(rand.NewPCG(87, 88)), 5000)
	for _, tc := range []struct {
		name     string
		chunks   int
		keepFile bool // a crash after the file's write, before its header's
		damaged  bool // the version 1 header does not decode
	}{
		{"one chunk", 1, false, false},
		{"three chunks", 3, false, false},
		{"a file beside the chunks", 2, true, false},
		{"damaged header", 2, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			snapIndex(t, dir, hs, false)
			writeV1Snapshot(t, dir, tc.chunks, tc.keepFile, tc.damaged)
			if !tc.damaged {
				if hdr, chunks := rawSnapshot(t, dir); hdr.File || chunks != tc.chunks {
					t.Fatalf("set-up: header %+v, %d chunks", hdr, chunks)
				}
			}
			_, errFile := os.Stat(filepath.Join(dir, snapshotFileName))
			reopen(t, dir, &Options{ReadOnly: true}, hs, !tc.damaged)
			if _, err := os.Stat(filepath.Join(dir, snapshotFileName)); errors.Is(err, os.ErrNotExist) != errors.Is(errFile, os.ErrNotExist) {
				t.Fatalf("a read-only open changed the snapshot file: %v, was %v", err, errFile)
			}
			reopen(t, dir, nil, hs, !tc.damaged)
			hdr, chunks := rawSnapshot(t, dir)
			if !hdr.File || chunks != 0 {
				t.Fatalf("after Close: header %+v, %d chunks in Badger; want a file's, none", hdr, chunks)
			}
			reopen(t, dir, nil, hs, true)
		})
	}
}

// The version 2 header's size and bitmap lengths must agree.
func TestSnapshotHeaderV2Size(t *testing.T) {
	h := snapshotHeader{File: true, State: 1, Bits: filter.MinBits, FullLen: 10, ShortLen: 4, Size: snapshotFileLen(10, 4)}
	var got snapshotHeader
	if err := got.decode(h.appendBinary(nil)); err != nil || got != h {
		t.Fatalf("decode(appendBinary(%+v)) = %+v, %v", h, got, err)
	}
	h.Size++
	if err := got.decode(h.appendBinary(nil)); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("decode(size off by one) = %v, want store.ErrCorrupt", err)
	}
	h = snapshotHeader{File: true, Bits: filter.MinBits, FullLen: 1 << 63, ShortLen: 1 << 63}
	h.Size = snapshotFileLen(h.FullLen, h.ShortLen) // wraps around
	if err := got.decode(h.appendBinary(nil)); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("decode(lengths that overflow) = %v, want store.ErrCorrupt", err)
	}
	if bytes.Equal([]byte(snapshotMagic), []byte(snapshotMagicV2)) {
		t.Fatal("the versions share a magic")
	}
}
