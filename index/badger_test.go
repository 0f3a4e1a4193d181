package index

import (
	"errors"
	"syscall"
	"testing"

	"github.com/dgraph-io/badger/v4"
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
