package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urlhash/urlhash/internal/filelock"
	"github.com/urlhash/urlhash/store"
)

// lockFileName is the file the index's own lock is taken on.
const lockFileName = "urlhash.lock"

// dirLock is the index's own lock on its directory: exclusive for a
// writer, shared for readers, held for the life of the DB. It mirrors
// Badger's directory lock and is taken first, so that "locked by another
// process" is known by its error (filelock.ErrLocked: flock on Unix,
// LockFileEx on Windows) rather than by the text of Badger's error, which
// does not wrap it.
type dirLock struct{ f *os.File }

// lockDir takes the lock on dir. A reader of an index that has no lock
// file (made before it existed, or on read-only media) goes without: it
// still holds Badger's shared lock.
func lockDir(dir string, readOnly bool) (*dirLock, error) {
	path := filepath.Join(dir, lockFileName)
	flag, lock := os.O_RDWR|os.O_CREATE, filelock.TryLock
	if readOnly {
		flag, lock = os.O_RDONLY, filelock.TryRLock
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if readOnly && errors.Is(err, fs.ErrNotExist) {
		return &dirLock{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("index: lock %s: %w", dir, err)
	}
	if err := lock(f); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("%w: %s", store.ErrLocked, dir)
		}
		return nil, fmt.Errorf("index: lock %s: %w", dir, err)
	}
	return &dirLock{f: f}, nil
}

// release drops the lock.
func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close() // closing the file releases the lock
}
