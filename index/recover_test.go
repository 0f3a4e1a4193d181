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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// recoverSource is an index with a profile, values in the tables and in
// the value log, and deletions; want is what it holds.
func recoverSource(t *testing.T) (dir string, want map[hashkey.Hash]store.Value) {
	ctx := context.Background()
	t.Helper()
	dir = filepath.Join(t.TempDir(), "src")
	o := damageOptions(damageConfigs[0], false)
	o.Profile = "url-hash/sha256"
	o.NoKeyTable = true // the damage is done to Badger's files
	db := mustOpen(t, dir, o)
	defer db.Close()
	want = map[hashkey.Hash]store.Value{}
	hs := randHashes(rand.New(rand.NewPCG(101, 102)), 12_000)
	if _, err := db.Load(ctx, slices.Values(entriesOf(hs[:9000]))); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs[:9000] {
		want[h] = store.Value{}
	}
	var es []store.Entry
	for i, h := range hs[9000:] {
		v := store.Value{Text: fmt.Appendf(nil, "https://example.com/%d", i)}
		if i < 20 {
			v.Data = bytes.Repeat([]byte{byte(i)}, 6000) // in the value log
		}
		es = append(es, store.FullEntry(h, v))
		want[h] = v
	}
	if err := db.PutBatch(ctx, es); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs[:100] {
		if err := db.Delete(ctx, store.FullEntry(h, store.Value{})); err != nil {
			t.Fatal(err)
		}
		delete(want, h)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, want
}

// checkRecovered compares the recovered index with want: every recovered
// entry was in want with its value (no deleted key comes back), and
// returns how many of want are missing.
func checkRecovered(t *testing.T, to string, want map[hashkey.Hash]store.Value, rep RecoverReport) (missing int) {
	ctx := context.Background()
	t.Helper()
	db := mustOpen(t, to, &Options{ReadOnly: true})
	defer db.Close()
	if err := db.Verify(ctx); err != nil {
		t.Errorf("the recovered index does not verify: %v", err)
	}
	if db.profileName() != "url-hash/sha256" || rep.Profile != "url-hash/sha256" {
		t.Errorf("profile %q (report %q), want url-hash/sha256", db.profileName(), rep.Profile)
	}
	seen := 0
	err := db.ForEach(ctx, func(e store.Entry) error {
		seen++
		v, ok := want[e.Hash]
		switch {
		case !ok:
			t.Errorf("recovered %x, which was not stored (or deleted)", e.Hash[:4])
		case !bytes.Equal(v.Text, e.Value.Text) || !bytes.Equal(v.Data, e.Value.Data):
			if !e.Value.IsZero() || rep.ValuesLost == 0 {
				t.Errorf("recovered %x with value %q, want %q", e.Hash[:4], e.Value.Text, v.Text)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if int64(seen) != rep.Entries {
		t.Errorf("report says %d entries, the index holds %d", rep.Entries, seen)
	}
	return len(want) - seen
}

// Recover copies what is readable from each kind of damage, never changes
// the damaged directory, and reports what it lost.
func TestRecover(t *testing.T) {
	src, want := recoverSource(t)
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := copyDir(t, src)
			names := d.do(t, dir)
			before := snapshotDir(t, dir)
			to := filepath.Join(t.TempDir(), "recovered")
			rep, err := Recover(dir, to, nil)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if after := snapshotDir(t, dir); after != before {
				t.Error("Recover changed the damaged directory")
			}
			missing := checkRecovered(t, to, want, rep)
			var problems []string
			for _, f := range rep.Files {
				if f.Problem != "" {
					problems = append(problems, f.Name+": "+f.Problem)
				}
			}
			t.Logf("copied %d entries, %d missing, lost estimate %d, values lost %d; problems: %s",
				rep.Entries, missing, rep.LostEstimate, rep.ValuesLost, strings.Join(problems, "; "))
			switch {
			case missing > 0 && len(problems) == 0:
				t.Errorf("%d entries missing, and the report names no problem", missing)
			case missing > 0 && rep.LostEstimate == 0:
				t.Errorf("%d entries missing, and the report estimates no loss", missing)
			case missing > 0 && names != "" && !strings.Contains(strings.Join(problems, " "), strings.TrimPrefix(names, ".")):
				t.Errorf("the report's problems do not name %s", names)
			}
		})
	}
	t.Run("refusals", func(t *testing.T) {
		to := t.TempDir()
		os.WriteFile(filepath.Join(to, "x"), nil, 0o644)
		if _, err := Recover(src, to, nil); !errors.Is(err, store.ErrNotIndex) {
			t.Errorf("Recover into a non-empty directory = %v, want store.ErrNotIndex", err)
		}
		if _, err := Recover(src, src, nil); !errors.Is(err, store.ErrInvalidOptions) {
			t.Errorf("Recover into itself = %v", err)
		}
		if _, err := Recover(filepath.Join(t.TempDir(), "none"), filepath.Join(t.TempDir(), "to"), nil); !errors.Is(err, store.ErrNoIndex) {
			t.Errorf("Recover of nothing = %v, want store.ErrNoIndex", err)
		}
		if _, err := Recover(src, filepath.Join(t.TempDir(), "to"), &Options{Profile: "other"}); !errors.Is(err, store.ErrProfileMismatch) {
			t.Errorf("Recover with another profile = %v, want store.ErrProfileMismatch", err)
		}
	})
}

// After a crash, Recover reads the memtable logs too: every acknowledged
// write is copied, without a writable open of the crashed index first.
func TestRecoverAfterCrash(t *testing.T) {
	ctx := context.Background()
	hs := randHashes(rand.New(rand.NewPCG(111, 112)), 3000)
	if os.Getenv("URLHASH_INDEX_CHILD") == "recover" {
		db, err := Open(os.Getenv("URLHASH_INDEX_DIR"), &Options{Profile: "url-hash/sha256"})
		if err == nil {
			_, err = db.Load(ctx, slices.Values(entriesOf(hs[:1000])))
		}
		if err == nil {
			_, err = db.AddBatch(ctx, entriesOf(hs[1000:2000]))
		}
		for i, h := range hs[2000:2500] {
			if err == nil {
				err = db.Put(ctx, h, store.Value{Text: fmt.Appendf(nil, "v%d", i)})
			}
		}
		if err == nil {
			err = db.Delete(ctx, store.FullEntry(hs[0], store.Value{}))
		}
		if err == nil {
			err = db.Sync(ctx)
		}
		fmt.Println("acked", err)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd, out := startChild(t, "TestRecoverAfterCrash", "recover", dir)
	if line, _ := out.ReadString('\n'); strings.TrimSpace(line) != "acked <nil>" {
		t.Fatalf("child: %q", line)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	want := map[hashkey.Hash]store.Value{}
	for _, h := range hs[1:2000] {
		want[h] = store.Value{}
	}
	for i, h := range hs[2000:2500] {
		want[h] = store.Value{Text: fmt.Appendf(nil, "v%d", i)}
	}
	to := filepath.Join(t.TempDir(), "recovered")
	rep, err := Recover(dir, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if missing := checkRecovered(t, to, want, rep); missing != 0 {
		t.Errorf("%d acknowledged entries missing; report %+v", missing, rep)
	}
	// A damaged memtable log: Badger would replay it up to the damage and
	// drop the rest; a writable Open refuses, Recover copies what is
	// before the damage and reports the rest.
	damaged := copyDir(t, dir)
	mems, _ := filepath.Glob(filepath.Join(damaged, "*.mem"))
	if len(mems) == 0 {
		t.Fatal("no memtable log after the crash")
	}
	slices.Sort(mems)
	rewriteFile(t, mems[0], func(b []byte) []byte {
		off, _ := integrity.LogRecords(b, true, func([]byte, []byte, byte, uint64) bool { return true })
		b[off/2] ^= 0xff
		return b
	})
	if _, err := Open(damaged, nil); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(mems[0])) {
		t.Errorf("writable Open with a damaged memtable log = %v, want store.ErrCorrupt naming it", err)
	}
	rep2, err := Recover(damaged, filepath.Join(t.TempDir(), "recovered"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var problem string
	for _, f := range rep2.Files {
		if f.Name == filepath.Base(mems[0]) {
			problem = f.Problem
		}
	}
	if problem == "" || rep2.LostEstimate == 0 {
		t.Errorf("Recover of a damaged memtable log reports no problem: %+v", rep2)
	}
	t.Logf("damaged memtable log: copied %d, lost estimate %d, %s", rep2.Entries, rep2.LostEstimate, problem)

	kinds := map[string]int{}
	for _, f := range rep.Files {
		kinds[f.Kind]++
		if f.Problem != "" {
			t.Errorf("%s: %s", f.Name, f.Problem)
		}
	}
	if kinds["memtable log"] == 0 {
		t.Errorf("no memtable log read: %+v", rep.Files)
	}
}
