package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestServeRevisit: concurrent "dedupe --revisit-after" clients of one
// server print each URL once in total (the visit is atomic on the
// server); a later run prints none (not due); get, add --ttl and delete
// --prefix work through the server.
func TestServeRevisit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	// Dedupe's journals are keyed by the server's URL: orphans that other
	// tests' killed clients left for a server on the same port (ports are
	// reused) must not be finished into this one.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "idx")
	srv, addr := startServe(t, dir)
	defer srv.Process.Kill()
	var urls []string
	for i := range 3000 {
		urls = append(urls, fmt.Sprintf("https://site%d.example/p/%d", i%30, i))
	}
	outs := make([]string, 3)
	var wg sync.WaitGroup
	for k := range outs {
		in := append([]string(nil), urls...)
		rand.New(rand.NewPCG(uint64(k), 3)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		wg.Go(func() {
			out, err := cli(t, strings.Join(in, "\n")+"\n", "dedupe", "--db", addr, "--revisit-after", "1h")
			if err != nil {
				t.Error(err)
			}
			outs[k] = out
		})
	}
	wg.Wait()
	printed := map[string]int{}
	for _, out := range outs {
		for _, line := range strings.Fields(out) {
			printed[line]++
		}
	}
	for _, u := range urls {
		if printed[u] != 1 {
			t.Fatalf("%s printed %d times, want 1", u, printed[u])
		}
	}
	if out, err := cli(t, strings.Join(urls[:100], "\n"), "dedupe", "--db", addr, "--revisit-after", "1h"); err != nil || out != "" {
		t.Fatalf("second run printed %q, %v; want nothing", out, err)
	}
	out, err := cli(t, "", "get", "--db", addr, urls[0])
	if err != nil || !strings.Contains(out, "\tfirst_seen=") || !strings.Contains(out, "\tlast_seen=") {
		t.Fatalf("get through the server: %q, %v", out, err)
	}
	if _, err := cli(t, "", "add", "--db", addr, "--ttl", "1h", "--data", "x", "https://ttl.example/"); err != nil {
		t.Fatal(err)
	}
	out, err = cli(t, "", "get", "--db", addr, "https://ttl.example/")
	if err != nil || !strings.Contains(out, "\tdata=78\texpires=") {
		t.Fatalf("get of an entry with a TTL: %q, %v", out, err)
	}
	out, err = cli(t, "", "stats", "--db", addr)
	if err != nil || !strings.Contains(out, "expiring entries: 1\n") || !strings.Contains(out, "entries: 3001\n") {
		t.Fatalf("stats: %q, %v", out, err)
	}
	// About 1/16 of the 3001 entries start with 0.
	out, _ = cli(t, "", "delete", "--db", addr, "--prefix", "0", "--json")
	var n int
	if _, err := fmt.Sscanf(out, `{"deleted":%d`, &n); err != nil || n < 100 || n > 300 {
		t.Fatalf("delete --prefix 0: %q (%v)", out, err)
	}
	out, err = cli(t, "", "stats", "--db", addr)
	if err != nil || !strings.Contains(out, fmt.Sprintf("entries: %d\n", 3001-n)) {
		t.Fatalf("stats after deleting %d: %q, %v", n, out, err)
	}
}
