package index

import (
	"os"
	"syscall"
)

// fileKey identifies a file whatever its name: device and inode.
type fileKey struct{ dev, ino uint64 }

// keyOf returns the identity of the file fi describes.
func keyOf(fi os.FileInfo) (fileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{uint64(st.Dev), st.Ino}, true // Dev is 32 bits on some platforms
}

// openFiles returns the files this process holds open (its descriptors
// in /proc/self/fd), and whether it could list them.
func openFiles() (map[fileKey]bool, bool) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, false
	}
	open := make(map[fileKey]bool, len(ents))
	for _, e := range ents {
		fi, err := os.Stat("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if k, ok := keyOf(fi); ok {
			open[k] = true
		}
	}
	return open, true
}
