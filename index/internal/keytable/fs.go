package keytable

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urlhash/urlhash/internal/atomicfile"
)

// fsys is the file system the table writes through: the operating
// system's, or in tests one that loses what was not synced (a power
// loss) or fails at chosen points.
type fsys interface {
	OpenFile(name string, flag int, perm os.FileMode) (file, error)
	ReadFile(name string) ([]byte, error)
	// ReadDir returns the names in dir.
	ReadDir(dir string) ([]string, error)
	Remove(name string) error
	Rename(from, to string) error
	Truncate(name string, size int64) error
	MkdirAll(dir string) error
	// SyncDir makes dir's entries (files created, renamed, removed)
	// durable.
	SyncDir(dir string) error
}

// file is an open file of an fsys.
type file interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	io.Closer
	Sync() error
	Truncate(size int64) error
	Seek(off int64, whence int) (int64, error)
	Name() string
	// Size returns the file's size.
	Size() (int64, error)
}

// osFS is the operating system's file system.
type osFS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

func (osFS) ReadDir(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	return names, err
}

func (osFS) Remove(name string) error               { return os.Remove(name) }
func (osFS) Rename(from, to string) error           { return os.Rename(from, to) }
func (osFS) Truncate(name string, size int64) error { return os.Truncate(name, size) }
func (osFS) MkdirAll(dir string) error              { return os.MkdirAll(dir, 0o755) }
func (osFS) SyncDir(dir string) error               { return atomicfile.SyncDir(dir) }

// writeFileAtomic replaces name with data through fs: written beside it,
// fsynced, renamed over it, and the directory fsynced (as
// atomicfile.WriteFile does on the operating system's).
func writeFileAtomic(fs fsys, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		err = errors.Join(err, f.Close())
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("keytable: writing %s: %w", name, err)
	}
	if err := fs.SyncDir(filepath.Dir(name)); err != nil {
		return fmt.Errorf("keytable: %w", err)
	}
	return nil
}
