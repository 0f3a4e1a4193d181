package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "state")
	for _, content := range []string{"first\n", "second, longer than the first\n", ""} {
		if err := WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("after writing %q the file holds %q", content, got)
		}
	}
	info, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file (no temporary left)", len(entries))
	}
}

func TestWriteFileFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "state")
	if err := WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory where the temporary file must go makes the write fail.
	if err := os.Mkdir(name+".tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(name, []byte("new"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "writing "+name) {
		t.Fatalf("error %v, want one naming the file", err)
	}
	got, _ := os.ReadFile(name)
	if string(got) != "old" {
		t.Errorf("a failed write left %q, want the old content", got)
	}
}

func TestSyncDirNamesMissingDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	err := SyncDir(missing)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("SyncDir of a missing directory: %v, want an error naming it", err)
	}
}

// TestWriteFailureKeepsOld: a write function that fails partway leaves
// the old content, no temporary file, and its error.
func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "state")
	if err := WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	errFull := errors.New("disk full")
	err := Write(name, 0o644, func(f *os.File) error {
		if _, err := f.WriteString("half of the new"); err != nil {
			return err
		}
		return errFull
	})
	if !errors.Is(err, errFull) || !strings.Contains(err.Error(), "writing "+name) {
		t.Fatalf("error %v, want disk full naming the file", err)
	}
	if got, _ := os.ReadFile(name); string(got) != "old" {
		t.Errorf("a failed write left %q, want the old content", got)
	}
	if _, err := os.Stat(name + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
}
