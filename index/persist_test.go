package index

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

func mustOpen(t testing.TB, dir string, opts *Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return db
}

func entriesOf(hs []hashkey.Hash) []store.Entry {
	es := make([]store.Entry, len(hs))
	for i, h := range hs {
		es[i] = store.Entry{Hash: h}
	}
	return es
}

// A clean Close persists the filter and the next Open loads it; any later
// write makes the snapshot stale and the next Open rebuilds.
func TestReopenSnapshot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hs := randHashes(rand.New(rand.NewPCG(7, 8)), 3000)
	db := mustOpen(t, dir, nil)
	if db.snapshotUsed() {
		t.Fatal("new index loaded a snapshot")
	}
	if err := db.PutBatch(ctx, entriesOf(hs[:2000])); err != nil {
		t.Fatal(err)
	}
	if err := db.PutPrefix(ctx, hs[2000][:4], store.Value{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, dir, &Options{ReadOnly: true})
	if !db.snapshotUsed() {
		t.Fatal("clean reopen did not load the snapshot")
	}
	s, _ := db.Stats(ctx)
	if s.Entries != 2000 || s.PrefixEntries != 1 {
		t.Fatalf("store.Stats after reopen = %+v", s)
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, hs[0], store.Value{}); !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("Put on read-only = %v, want store.ErrReadOnly", err)
	}
	db.Close()

	// Make the snapshot stale behind the index's back.
	bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	k := fullKey(&hs[2500])
	if err := bdb.Update(func(txn *badger.Txn) error { return txn.Set(k[:], nil) }); err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	db = mustOpen(t, dir, nil)
	defer db.Close()
	if db.snapshotUsed() {
		t.Fatal("stale snapshot was loaded")
	}
	if ok, _ := db.Has(ctx, hs[2500]); !ok {
		t.Fatal("key written after the snapshot is missing")
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	for _, mem := range []bool{false, true} {
		t.Run(fmt.Sprintf("mem=%v", mem), func(t *testing.T) {
			db := openTestDB(t, mem, nil)
			hs := randHashes(rand.New(rand.NewPCG(9, 10)), 20000)
			first := entriesOf(hs[:10000])
			first = append(first, first[0]) // repeated key
			pe, _ := store.PrefixEntry(hs[19999][:6], store.Value{Text: []byte("p")})
			first = append(first, pe)
			res, err := db.Load(ctx, slices.Values(first))
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != 10001 || res.Present != 1 || res.Streamed == mem {
				t.Fatalf("first Load = %+v", res)
			}
			// Into a non-empty index, after ordinary writes.
			if err := db.Put(ctx, hs[15000], store.Value{}); err != nil {
				t.Fatal(err)
			}
			res, err = db.Load(ctx, slices.Values(entriesOf(hs[5000:])))
			if err != nil {
				t.Fatal(err)
			}
			if res.Added != 9999 || res.Present != 5001 || res.Streamed == mem {
				t.Fatalf("second Load = %+v", res)
			}
			got, err := db.HasBatch(ctx, hs)
			if err != nil {
				t.Fatal(err)
			}
			for i, ok := range got {
				if !ok {
					t.Fatalf("key %d missing after Load", i)
				}
			}
			if m, ok, _ := db.Match(ctx, hs[19999]); !ok || m.Len != hashkey.Size {
				t.Fatalf("store.Match = %+v %v", m, ok)
			}
			if err := db.Verify(ctx); err != nil {
				t.Fatal(err)
			}
			if s, _ := db.Stats(ctx); s.Entries != 20000 || s.PrefixEntries != 1 {
				t.Fatalf("store.Stats = %+v", s)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	t.Run("no index", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "none")
		for _, o := range []*Options{{ReadOnly: true}, {MustExist: true}} {
			if _, err := Open(dir, o); !errors.Is(err, store.ErrNoIndex) {
				t.Fatalf("Open(%+v) = %v, want store.ErrNoIndex", o, err)
			}
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatal("refused Open created the directory")
		}
	})
	t.Run("locked", func(t *testing.T) {
		dir := t.TempDir()
		db := mustOpen(t, dir, nil)
		defer db.Close()
		if _, err := Open(dir, nil); !errors.Is(err, store.ErrLocked) {
			t.Fatalf("second Open = %v, want store.ErrLocked", err)
		}
	})
	t.Run("profile mismatch", func(t *testing.T) {
		dir := t.TempDir()
		db := mustOpen(t, dir, &Options{Profile: "urlhash+sha256;unicode=17.0.0"})
		db.Close()
		if _, err := Open(dir, &Options{Profile: "safebrowsing"}); !errors.Is(err, store.ErrProfileMismatch) {
			t.Fatalf("Open = %v, want store.ErrProfileMismatch", err)
		}
		db = mustOpen(t, dir, nil) // empty profile: any
		if db.profileName() != "urlhash+sha256;unicode=17.0.0" {
			t.Fatalf("Profile() = %q", db.profileName())
		}
		db.Close()
	})
	t.Run("newer format", func(t *testing.T) {
		dir := t.TempDir()
		mustOpen(t, dir, nil).Close()
		bdb, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
		if err != nil {
			t.Fatal(err)
		}
		err = bdb.Update(func(txn *badger.Txn) error {
			return txn.Set(metaKey(metaFormat), binary.AppendUvarint(nil, FormatVersion+1))
		})
		bdb.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir, nil); !errors.Is(err, store.ErrFormat) {
			t.Fatalf("Open = %v, want store.ErrFormat", err)
		}
	})
	t.Run("invalid options", func(t *testing.T) {
		if _, err := Open(t.TempDir(), &Options{InMemory: true, ReadOnly: true}); !errors.Is(err, store.ErrInvalidOptions) {
			t.Fatalf("Open = %v, want store.ErrInvalidOptions", err)
		}
	})
}

// The locked-directory refusal across processes: a child holds the index
// open while the parent tries it.
func TestLockedByOtherProcess(t *testing.T) {
	if os.Getenv("URLHASH_INDEX_CHILD") == "hold" {
		db, err := Open(os.Getenv("URLHASH_INDEX_DIR"), nil)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("open")
		time.Sleep(time.Minute)
		db.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd, out := startChild(t, "TestLockedByOtherProcess", "hold", dir)
	if line, _ := out.ReadString('\n'); strings.TrimSpace(line) != "open" {
		t.Fatalf("child: %q", line)
	}
	if _, err := Open(dir, nil); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Open = %v, want store.ErrLocked", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
}

func startChild(t *testing.T, test, mode, dir string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "URLHASH_INDEX_CHILD="+mode, "URLHASH_INDEX_DIR="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(stdout)
}

// killAfterAck reads the child's "ack N" lines until N reaches n, then
// kills it with SIGKILL, and returns the last N it read (it may have
// acknowledged more since).
func killAfterAck(t *testing.T, cmd *exec.Cmd, out *bufio.Reader, n int) int {
	t.Helper()
	acked := -1
	for acked < n {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("child stopped after ack %d: %v", acked, err)
		}
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != "ack" {
			t.Fatalf("child: %q", line)
		}
		acked, _ = strconv.Atoi(f[1])
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return acked
}

// A child writes batches (AddBatch, Put and Load), acknowledges
// each with "ack N" after Sync (or Load) returns, and is killed with SIGKILL
// in the middle of further writes. The parent reopens: the index opens,
// rebuilds its filter, verifies, holds every acknowledged key and takes the
// import again.
func TestCrashRecovery(t *testing.T) {
	ctx := context.Background()
	const batch = 500
	keys := func(i int) []hashkey.Hash {
		return randHashes(rand.New(rand.NewPCG(uint64(i), 77)), batch)
	}
	if os.Getenv("URLHASH_INDEX_CHILD") == "write" {
		db, err := Open(os.Getenv("URLHASH_INDEX_DIR"), nil)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		for i := 0; ; i++ {
			hs := keys(i)
			switch i % 3 {
			case 0:
				_, err = db.AddBatch(ctx, entriesOf(hs))
			case 1:
				for _, h := range hs {
					if err = db.Put(ctx, h, store.Value{Data: []byte{byte(i)}}); err != nil {
						break
					}
				}
			case 2:
				_, err = db.Load(ctx, slices.Values(entriesOf(hs)))
			}
			if err == nil {
				err = db.Sync(ctx)
			}
			if err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			fmt.Println("ack", i)
		}
	}
	dir := t.TempDir()
	cmd, out := startChild(t, "TestCrashRecovery", "write", dir)
	acked := killAfterAck(t, cmd, out, 7)

	// Badger cannot open a crashed index read-only (it must truncate its
	// log); the refusal says so.
	if ro, err := Open(dir, &Options{ReadOnly: true}); err == nil {
		ro.Close() // the child happened to die between log records
	} else if !errors.Is(err, store.ErrNeedsRecovery) {
		t.Fatalf("read-only Open after crash = %v, want store.ErrNeedsRecovery", err)
	}

	db := mustOpen(t, dir, nil)
	defer db.Close()
	if db.snapshotUsed() {
		t.Fatal("snapshot loaded after a crash")
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= acked; i++ {
		got, err := db.HasBatch(ctx, keys(i))
		if err != nil {
			t.Fatal(err)
		}
		for j, ok := range got {
			if !ok {
				t.Fatalf("acknowledged batch %d key %d lost", i, j)
			}
		}
	}
	// Taking the import again adds nothing acknowledged twice.
	res, err := db.Load(ctx, slices.Values(entriesOf(keys(0))))
	if err != nil || res.Added != 0 || res.Present != batch {
		t.Fatalf("re-import = %+v, %v", res, err)
	}
	t.Logf("recovered after %d acknowledged batches", acked+1)
}

// TestLoadKeepsRecordedProfile: a Load through an index opened without a
// profile (as query opens one to read the recorded profile) after writes
// that left the memtable non-empty must keep the recorded profile, now and
// after reopening.
func TestLoadKeepsRecordedProfile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(dir, &Options{Profile: "webrisk"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := randHashes(rand.New(rand.NewPCG(7, 8)), 3)
	if err := db.Put(ctx, hs[0], store.Value{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(ctx, store.FullEntry(hs[0], store.Value{})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, slices.Values(entriesOf(hs[1:]))); err != nil {
		t.Fatal(err)
	}
	if got := db.profileName(); got != "webrisk" {
		t.Errorf("Profile() after Load = %q, want webrisk", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, &Options{Profile: "urlhash+sha256"})
	if err == nil {
		db.Close()
		t.Fatal("reopening with another profile succeeded: the recorded profile was lost")
	}
	db, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, h := range hs[1:] {
		if ok, err := db.Has(ctx, h); err != nil || !ok {
			t.Errorf("Has(loaded key) = %v, %v", ok, err)
		}
	}
}
