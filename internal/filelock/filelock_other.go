//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || windows)

package filelock

import "os"

func tryLock(f *os.File, exclusive bool) error { return ErrUnsupported }
