package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"

	"github.com/urlhash/urlhash/index/internal/integrity"
)

// TestBadgerBehaviour pins what this package relies on or works around in
// Badger. When it fails, Badger changed: revisit the code each check
// names.
func TestBadgerBehaviour(t *testing.T) {
	dir := t.TempDir()
	bo := badger.DefaultOptions(dir).WithLogger(nil)
	a, err := badger.Open(bo)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	// lockDir: Badger refuses a second writer, but its error does not wrap
	// the errno, so "locked" cannot be told from other failures by value.
	_, err = badger.Open(bo)
	switch {
	case err == nil:
		t.Error("Badger opened a locked directory twice: lockDir is all that keeps writers apart")
	case errors.Is(err, syscall.EWOULDBLOCK):
		t.Error("Badger's lock error now wraps EWOULDBLOCK: lockDir could rely on it")
	}

	// loadStream: an incremental stream is refused while a memtable holds
	// data, so Load flushes the memtables (reopen) first.
	if err := a.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), nil) }); err != nil {
		t.Fatal(err)
	}
	sw := a.NewStreamWriter()
	if err := sw.PrepareIncremental(); err == nil {
		t.Error("PrepareIncremental accepted a non-empty memtable: loadStream's reopen is no longer needed")
	}
	sw.Cancel()
}

// TestBadgerDamageBehaviour pins the Badger behaviour the integrity checks
// (package index/internal/integrity) exist for. When a check fails, Badger changed:
// revisit the code it names.
func TestBadgerDamageBehaviour(t *testing.T) {
	// A directory with tables: 20,000 keys in small tables.
	build := func(t *testing.T) (string, badger.Options) {
		dir := t.TempDir()
		bo := badger.DefaultOptions(dir).WithLogger(nil).WithBaseTableSize(64 << 10).
			WithChecksumVerificationMode(options.OnBlockRead)
		db, err := badger.Open(bo)
		if err != nil {
			t.Fatal(err)
		}
		wb := db.NewWriteBatch()
		for i := range 20000 {
			if err := wb.Set(fmt.Appendf(nil, "key%08d", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := wb.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := db.Flatten(1); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return dir, bo
	}
	ssts := func(dir string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		return m
	}

	t.Run("unlisted tables are deleted, also read-only", func(t *testing.T) {
		// integrity.Check: an orphan table or a MANIFEST cut short would cost
		// every table it does not list.
		dir, bo := build(t)
		n := len(ssts(dir))
		rewriteFile(t, filepath.Join(dir, badger.ManifestFilename), func(b []byte) []byte { return b[:8] })
		db, err := badger.Open(bo.WithReadOnly(true))
		if err == nil {
			db.Close()
		}
		if got := len(ssts(dir)); got == n {
			t.Errorf("a read-only open with a MANIFEST cut to its magic kept all %d tables: Badger no longer deletes unlisted tables", n)
		}
	})
	t.Run("a missing MANIFEST loses every table", func(t *testing.T) {
		dir, bo := build(t)
		os.Remove(filepath.Join(dir, badger.ManifestFilename))
		db, err := badger.Open(bo)
		if err != nil {
			t.Fatalf("a writable open without MANIFEST failed (%v): Badger no longer starts afresh", err)
		}
		db.Close()
		if len(ssts(dir)) != 0 {
			t.Error("a writable open without MANIFEST kept the tables")
		}
	})
	t.Run("ReplayManifestFile writes nothing", func(t *testing.T) {
		dir, bo := build(t)
		before := snapshotDir(t, dir)
		f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
		f.Close()
		if err != nil || len(m.Tables) != len(ssts(dir)) {
			t.Errorf("ReplayManifestFile: %d tables, %v; want %d", len(m.Tables), err, len(ssts(dir)))
		}
		if after := snapshotDir(t, dir); after != before {
			t.Error("ReplayManifestFile changed the directory")
		}
	})
	t.Run("a damaged block reads as absent", func(t *testing.T) {
		// guard: no checksum mode makes Badger report the damage.
		dir, bo := build(t)
		rewriteFile(t, largestTable(t, dir), func(b []byte) []byte {
			for i := range 64 {
				b[len(b)/2+i] ^= 0xa5
			}
			return b
		})
		db, err := badger.Open(bo.WithReadOnly(true))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		absent, other := 0, 0
		db.View(func(txn *badger.Txn) error {
			for i := range 20000 {
				_, err := txn.Get(fmt.Appendf(nil, "key%08d", i))
				switch {
				case errors.Is(err, badger.ErrKeyNotFound):
					absent++
				case err != nil:
					other++
				}
			}
			return nil
		})
		if absent == 0 || other != 0 {
			t.Errorf("Get of keys in a damaged block: %d absent, %d errors; guard relies on absent and no error", absent, other)
		}
	})
	t.Run("a damaged value-log record reads as an empty value", func(t *testing.T) {
		// itemValue: Badger logs the read error and answers an empty
		// value; a writable open cuts the newest value log at the damage
		// (integrity.Check).
		dir := t.TempDir()
		bo := badger.DefaultOptions(dir).WithLogger(nil).WithValueThreshold(1 << 10).WithVerifyValueChecksum(true)
		db, err := badger.Open(bo)
		if err != nil {
			t.Fatal(err)
		}
		big := make([]byte, 4<<10)
		for i := range 3 {
			if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte{byte(i)}, big) }); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		p := largestFile(t, dir, "*.vlog")
		rewriteFile(t, p, func(b []byte) []byte { b[integrity.LogHeaderSize+100] ^= 0xff; return b })
		size := func() int64 { info, _ := os.Stat(p); return info.Size() }
		before := size()
		db, err = badger.Open(bo.WithReadOnly(true))
		if err != nil {
			t.Fatal(err)
		}
		var v []byte
		err = db.View(func(txn *badger.Txn) error {
			item, err := txn.Get([]byte{0})
			if err == nil {
				v, err = item.ValueCopy(nil)
			}
			return err
		})
		db.Close()
		if err != nil || len(v) != 0 {
			t.Errorf("Get of a damaged value-log value = %d bytes, %v; itemValue relies on 0 bytes and no error", len(v), err)
		}
		db, err = badger.Open(bo)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if after := size(); after >= before {
			t.Errorf("a writable open left the damaged value log at %d bytes (was %d): integrity.Check's refusal may no longer be needed", after, before)
		}
	})
	t.Run("a truncated table panics in OpenTable", func(t *testing.T) {
		// integrity.Check opens each table: inside badger.Open this panic is in a goroutine and
		// ends the process, so the index opens every table itself first.
		dir, bo := build(t)
		p := largestTable(t, dir)
		rewriteFile(t, p, func(b []byte) []byte { return b[:len(b)/2] })
		mf, err := z.OpenMmapFile(p, os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		panicked := func() (p any) {
			defer func() { p = recover() }()
			tb, err := table.OpenTable(mf, table.Options{ReadOnly: true, Compression: bo.Compression, BlockSize: bo.BlockSize})
			if err == nil {
				tb.Close(-1)
			}
			return nil
		}()
		if panicked == nil {
			t.Error("OpenTable of a table cut in half did not panic: badger.Open may no longer crash on it")
		}
		if err := integrity.WithTable(p, bo.Compression, bo.BlockSize, options.NoVerification, func(*table.Table) error { return nil }); err == nil {
			t.Error("integrity.WithTable opened a table cut in half")
		}
	})
	t.Run("read-only open after a crash", func(t *testing.T) {
		// integrity.Check: Badger cannot open a crashed directory read-only, its
		// error does not wrap ErrTruncateNeeded, and the sign of a crash is
		// a memtable log left behind.
		if os.Getenv("URLHASH_INDEX_CHILD") == "badger" {
			db, err := badger.Open(badger.DefaultOptions(os.Getenv("URLHASH_INDEX_DIR")).WithLogger(nil))
			if err == nil {
				err = db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("k"), []byte("v")) })
			}
			fmt.Println("open", err)
			time.Sleep(time.Minute)
			os.Exit(0)
		}
		dir := t.TempDir()
		cmd, out := startChild(t, "TestBadgerDamageBehaviour/read-only_open_after_a_crash", "badger", dir)
		if line, _ := out.ReadString('\n'); strings.TrimSpace(line) != "open <nil>" {
			t.Fatalf("child: %q", line)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if mems, _ := filepath.Glob(filepath.Join(dir, "*.mem")); len(mems) == 0 {
			t.Error("no memtable log after a crash")
		}
		db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithReadOnly(true))
		switch {
		case err == nil:
			db.Close()
			t.Error("Badger opened a crashed directory read-only: integrity.Check's ErrNeedsRecovery may no longer be needed")
		case errors.Is(err, badger.ErrTruncateNeeded):
			t.Error("the read-only open error now wraps ErrTruncateNeeded")
		}
		db, err = badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if mems, _ := filepath.Glob(filepath.Join(dir, "*.mem")); len(mems) != 0 {
			t.Errorf("a clean Close left %v", mems)
		}
	})
}

// TestBadgerEmptyMemtableLog pins the Badger behaviour integrity.Check
// works around: an index holding a memtable log of zero bytes (a crash
// between creating and sizing it) does not open.
func TestBadgerEmptyMemtableLog(t *testing.T) {
	dir := t.TempDir()
	bo := badger.DefaultOptions(dir).WithLogger(nil)
	db, err := badger.Open(bo)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.WriteFile(filepath.Join(dir, "00099.mem"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if db, err := badger.Open(bo); err == nil {
		db.Close()
		t.Error("Badger opened an index with an empty memtable log: integrity.Check need not remove it any more")
	}
}
