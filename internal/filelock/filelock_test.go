package filelock_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/urlhash/urlhash/internal/filelock"
)

// open opens path afresh: locks belong to an open file, so two opens in
// one process conflict as two processes would.
func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestLocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, b, c := open(t, path), open(t, path), open(t, path)

	// Shared locks coexist; an exclusive one waits for none of them.
	if err := filelock.TryRLock(a); err != nil {
		t.Fatal(err)
	}
	if err := filelock.TryRLock(b); err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	if err := filelock.TryLock(c); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("exclusive beside shared: %v, want ErrLocked", err)
	}
	// Closing releases.
	a.Close()
	b.Close()
	if err := filelock.TryLock(c); err != nil {
		t.Fatalf("exclusive once the shared are closed: %v", err)
	}
	d := open(t, path)
	if err := filelock.TryRLock(d); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("shared beside exclusive: %v, want ErrLocked", err)
	}
	if err := filelock.TryLock(d); !errors.Is(err, filelock.ErrLocked) {
		t.Fatalf("exclusive beside exclusive: %v, want ErrLocked", err)
	}
	c.Close()
	if err := filelock.TryLock(d); err != nil {
		t.Fatalf("exclusive once the holder closed: %v", err)
	}
}

// ExampleTryLock locks a file that a second open then finds locked.
func ExampleTryLock() {
	dir, _ := os.MkdirTemp("", "filelock")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.lock")
	holder, _ := os.Create(path)
	defer holder.Close()
	if err := filelock.TryLock(holder); err != nil {
		panic(err)
	}
	other, _ := os.Open(path)
	defer other.Close()
	err := filelock.TryRLock(other)
	fmt.Println(errors.Is(err, filelock.ErrLocked))
	// Output: true
}
