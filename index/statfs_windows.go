package index

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/windows"
)

// statfsFree returns the bytes available to the user (quotas counted) on
// the volume of dir.
func statfsFree(dir string) (int64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, fmt.Errorf("index: free space of %s: %w", dir, err)
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, fmt.Errorf("index: free space of %s: %w", dir, err)
	}
	return int64(min(avail, 1<<63-1)), nil
}

// allocatedSize returns the file's size: Windows' FileInfo does not say
// how much of a sparse file is allocated.
func allocatedSize(info fs.FileInfo) int64 { return info.Size() }
