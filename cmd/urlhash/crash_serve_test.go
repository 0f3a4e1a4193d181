package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestServeDedupeKillLoop is dedupe's promise across kill -9 of clients
// and of the server, with default flags: three dedupe clients of one
// server each read every URL (in their own order) and are killed at random
// points, and in every other round the server is killed too and restarted
// at once on the same address; the killed clients are restarted at once,
// while the server may still be applying their last request. A last round
// runs to completion. Every URL the index stored must have been printed at
// least once (0 lost).
func TestServeDedupeKillLoop(t *testing.T) {
	runs := killRuns(t, 6)
	tmp := t.TempDir()
	dir, cache := filepath.Join(tmp, "idx"), filepath.Join(tmp, "cache")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	srv, addr := startServeOn(t, dir, listen)
	var urls []string
	for i := range 30000 {
		urls = append(urls, fmt.Sprintf("https://site%d.example/page/%d", i%89, i))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	printed := make(map[string]int)
	var mu sync.Mutex
	serverKills := 0
	for run := 0; run <= runs; run++ {
		final := run == runs
		var wg sync.WaitGroup
		for range 3 {
			in := append([]string(nil), urls...)
			rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
			d := time.Duration(30+rng.IntN(500)) * time.Millisecond
			wg.Go(func() {
				lines := dedupeRemoteChild(t, addr, cache, in, !final, d)
				mu.Lock()
				for _, l := range lines {
					printed[l]++
				}
				mu.Unlock()
			})
		}
		if !final && run%2 == 1 {
			time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
			srv.Process.Signal(syscall.SIGKILL)
			srv.Wait()
			serverKills++
			srv, _ = startServeOn(t, dir, listen)
		}
		wg.Wait()
	}
	lost, dups := 0, 0
	for _, u := range urls {
		switch c := printed[u]; {
		case c == 0:
			lost++
		case c > 1:
			dups += c - 1
		}
	}
	t.Logf("%d rounds of 3 killed clients (%d with the server killed too), %d URLs, %d printed, %d printed again after a crash, %d lost",
		runs, serverKills, len(urls), len(printed), dups, lost)
	if lost != 0 {
		t.Fatalf("%d stored URLs were never printed", lost)
	}
	// Every URL is stored (the last round ran to completion).
	if out, err := cli(t, strings.Join(urls, "\n")+"\n", "has", "--db", addr, "-q"); err != nil {
		t.Fatalf("has after the loop: %v %s", err, out)
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
}

// startServeOn runs "urlhash serve --db dir --listen listen" as a child
// and returns it with its URL.
func startServeOn(t *testing.T, dir, listen string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--db", dir, "--listen", listen)
	cmd.Env = append(os.Environ(), "URLHASH_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	_, addr, ok := strings.Cut(strings.TrimSpace(line), " on ")
	if !ok {
		t.Fatalf("serve said %q", line)
	}
	go io.Copy(io.Discard, stderr)
	return cmd, addr
}

// dedupeRemoteChild runs "urlhash dedupe --db addr" (default flags, the
// journal under cache) on in, killed with SIGKILL after d when kill is
// set, and returns the whole lines it printed. A run that fails (its
// server was killed) returns what it printed.
func dedupeRemoteChild(t *testing.T, addr, cache string, in []string, kill bool, d time.Duration) []string {
	cmd := exec.Command(os.Args[0], "dedupe", "--db", addr)
	cmd.Env = append(os.Environ(), "URLHASH_TEST_MAIN=1", "XDG_CACHE_HOME="+cache)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Error(err)
		return nil
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Error(err)
		return nil
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return nil
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, u := range in {
			if _, err := w.WriteString(u + "\n"); err != nil {
				return
			}
		}
		w.Flush()
		stdin.Close()
	}()
	if kill {
		time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
	}
	b, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil && !kill {
		t.Errorf("dedupe: %v: %s", err, stderr.String())
	}
	text := string(b)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	} else {
		return nil
	}
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
