//go:build !linux

package index

// releaseTablePages does nothing outside Linux.
func (db *DB) releaseTablePages() {}
