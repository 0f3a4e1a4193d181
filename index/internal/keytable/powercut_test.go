package keytable

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHeaderlessSegment: a segment is created with its header written but
// not synced; a power loss can keep the file with 0 bytes (or part of the
// header). It holds no acknowledged record (a sync of one would have made
// the header durable too), wherever it is in the log. Seen under LazyFS
// (TestPowerLoss's sync rounds): an Open after one loss accepted the
// empty newest segment but left it empty, created the next, and a second
// loss before its merge was recorded left 000091.log (0 bytes), 000092.log
// and 000093.log: every Open refused "000091.log: log shorter than its
// header". Open must read such a segment as empty anywhere, and give a
// newest one its header, durably, before another follows it.
func TestHeaderlessSegment(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, &Options{noMerge: true})
	want := []Key{keyOf(1), keyOf(2)}
	seq, err := tb.Add(&Batch{Added: want}, make([]bool, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.SyncTo(seq); err != nil {
		t.Fatal(err)
	}
	crashed := crashCopy(t, dir) // killed with its records synced
	logs, _ := filepath.Glob(filepath.Join(crashed, "*.log"))
	slices.Sort(logs)
	n, _ := parseName(filepath.Base(logs[len(logs)-1]))
	for _, tc := range []struct {
		name  string
		bytes []byte
	}{{"0 bytes", nil}, {"part of the header", []byte(logMagic[:3])}} {
		t.Run(tc.name, func(t *testing.T) {
			d := crashCopy(t, crashed)
			// Two more segments, as two opens' new segments a power loss
			// left: the older without its header.
			if err := os.WriteFile(logName(d, n+1), tc.bytes, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(logName(d, n+2), append([]byte(logMagic), logVersion), 0o644); err != nil {
				t.Fatal(err)
			}
			tb, err := Open(d, &Options{noMerge: true})
			if err != nil {
				t.Fatalf("Open with a segment without its header before the newest: %v", err)
			}
			for i := range want {
				if ok, _, err := tb.Has(&want[i]); !ok || err != nil {
					t.Errorf("Has(%x) = %v, %v", want[i][:4], ok, err)
				}
			}
			tb.Close()
		})
	}
	t.Run("newest, 0 bytes", func(t *testing.T) {
		d := crashCopy(t, crashed)
		name := logName(d, n+1)
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := Open(d, &Options{noMerge: true})
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		if b, _ := os.ReadFile(name); len(b) != logHeader {
			t.Errorf("the newest segment has %d bytes after Open, want its %d-byte header", len(b), logHeader)
		}
	})
}
