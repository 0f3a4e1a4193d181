//go:build !windows

package index

import "syscall"

// maxRSS returns this process's peak resident set, in bytes.
func maxRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss) * 1024
}
