// Package proc runs and measures the processes of the benchmark commands.
package proc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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

// RSS returns the resident set of process pid now in bytes (VmRSS), or 0
// when it cannot be read.
func RSS(pid int) int64 {
	kb, ok := statusKB(pid, "VmRSS")
	if !ok {
		return 0
	}
	return kb[0] << 10
}

// statusKB returns the fields of /proc/PID/status named (in kB, 0 when
// absent), or false when it cannot be read.
func statusKB(pid int, names ...string) ([]int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, false
	}
	out := make([]int64, len(names))
	for _, line := range strings.Split(string(b), "\n") {
		for i, n := range names {
			if v, ok := strings.CutPrefix(line, n+":"); ok {
				out[i], _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			}
		}
	}
	return out, true
}

// A Server is a running "urlhash serve".
type Server struct {
	// Addr is its location for --db: http://127.0.0.1:PORT.
	Addr string
	// GRPC is its frontier's gRPC address (HOST:PORT) when it was started
	// with --frontier.
	GRPC string
	cmd  *exec.Cmd
	// The largest RssAnon and RssFile seen (bytes), sampled every 20 ms
	// until Stop: the kernel keeps the peak of their sum only (VmHWM).
	mu         sync.Mutex
	anon, file int64
	stop, done chan struct{}
	cpu        time.Duration // user + system CPU, read at Stop
	lifePeak   int64         // maxrss of the whole life, read after Stop
}

// CPUTime returns the user and system CPU time process pid has used
// (/proc/PID/stat, in clock ticks of 10 ms), or 0.
func CPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// After the command name, which may hold spaces, in parentheses:
	// state is field 3, utime 14 and stime 15.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// CPU returns the CPU time (user and system) the server used, read at
// Stop: a cost that other processes running at the same time disturb
// much less than they disturb wall time.
func (s *Server) CPU() time.Duration { return s.cpu }

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
	s := &Server{Addr: addr, cmd: cmd, stop: make(chan struct{}), done: make(chan struct{})}
	for _, f := range flags {
		if f == "--frontier" {
			line, err := r.ReadString('\n')
			g, ok := strings.CutPrefix(strings.TrimSpace(line), "urlhash: frontier on grpc://")
			if err != nil || !ok {
				cmd.Process.Kill()
				cmd.Wait()
				return nil, fmt.Errorf("urlhash serve said %q (%v), not its frontier's address", line, err)
			}
			s.GRPC = g
		}
	}
	go io.Copy(io.Discard, r)
	go s.sample()
	return s, nil
}

// sample records the peaks of RssAnon and RssFile until Stop.
func (s *Server) sample() {
	defer close(s.done)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if v, ok := statusKB(s.cmd.Process.Pid, "RssAnon", "RssFile"); ok {
			s.mu.Lock()
			s.anon, s.file = max(s.anon, v[0]<<10), max(s.file, v[1]<<10)
			s.mu.Unlock()
		}
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// PeakSplit returns the largest RssAnon (heap, stacks) and RssFile
// (mapped files: the binary, the index's) sampled, in bytes; each peaked
// at its own moment, so their sum may exceed the peak RSS.
func (s *Server) PeakSplit() (anon, file int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.anon, s.file
}

// Stop stops the server as an operator would (SIGTERM: it finishes its
// requests and syncs) and returns its peak RSS.
func (s *Server) Stop() (peakRSS int64) {
	peakRSS = PeakRSS(s.cmd.Process.Pid)
	s.cpu = CPUTime(s.cmd.Process.Pid)
	close(s.stop)
	<-s.done
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	s.lifePeak = MaxRSS(s.cmd.ProcessState)
	return peakRSS
}

// Kill kills the server outright (SIGKILL) and returns its peak RSS.
func (s *Server) Kill() (peakRSS int64) {
	peakRSS = PeakRSS(s.cmd.Process.Pid)
	close(s.stop)
	<-s.done
	s.cmd.Process.Kill()
	s.cmd.Wait()
	return peakRSS
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// A Redis is a running redis-server as the benchmarks run it: a unix
// socket, the append-only file fsynced every second, no snapshots.
type Redis struct {
	Socket string
	cmd    *exec.Cmd
}

// StartRedis starts redis-server (Debian's redis-server package) with its
// files in dir and returns once its socket exists.
func StartRedis(dir string) (*Redis, error) {
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("redis-server (apt-get install redis-server): %v", err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			return &Redis{Socket: sock, cmd: cmd}, nil
		}
		if i > 100 {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, fmt.Errorf("redis-server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pid returns redis-server's process id.
func (r *Redis) Pid() int { return r.cmd.Process.Pid }

// Stop stops redis-server (SIGTERM) and waits for it.
func (r *Redis) Stop() {
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.cmd.Wait()
}

// LifetimePeakRSS returns, after Stop, the server's peak RSS over its
// whole life, its shutdown (which writes the filter's snapshot) included;
// Stop's figure ends before the shutdown.
func (s *Server) LifetimePeakRSS() int64 { return s.lifePeak }
