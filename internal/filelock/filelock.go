// Package filelock takes advisory locks on open files, the same way on
// every platform urlhash supports: flock(2) on Linux, macOS and the BSDs,
// LockFileEx on Windows. A lock is released when its file is closed (or
// its process ends), so a crashed holder never leaves one behind.
//
// The index locks its directory with it (index/lock.go), and dedupe its
// journals.
package filelock

import (
	"errors"
	"os"
)

// ErrLocked is returned, wrapped, by TryLock and TryRLock when another
// open file (of this process or another) holds a lock that conflicts. Use
// errors.Is.
var ErrLocked = errors.New("filelock: locked by another process")

// ErrUnsupported is returned on a platform where files cannot be locked.
var ErrUnsupported = errors.New("filelock: not supported on this platform")

// TryLock takes an exclusive lock on f without waiting: ErrLocked when
// another holds a lock on it.
func TryLock(f *os.File) error { return tryLock(f, true) }

// TryRLock takes a shared lock on f without waiting: ErrLocked when
// another holds an exclusive one. Any number of shared locks coexist.
func TryRLock(f *os.File) error { return tryLock(f, false) }
