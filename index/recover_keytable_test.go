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
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// keyTableSource is an index whose key table has two key files (3,000
// keys loaded, then 500 added and merged at a reopen) and an unmerged
// log segment of 60 keys in two batches with idempotency records, the
// second's in the log only (a crash before it reached Badger);
// Badger holds 200 entries with values (20 in the value log) and a
// recorded answer too large for the tables. The files hold what is named.
type keyTableSource struct {
	dir     string
	old     []hashkey.Hash // 000001.keys
	newer   []hashkey.Hash // the second key file
	logged  []hashkey.Hash // the log
	valued  map[hashkey.Hash]store.Value
	records map[string]string // idempotency records and their answers
}

func buildKeyTableSource(t *testing.T) *keyTableSource {
	t.Helper()
	ctx := context.Background()
	ks := &keyTableSource{dir: filepath.Join(t.TempDir(), "src"), valued: map[hashkey.Hash]store.Value{}, records: map[string]string{}}
	hs := randHashes(rand.New(rand.NewPCG(341, 342)), 3760)
	ks.old, ks.newer, ks.logged = hs[:3000], hs[3000:3500], hs[3500:3560]
	db := mustOpen(t, ks.dir, &Options{KeyTable: true, valueThreshold: 4 << 10})
	if _, err := db.Load(ctx, slices.Values(entriesOf(ks.old))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddBatch(ctx, entriesOf(ks.newer)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a", 5000) // over the value threshold: the value log
	rec := func(key, answer string) *Record {
		ks.records[key] = answer
		return &Record{Key: key, TTL: time.Hour, Answer: func([]bool) []byte { return []byte(answer) }}
	}
	var es []store.Entry
	for i, h := range hs[3560:] {
		v := store.Value{Text: fmt.Appendf(nil, "https://example.com/%d", i)}
		if i < 20 {
			v.Data = bytes.Repeat([]byte{byte(i)}, 6000)
		}
		es = append(es, store.FullEntry(h, v))
		ks.valued[h] = v
	}
	if err := db.PutBatchRecorded(ctx, es, rec("put-1", "put answer "+big)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, ks.dir, nil) // merges the log into a second key file
	if _, err := db.AddBatchRecorded(ctx, entriesOf(ks.logged[:30]), rec("add-1", "first batch")); err != nil {
		t.Fatal(err)
	}
	// The last batch's record reaches the log only: the process dies
	// before it is written to Badger (see TestKeyTableRecordCrash).
	db.st.testRecordCrash = func() error { return errors.New("crash") }
	if _, err := db.AddBatchRecorded(ctx, entriesOf(ks.logged[30:]), rec("add-2", "second batch")); err == nil {
		t.Fatal("no crash")
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, ks.dir) // the log unmerged, as a crash leaves it
	db.Close()
	ks.dir = crashed
	if keys, _ := filepath.Glob(filepath.Join(crashed, keyTableDir, "*.keys")); len(keys) != 2 {
		t.Fatalf("the source has %d key files, want 2", len(keys))
	}
	return ks
}

// keyFiles returns the key files of the index in dir, oldest first.
func keyFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, keyTableDir, "*.keys"))
	slices.Sort(names)
	return names
}

// TestRecoverKeyTable: Recover reads every key file and log segment of
// the key table on its own, so that one damaged file costs only what it
// held; copies only keys their checksums verify; reports the file and
// what it lost; and says that something was lost (the CLI exits 1) when
// anything was. Before, one key file deleted, cut or missing its MANIFEST
// copied none of the key table (with "about 0 records lost" and exit 0),
// flipped keys were copied as they read, and a log segment cut after its
// records were acknowledged was not counted as a loss.
func TestRecoverKeyTable(t *testing.T) {
	ks := buildKeyTableSource(t)
	type want struct {
		lostFile string         // the file reported lost ("" none)
		missing  []hashkey.Hash // keys that may be missing from the copy
		lost     bool
		noRecord string // an idempotency record that may be missing
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   want
	}{
		{"intact", func(*testing.T, string) {}, want{}},
		{"old key file deleted", func(t *testing.T, dir string) {
			if err := os.Remove(keyFiles(t, dir)[0]); err != nil {
				t.Fatal(err)
			}
		}, want{"000001.keys", ks.old, true, ""}},
		{"old key file cut", func(t *testing.T, dir string) {
			p := keyFiles(t, dir)[0]
			fi, _ := os.Stat(p)
			if err := os.Truncate(p, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, want{"000001.keys", ks.old, true, ""}},
		{"old key file: 64 keys flipped", func(t *testing.T, dir string) {
			rewriteFile(t, keyFiles(t, dir)[0], func(b []byte) []byte {
				for i := range 64 {
					b[64+32*(i*40)+31] ^= 0xff
				}
				return b
			})
		}, want{"000001.keys", ks.old, true, ""}},
		{"newer key file: bucket array cut", func(t *testing.T, dir string) {
			p := keyFiles(t, dir)[1]
			fi, _ := os.Stat(p)
			if err := os.Truncate(p, fi.Size()-4); err != nil {
				t.Fatal(err)
			}
		}, want{}}, // the keys' checksum verifies them
		{"key table MANIFEST deleted", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, keyTableDir, "MANIFEST")); err != nil {
				t.Fatal(err)
			}
		}, want{}},
		{"log segment cut", func(t *testing.T, dir string) {
			p := newestKeyTableLog(t, dir)
			fi, _ := os.Stat(p)
			if err := os.Truncate(p, fi.Size()-100); err != nil {
				t.Fatal(err)
			}
		}, want{"", ks.logged[30:], true, "add-2"}},
		{"Badger table damaged", func(t *testing.T, dir string) {
			rewriteFile(t, largestTable(t, dir), func(b []byte) []byte {
				for i := range 64 {
					b[len(b)/3+i] ^= 0x5a
				}
				return b
			})
		}, want{"", nil, true, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := copyDir(t, ks.dir)
			tc.damage(t, dir)
			before := snapshotDir(t, filepath.Join(dir, keyTableDir))
			to := filepath.Join(t.TempDir(), "new")
			rep, err := Recover(dir, to, nil)
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if after := snapshotDir(t, filepath.Join(dir, keyTableDir)); after != before {
				t.Errorf("Recover changed the key table:\n%s\n%s", before, after)
			}
			var report strings.Builder
			for _, f := range rep.Files {
				fmt.Fprintf(&report, "  %s (%s): %d, lost %d/%v: %s\n", f.Name, f.Kind, f.Records, f.Lost, f.LostUnknown, f.Problem)
			}
			if rep.Lost != tc.want.lost {
				t.Errorf("Lost = %v, want %v; the report:\n%s", rep.Lost, tc.want.lost, report.String())
			}
			if tc.want.lostFile != "" {
				named := false
				for _, f := range rep.Files {
					named = named || strings.HasSuffix(f.Name, tc.want.lostFile) && (f.Lost > 0 || f.LostUnknown)
				}
				if !named {
					t.Errorf("the report does not name %s as lost:\n%s", tc.want.lostFile, report.String())
				}
			}
			db := mustOpen(t, to, &Options{ReadOnly: true})
			defer db.Close()
			if err := db.Verify(ctx); err != nil {
				t.Errorf("the copy does not verify: %v", err)
			}
			mayMiss := map[hashkey.Hash]bool{}
			for _, h := range tc.want.missing {
				mayMiss[h] = true
			}
			stored := map[hashkey.Hash]bool{}
			missing := 0
			for _, part := range [][]hashkey.Hash{ks.old, ks.newer, ks.logged} {
				for _, h := range part {
					stored[h] = true
					ok, err := db.Has(ctx, h)
					if err != nil {
						t.Fatal(err)
					}
					if !ok && !mayMiss[h] {
						missing++
					}
				}
			}
			valuesBad := 0
			for h, v := range ks.valued {
				stored[h] = true
				got, err := db.Get(ctx, h)
				if err != nil || !bytes.Equal(got.Text, v.Text) || !bytes.Equal(got.Data, v.Data) {
					valuesBad++
				}
			}
			foreign := 0
			err = db.ForEach(ctx, func(e store.Entry) error {
				if !stored[e.Hash] {
					foreign++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if missing > 0 || foreign > 0 {
				t.Errorf("the copy lacks %d readable keys and holds %d keys never stored (%d entries copied); the report:\n%s", missing, foreign, rep.Entries, report.String())
			}
			if valuesBad > 0 && tc.name != "Badger table damaged" {
				t.Errorf("%d entries with values lost or changed", valuesBad)
			}
			for key, answer := range ks.records {
				if key == tc.want.noRecord {
					continue
				}
				got, ok, err := db.Recorded(key)
				if err != nil || !ok || string(got) != answer {
					t.Errorf("Recorded(%s) = %d bytes, %v, %v; want the answer recorded (%d bytes)", key, len(got), ok, err, len(answer))
				}
			}
		})
	}
}
