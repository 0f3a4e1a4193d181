package keytable

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/index/internal/syncmark"
	"github.com/urlhash/urlhash/store"
)

// crashCopy copies the files of the table in dir as they are (a killed
// process's files: what it wrote, synced or not) and returns the copy.
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "crashed")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestLostRecordsRefused: records a sync acknowledged and a crash then
// lost (a segment cut or removed) make Open refuse the table with ErrLost
// naming the segment; records never acknowledged may go. Removing SYNCED
// accepts the loss.
func TestLostRecordsRefused(t *testing.T) {
	rec := recordLen(1)
	tests := []struct {
		name string
		// acked records are synced before the crash, then unacked more
		// are written; segment 1 holds the first two, segment 2 the rest.
		unacked int
		damage  func(t *testing.T, dir string)
		lost    string // the segment Open names, "" when it opens
		keys    int64
	}{
		{"whole", 0, func(*testing.T, string) {}, "", 5},
		{"acknowledged record cut at its end", 0, cut(2, rec), "000002.log", 0},
		{"acknowledged record torn", 0, cut(2, 5), "000002.log", 0},
		{"newest segment removed", 0, remove(2), "000002.log", 0},
		{"older segment cut at a record's end", 0, cut(1, rec), "000001.log", 0},
		{"older segment removed", 0, remove(1), "000001.log", 0},
		{"unacknowledged record cut at its end", 1, cut(2, rec), "", 5},
		{"unacknowledged record torn", 1, cut(2, 5), "", 5},
		{"unacknowledged segment tail zeroed", 1, func(t *testing.T, dir string) {
			name := logName(dir, 2)
			b, _ := os.ReadFile(name)
			clear(b[len(b)-rec:])
			os.WriteFile(name, b, 0o644)
		}, "", 5},
		{"acknowledged record cut, SYNCED removed", 0, func(t *testing.T, dir string) {
			cut(2, rec)(t, dir)
			os.Remove(filepath.Join(dir, SyncedName))
		}, "", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tb, err := Open(dir, &Options{noMerge: true})
			if err != nil {
				t.Fatal(err)
			}
			add := func(i int) {
				t.Helper()
				if _, err := tb.Add(&Batch{Added: []Key{keyOf(uint64(i))}}, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			add(0)
			add(1)
			tb.Close()
			if tb, err = Open(dir, &Options{noMerge: true}); err != nil { // segment 2
				t.Fatal(err)
			}
			for i := 2; i < 5; i++ {
				add(i)
			}
			if err := tb.Sync(); err != nil {
				t.Fatal(err)
			}
			for i := range tc.unacked {
				add(10 + i)
			}
			crashed := crashCopy(t, dir)
			tb.Close()
			tc.damage(t, crashed)
			tb, err = Open(crashed, &Options{noMerge: true})
			if tc.lost != "" {
				if !errors.Is(err, ErrLost) || !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), tc.lost) {
					t.Fatalf("Open = %v, want ErrLost naming %s", err, tc.lost)
				}
				// Read-only too (Verify, backups), unless told to read
				// what is left (Recover).
				if _, err := Open(crashed, &Options{ReadOnly: true}); !errors.Is(err, ErrLost) {
					t.Fatalf("Open(read-only) = %v, want ErrLost", err)
				}
				tb, err := Open(crashed, &Options{ReadOnly: true, IgnoreSynced: true})
				if err != nil {
					t.Fatalf("Open(IgnoreSynced) = %v", err)
				}
				tb.Close()
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tb.Len(); got != tc.keys {
				t.Errorf("Len = %d, want %d", got, tc.keys)
			}
			// Numbers go on: writes, a reopening, a merge, a reopening.
			add(20)
			tb.Close()
			if tb, err = Open(crashed, nil); err != nil {
				t.Fatal(err)
			}
			add(21)
			tb.Close()
			if tb, err = Open(crashed, nil); err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if got := tb.Len(); got != tc.keys+2 {
				t.Errorf("after reopenings: Len = %d, want %d", got, tc.keys+2)
			}
		})
	}
}

// cut returns a damage that cuts n bytes off segment seg.
func cut(seg uint64, n int) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		name := logName(dir, seg)
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(name, fi.Size()-int64(n)); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(seg uint64) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.Remove(logName(dir, seg)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogVersion1: a table whose log segments were written by a version
// 1 program (unnumbered records) opens, and its writes go on numbered.
func TestLogVersion1(t *testing.T) {
	dir := t.TempDir()
	if err := writeManifest(osFS{}, dir, &manifest{logStart: 1, nextNum: 1}); err != nil {
		t.Fatal(err)
	}
	v1, err := os.ReadFile(filepath.Join("testdata", "v1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logName(dir, 1), v1, 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(dir, &Options{noMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Add(&Batch{Added: []Key{keyOf(7)}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	tb, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	for _, k := range []Key{keyOf(1), keyOf(2), keyOf(7)} {
		if ok, _, _ := tb.Has(&k); !ok {
			t.Errorf("Has(%x) = false", k[:4])
		}
	}
	b, _ := os.ReadFile(logName(dir, 2))
	if !bytes.HasPrefix(b, append([]byte(logMagic), logVersion)) {
		t.Errorf("a new segment starts %q, want version %d", b[:min(8, len(b))], logVersion)
	}
}

// TestMarkFormat: SYNCED is a sync mark of the shared format (package
// syncmark pins its bytes and fuzzes its decoder), and a SYNCED the key
// table wrote before it still reads.
func TestMarkFormat(t *testing.T) {
	got := appendMark(nil, 3, 1000)
	if m, ok := syncmark.Decode(got); !ok || m != (syncmark.Mark{Seg: 3, Seq: 1000}) {
		t.Fatalf("appendMark = %x, not the shared format", got)
	}
	old := []byte("UHKTSYN1\x03\x00\x00\x00\x00\x00\x00\x00\xe8\x03\x00\x00\x00\x00\x00\x00G\x89\xc6\xe0")
	if seg, seq, ok := decodeMark(old); !ok || seg != 3 || seq != 1000 {
		t.Fatalf("decodeMark(version 1) = %d, %d, %v", seg, seq, ok)
	}
	got[20] ^= 1
	if _, _, ok := decodeMark(got); ok {
		t.Fatal("a damaged mark decodes")
	}
}

// TestDamagedAcknowledgedRecord (issue 34, item 6): the newest segment's
// only record, acknowledged, then damaged (a byte flipped, or the segment
// cut inside it). Open names the damaged record and its offset, not "cut
// or removed", and says which records opening without SYNCED would drop.
func TestDamagedAcknowledgedRecord(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
		why    string
	}{
		{"flipped", func(b []byte) []byte { b[logHeader+20] ^= 1; return b }, "record checksum mismatch"},
		{"cut inside", func(b []byte) []byte { return b[:len(b)-5] }, "record cut short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tb, err := Open(dir, &Options{noMerge: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Add(&Batch{Added: []Key{keyOf(1), keyOf(2)}}, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := tb.Sync(); err != nil {
				t.Fatal(err)
			}
			crashed := crashCopy(t, dir)
			tb.Close()
			name := logName(crashed, 1)
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Open(crashed, &Options{noMerge: true})
			msg := fmt.Sprint(err)
			for _, want := range []string{"000001.log", "damaged record at offset 8", tc.why, "would drop records 1 to 1"} {
				if !strings.Contains(msg, want) {
					t.Errorf("Open = %v, want it to say %q", err, want)
				}
			}
			if !errors.Is(err, ErrLost) || strings.Contains(msg, "cut or removed") {
				t.Errorf("Open = %v, want ErrLost without \"cut or removed\"", err)
			}
		})
	}
}
