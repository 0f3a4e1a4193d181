//go:build !windows

package index

import (
	"fmt"
	"io/fs"
	"syscall"
)

// statfsFree returns the bytes available to an unprivileged user on the
// filesystem of dir.
func statfsFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("index: free space of %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// allocatedSize returns the bytes the file takes on the disk: its size,
// or less when it is sparse.
func allocatedSize(info fs.FileInfo) int64 {
	n := info.Size()
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		n = min(n, st.Blocks*512)
	}
	return n
}
