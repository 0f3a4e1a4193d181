//go:build !linux

package integrity

import "os"

// dataEnd returns size outside Linux: the whole file is read.
func dataEnd(f *os.File, size int64) int64 { return size }
