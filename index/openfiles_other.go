//go:build !linux

package index

import "os"

// fileKey identifies a file whatever its name.
type fileKey struct{ dev, ino uint64 }

// keyOf cannot tell a file's identity outside Linux.
func keyOf(os.FileInfo) (fileKey, bool) { return fileKey{}, false }

// openFiles cannot list the files this process holds open outside Linux.
func openFiles() (map[fileKey]bool, bool) { return nil, false }
