package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startServe runs "urlhash serve --db dir" as a child process on a free
// loopback port and returns it with its URL.
func startServe(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--db", dir, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "URLHASH_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("serve: %v", err)
	}
	_, addr, ok := strings.Cut(strings.TrimSpace(line), " on ")
	if !ok || !strings.HasPrefix(addr, "http://127.0.0.1:") {
		cmd.Process.Kill()
		t.Fatalf("serve said %q", line)
	}
	go io.Copy(io.Discard, stderr)
	return cmd, addr
}

// cli runs a urlhash command as a child and returns its stdout.
func cli(t *testing.T, stdin string, args ...string) (string, error) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "URLHASH_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader(stdin)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, errb.String())
	}
	return string(out), err
}

// TestServeDedupe: four concurrent dedupe clients of one server, each
// with the same URLs in another order, print every URL exactly once in
// total; remote export, scan and has answer as the directory does; SIGTERM
// stops the server with exit 0.
func TestServeDedupe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := filepath.Join(t.TempDir(), "idx")
	srv, addr := startServe(t, dir)
	var urls []string
	for i := range 20000 {
		urls = append(urls, fmt.Sprintf("https://site%d.example/p/%d", i%50, i))
	}
	outs := make([]string, 4)
	var wg sync.WaitGroup
	for k := range 4 {
		in := append([]string(nil), urls...)
		rand.New(rand.NewPCG(uint64(k), 9)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		wg.Go(func() {
			out, err := cli(t, strings.Join(in, "\n")+"\n", "dedupe", "--db", addr)
			if err != nil {
				t.Error(err)
			}
			outs[k] = out
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, o := range outs {
		for _, l := range strings.Fields(o) {
			seen[l]++
		}
	}
	for _, u := range urls {
		if seen[u] != 1 {
			t.Fatalf("%s printed %d times over the four clients", u, seen[u])
		}
	}
	remote := map[string]string{}
	for _, args := range [][]string{{"export"}, {"scan", "--prefix", "0a"}, {"has", "https://site1.example/p/1", "https://none.example/"}} {
		out, _ := cli(t, "", append(args, "--db", addr)...)
		remote[args[0]] = out
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	for _, args := range [][]string{{"export"}, {"scan", "--prefix", "0a"}, {"has", "https://site1.example/p/1", "https://none.example/"}} {
		out, _ := cli(t, "", append(args, "--db", dir)...)
		if out != remote[args[0]] || out == "" {
			t.Errorf("%s over the server differs from the directory (%d vs %d bytes)", args[0], len(remote[args[0]]), len(out))
		}
	}
}

// TestServeKill: kill -9 of the server while clients dedupe; after a
// restart every URL a client printed is present.
func TestServeKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := filepath.Join(t.TempDir(), "idx")
	srv, addr := startServe(t, dir)
	var mu sync.Mutex
	var printed []string
	var wg sync.WaitGroup
	for k := range 2 {
		wg.Go(func() {
			var in strings.Builder
			for i := range 100000 {
				fmt.Fprintf(&in, "https://c%d.example/%d\n", k, i)
			}
			out, _ := cli(t, in.String(), "dedupe", "--db", addr) // killed midway: an error
			if i := strings.LastIndexByte(out, '\n'); i >= 0 {
				mu.Lock()
				printed = append(printed, strings.Split(out[:i], "\n")...)
				mu.Unlock()
			}
		})
	}
	time.Sleep(400 * time.Millisecond)
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	wg.Wait()
	if len(printed) == 0 {
		t.Skip("the kill came before any answer")
	}
	srv, addr = startServe(t, dir)
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	if _, err := cli(t, strings.Join(printed, "\n")+"\n", "has", "-q", "--db", addr); err != nil {
		t.Fatalf("after the restart, some of the %d printed URLs are absent: %v", len(printed), err)
	}
	t.Logf("%d URLs printed before the kill, all present after the restart", len(printed))
}

// TestServeLogFlags: --log-format and --log-level take the documented
// values and refuse others with a usage error naming the flag.
func TestServeLogFlags(t *testing.T) {
	tests := []struct {
		format, level string
		wantErr       string // "" when accepted
		debug, info   bool   // enabled levels when accepted
	}{
		{"text", "info", "", false, true},
		{"json", "debug", "", true, true},
		{"json", "warn", "", false, false},
		{"text", "ERROR", "", false, false},
		{"xml", "info", "--log-format", false, false},
		{"text", "loud", "--log-level", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.format+"/"+tc.level, func(t *testing.T) {
			l, err := newLogger(io.Discard, tc.format, tc.level)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Enabled(t.Context(), slog.LevelDebug); got != tc.debug {
				t.Errorf("debug enabled = %v, want %v", got, tc.debug)
			}
			if got := l.Enabled(t.Context(), slog.LevelInfo); got != tc.info {
				t.Errorf("info enabled = %v, want %v", got, tc.info)
			}
		})
	}
}
