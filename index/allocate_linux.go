package index

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// allocate gives the file name its disk blocks up to size, keeping its
// contents and its size (FALLOC_FL_KEEP_SIZE: a log Badger truncated
// meanwhile is not lengthened again). A filesystem without fallocate is
// left as it is.
func allocate(name string, size int64) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	defer f.Close()
	const keepSize = 0x01 // FALLOC_FL_KEEP_SIZE
	err = syscall.Fallocate(int(f.Fd()), keepSize, 0, size)
	switch {
	case err == nil, errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS):
		return nil
	}
	return fmt.Errorf("cannot allocate the blocks of %s: %w", name, err)
}
