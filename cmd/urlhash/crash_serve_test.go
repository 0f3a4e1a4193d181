package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
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
				cmd := childCommand("dedupe", "--db", addr)
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
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
}
