// Package proc runs and measures the processes of the benchmark commands.
package proc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// PeakRSS returns the peak resident set of process pid in bytes (VmHWM in
// /proc/PID/status), or 0 when it cannot be read.
func PeakRSS(pid int) int64 {
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

// A Server is a running "urlhash serve".
type Server struct {
	// Addr is its location for --db: http://127.0.0.1:PORT.
	Addr string
	cmd  *exec.Cmd
}

// Serve starts bin serve --db db (and flags) on a free loopback port and
// returns once it is ready. Its stderr is drained, so that its logs never
// stall it.
func Serve(bin, db string, flags ...string) (*Server, error) {
	cmd := exec.Command(bin, append([]string{"serve", "--db", db, "--listen", "127.0.0.1:0"}, flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	_, addr, ok := strings.Cut(strings.TrimSpace(line), " on ")
	if err != nil || !ok || !strings.HasPrefix(addr, "http://127.0.0.1:") {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("urlhash serve said %q (%v)", line, err)
	}
	go io.Copy(io.Discard, r)
	return &Server{Addr: addr, cmd: cmd}, nil
}

// Stop stops the server as an operator would (SIGTERM: it finishes its
// requests and syncs) and returns its peak RSS.
func (s *Server) Stop() (peakRSS int64) {
	peakRSS = PeakRSS(s.cmd.Process.Pid)
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	return peakRSS
}
