package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
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
// least once (0 lost). It runs key-only, and with revisits and the URLs'
// text (entries with columns and values, in the key table): there every
// URL must come back with its text and its first and last seen times.
func TestServeDedupeKillLoop(t *testing.T) {
	for _, mode := range []struct {
		name  string
		flags []string
	}{
		{"key-only", nil},
		{"revisits", []string{"--revisit-after", "240h", "--store-url"}},
	} {
		t.Run(mode.name, func(t *testing.T) { serveDedupeKillLoop(t, mode.flags) })
	}
}

func serveDedupeKillLoop(t *testing.T, flags []string) {
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
				cmd := childCommand(append([]string{"dedupe", "--db", addr}, flags...)...)
				cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
				lines := dedupeChild(t, cmd, in, !final, d)
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
	checkPrinted(t, urls, printed, addr, fmt.Sprintf("%d rounds of 3 killed clients (%d with the server killed too)", runs, serverKills))
	if len(flags) > 0 {
		out, err := cli(t, strings.Join(urls, "\n")+"\n", "get", "--db", addr, "--json")
		if err != nil {
			t.Fatalf("get after the loop: %v", err)
		}
		bad := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var o struct {
				Input     string `json:"input"`
				Text      string `json:"text"`
				FirstSeen string `json:"first_seen"`
				LastSeen  string `json:"last_seen"`
			}
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatal(err)
			}
			if o.Text != o.Input || o.FirstSeen == "" || o.LastSeen == "" {
				if bad++; bad < 5 {
					t.Errorf("get after the loop: %s", line)
				}
			}
		}
		if bad > 0 {
			t.Fatalf("%d of %d URLs without their text or times", bad, len(urls))
		}
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
}
