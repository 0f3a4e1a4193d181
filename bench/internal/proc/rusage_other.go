//go:build !windows

package proc

import (
	"os"
	"runtime"
	"syscall"
)

// MaxRSS returns the peak resident set of an ended process over its whole
// life, in bytes (getrusage's ru_maxrss), or 0 when unknown.
func MaxRSS(st *os.ProcessState) int64 {
	if st == nil {
		return 0
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) << 10 // KiB on Linux and the BSDs
}
