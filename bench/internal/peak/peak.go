// Package peak reads what the benchmarks report of a running process.
package peak

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS returns the peak resident set of process pid in bytes (VmHWM in
// /proc/PID/status), or 0 when it cannot be read.
func RSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
