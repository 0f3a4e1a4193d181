package proc

import "os"

// MaxRSS returns 0 on Windows: an ended process's usage there holds its
// times only, not its peak working set.
func MaxRSS(st *os.ProcessState) int64 { return 0 }
