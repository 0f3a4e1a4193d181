package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStrayJournal: a dedupe client killed with a batch journalled against
// index A, then index B served on the same address: the next dedupe
// refuses the journal (naming it and both indexes) and neither prints nor
// stores A's URLs in B; the journal stays. Served again at that address, A
// gets its batch finished: its URLs are printed (issue 34 item 4).
func TestStrayJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	tmp := t.TempDir()
	cache := filepath.Join(tmp, "cache")
	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	srvA, addrA := startServe(t, dirA)

	// The client talks to A through a proxy that holds its adds: killed
	// while they hang, it leaves its batches journalled against A.
	target, _ := url.Parse(addrA)
	held := make(chan struct{}, 16)
	release := make(chan struct{})
	proxy := httputil.NewSingleHostReverseProxy(target)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/add" {
			held <- struct{}{}
			<-release
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	var urls []string
	for i := range 500 {
		urls = append(urls, fmt.Sprintf("https://a.example/%d", i))
	}
	client := childCommand("dedupe", "--db", "http://"+listen)
	client.Env = append(client.Env, "XDG_CACHE_HOME="+cache)
	client.Stdin = strings.NewReader(strings.Join(urls, "\n") + "\n")
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the client sent no add")
	}
	client.Process.Signal(syscall.SIGKILL)
	client.Wait()
	close(release)
	hs.Close()
	journals := journalFiles(t, cache, true)
	if len(journals) == 0 {
		t.Fatal("the killed client left no journal")
	}
	srvA.Process.Signal(syscall.SIGTERM)
	srvA.Wait()

	// B on the proxy's address: the next dedupe must not finish A's batch
	// into it.
	srvB, addr := startServeOn(t, dirB, listen)
	cmd := childCommand("dedupe", "--db", addr, "https://b.example/")
	cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitError {
		t.Errorf("dedupe against B with A's journal: %v, want exit %d", err, exitError)
	}
	if n := strings.Count(string(out), "https://a.example/"); n > 0 {
		t.Errorf("dedupe against B printed %d of A's URLs: %q...", n, firstLines(string(out), 3))
	}
	msg := stderr.String()
	t.Logf("dedupe against B: %s", msg)
	for _, want := range []string{"journal", "urlhash: hint:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q does not say %q", msg, want)
		}
	}
	if !strings.Contains(msg, journals[0]) && !strings.Contains(msg, filepath.Base(journals[0])) {
		t.Errorf("stderr %q names no journal file (%v)", msg, journals)
	}
	if got, err := cli(t, strings.Join(urls, "\n")+"\n", "has", "--db", addr); !strings.HasPrefix(got, "absent\t") || strings.Contains(got, "present\t") {
		t.Errorf("B holds some of A's URLs: %v\n%s", err, firstLines(got, 5))
	}
	if got := journalFiles(t, cache, true); !slices.Equal(got, journals) {
		t.Errorf("journals holding a batch after the refusal: %v, want %v kept", got, journals)
	}
	srvB.Process.Signal(syscall.SIGTERM)
	srvB.Wait()

	// A served again at the address: its batch is finished.
	srvA, _ = startServeOn(t, dirA, listen)
	cmd = childCommand("dedupe", "--db", addr)
	cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
	cmd.Stdin = strings.NewReader("")
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("dedupe against A again: %v", err)
	}
	if n := strings.Count(string(out), "https://a.example/"); n == 0 {
		t.Errorf("dedupe against A again printed no URL of its killed batch: %q", out)
	}
	srvA.Process.Signal(syscall.SIGTERM)
	srvA.Wait()
}

// TestJournalsCleared: finished dedupe runs against a server leave no
// journal file in the cache directory, empty or not.
func TestJournalsCleared(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	cache := t.TempDir()
	srv, addr := startServe(t, filepath.Join(t.TempDir(), "idx"))
	for i := range 3 {
		cmd := childCommand("dedupe", "--db", addr)
		cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
		cmd.Stdin = strings.NewReader(fmt.Sprintf("https://x.example/%d\nhttps://y.example/\n", i))
		if out, err := cmd.Output(); err != nil {
			t.Fatalf("dedupe %d: %v %s", i, err, out)
		}
	}
	if got := journalFiles(t, cache, false); len(got) != 0 {
		t.Errorf("journal files left by finished runs: %v", got)
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
}

// journalFiles lists the journal files under the cache directory cache
// (with full set, only those that are not empty).
func journalFiles(t *testing.T, cache string, full bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(cache, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil && (!full || fi.Size() > 0) {
				out = append(out, path)
			}
		}
		if os.IsNotExist(err) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
