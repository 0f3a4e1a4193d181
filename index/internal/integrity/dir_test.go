package integrity

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/store"
)

// Check of directories without a MANIFEST, whose files are made up: what
// Inspect sees, what Check says, and which files a writable Check removes
// (only memtable logs of zero bytes).
func TestCheckWithoutManifest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]int // name: size
		readOnly bool
		wantErr  error  // nil: Check passes
		wantMsg  string // in the error
		removed  []string
		foreign  []string
		crashed  bool
	}{
		{name: "empty"},
		{name: "the tools' own files", files: map[string]int{"urlhash.lock": 0, "urlhash.synced": 8}},
		{name: "foreign names", files: map[string]int{"notes.txt": 3, "lost+found": 0}, foreign: []string{"notes.txt"}},
		{name: "tables without a MANIFEST", files: map[string]int{"000001.sst": 100, "000002.sst": 100},
			wantErr: store.ErrCorrupt, wantMsg: "no MANIFEST but 000001.sst, 000002.sst"},
		{name: "an empty memtable log, writable", files: map[string]int{"00001.mem": 0},
			removed: []string{"00001.mem"}, crashed: true},
		{name: "an empty memtable log, read-only", files: map[string]int{"00001.mem": 0}, readOnly: true,
			wantErr: store.ErrCorrupt, wantMsg: "no MANIFEST but 00001.mem", crashed: true},
		{name: "a memtable log with data", files: map[string]int{"00001.mem": 64},
			wantErr: store.ErrCorrupt, wantMsg: "no MANIFEST but 00001.mem", crashed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, size := range tc.files {
				if name == "lost+found" {
					if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Inspect(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Exists || s.Manifest {
				t.Fatalf("Inspect = %+v", s)
			}
			slices.Sort(s.Foreign)
			if !slices.Equal(s.Foreign, tc.foreign) {
				t.Errorf("Foreign = %v, want %v", s.Foreign, tc.foreign)
			}
			if s.crashed() != tc.crashed {
				t.Errorf("crashed = %v, want %v", s.crashed(), tc.crashed)
			}
			bo := badger.DefaultOptions(dir)
			bo.ReadOnly = tc.readOnly
			tables, err := Check(dir, &s, &bo, nil)
			if !errors.Is(err, tc.wantErr) || (err != nil) != (tc.wantErr != nil) {
				t.Fatalf("Check = %v, want %v", err, tc.wantErr)
			}
			if err != nil && (!strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), RecoverHint(dir))) {
				t.Errorf("Check = %q, want it to say %q and end with the hint", err, tc.wantMsg)
			}
			if len(tables) != 0 {
				t.Errorf("Check listed %d tables", len(tables))
			}
			for name := range tc.files {
				_, err := os.Stat(filepath.Join(dir, name))
				if gone := errors.Is(err, os.ErrNotExist); gone != slices.Contains(tc.removed, name) {
					t.Errorf("%s gone = %v", name, gone)
				}
			}
		})
	}
	s, err := Inspect(filepath.Join(t.TempDir(), "missing"))
	if err != nil || s.Exists || s.HasData() {
		t.Errorf("Inspect(missing) = %+v, %v", s, err)
	}
}

// TableNames names at most five tables and counts the rest.
func TestTableNames(t *testing.T) {
	for _, tc := range []struct {
		ids  []uint64
		want string
	}{
		{nil, ""},
		{[]uint64{1}, "000001.sst"},
		{[]uint64{1, 2, 3, 4, 5, 6, 7}, "000001.sst, 000002.sst, 000003.sst, 000004.sst, 000005.sst, and 2 more"},
	} {
		if got := TableNames(tc.ids); got != tc.want {
			t.Errorf("TableNames(%v) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}
