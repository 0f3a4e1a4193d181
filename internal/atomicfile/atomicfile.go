// Package atomicfile replaces small files so that a crash leaves either
// the old content or the new, never a mix, and a rename that was
// reported done survives a power cut: the file is written beside its
// name, fsynced, renamed over it, and its directory fsynced.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile replaces the file name with data, with permissions perm if it
// is created. Its temporary file is name + ".tmp", removed on failure. An
// error names the file.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	return Write(name, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// Write replaces the file name with what write writes to f, as WriteFile
// does, for contents too large to hold in memory.
func Write(name string, perm os.FileMode, write func(f *os.File) error) error {
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err == nil {
		err = write(f)
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return SyncDir(filepath.Dir(name))
}

// SyncDir makes the entries of directory dir (files created, renamed or
// removed in it) durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
