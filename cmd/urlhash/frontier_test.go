package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlhash/urlhash/frontier/urlfrontier"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// startFrontier runs "urlhash serve --db dir --frontier grpcAddr" as a
// child and returns it with the gRPC client of its frontier and its HTTP
// address.
func startFrontier(t *testing.T, dir, grpcAddr string) (*exec.Cmd, urlfrontier.URLFrontierClient, string) {
	t.Helper()
	cmd := childCommand("serve", "--db", dir, "--listen", "127.0.0.1:0", "--frontier", grpcAddr)
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
	r := bufio.NewReader(stderr)
	first, _ := r.ReadString('\n')
	second, err := r.ReadString('\n')
	_, httpAddr, _ := strings.Cut(strings.TrimSpace(first), " on ")
	g, ok := strings.CutPrefix(strings.TrimSpace(second), "urlhash: frontier on grpc://")
	if err != nil || !ok {
		t.Fatalf("serve said %q then %q (%v)", first, second, err)
	}
	go io.Copy(io.Discard, r)
	conn, err := grpc.NewClient(g, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return cmd, urlfrontier.NewURLFrontierClient(conn), httpAddr
}

func grpcGetURLs(t *testing.T, c urlfrontier.URLFrontierClient, p *urlfrontier.GetParams) []string {
	t.Helper()
	s, err := c.GetURLs(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		in, err := s.Recv()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, in.GetUrl())
	}
}

// startRestartable starts "urlhash serve --frontier" on a new index at a
// free address that a restart listens on again, with no politeness delay.
func startRestartable(t *testing.T) (dir, addr string, srv *exec.Cmd, c urlfrontier.URLFrontierClient) {
	t.Helper()
	dir, addr = filepath.Join(t.TempDir(), "idx"), freeAddr(t)
	srv, c, _ = startFrontier(t, dir, addr)
	if _, err := c.SetDelay(context.Background(), &urlfrontier.QueueDelayParams{DelayRequestable: 0}); err != nil {
		t.Fatal(err)
	}
	return dir, addr, srv, c
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestFrontierKill: what the frontier acknowledged survives kill -9 of
// the server: every URL acked OK is handed out after the restart, the
// completed ones never again, and those in transit at the kill at once
// (at least once, never lost); the settings stay.
func TestFrontierKill(t *testing.T) {
	dir, addr, srv, c := startRestartable(t)
	ctx := context.Background()
	const n = 3000
	pd, err := c.PutDiscovered(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	go func() {
		for i := 0; i < n; i += 50 {
			b := &urlfrontier.DiscoveredBatch{ID: fmt.Sprint(i)}
			for j := i; j < i+50; j++ {
				b.Items = append(b.Items, &urlfrontier.URLInfo{Url: fmt.Sprintf("https://h%d.example/p%d", j%37, j)})
			}
			pd.Send(b)
		}
		pd.CloseSend()
	}()
	for range n / 50 {
		a, err := pd.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var i int
		fmt.Sscan(a.GetID(), &i)
		for j, st := range a.GetStatuses() {
			if st == urlfrontier.AckMessage_OK {
				acked[fmt.Sprintf("https://h%d.example/p%d", (i+j)%37, i+j)] = true
			}
		}
	}
	if len(acked) != n {
		t.Fatalf("%d of %d acked OK", len(acked), n)
	}
	// Hand out some and complete half of them; the other half stays in
	// transit (for an hour) when the server is killed.
	handed := grpcGetURLs(t, c, &urlfrontier.GetParams{MaxUrlsPerQueue: 10, DelayRequestable: 3600})
	if len(handed) != 370 {
		t.Fatalf("handed out %d, want 370", len(handed))
	}
	pu, err := c.PutURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	completed := map[string]bool{}
	for i, u := range handed {
		if i%2 == 0 {
			pu.Send(&urlfrontier.URLItem{Item: &urlfrontier.URLItem_Known{Known: &urlfrontier.KnownURLItem{Info: &urlfrontier.URLInfo{Url: u}}}})
			completed[u] = true
		}
	}
	for range completed {
		if a, err := pu.Recv(); err != nil || a.GetStatus() != urlfrontier.AckMessage_OK {
			t.Fatalf("completing: %v %v", a, err)
		}
	}
	if _, err := c.SetDelay(ctx, &urlfrontier.QueueDelayParams{Key: "h1.example", DelayRequestable: 3600}); err != nil {
		t.Fatal(err)
	}
	srv.Process.Kill()
	srv.Wait()

	srv, c, _ = startFrontier(t, dir, addr)
	got := map[string]int{}
	for range 20 {
		urls := grpcGetURLs(t, c, &urlfrontier.GetParams{DelayRequestable: 3600})
		if len(urls) == 0 {
			break
		}
		for _, u := range urls {
			got[u]++
		}
	}
	for u := range completed {
		if got[u] > 0 {
			t.Errorf("completed %s handed out again after the restart", u)
		}
	}
	var missing []string
	for u := range acked {
		if !completed[u] && got[u] == 0 {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d acked URLs not handed out after the restart, e.g. %s", len(missing), missing[0])
	}
	// h1.example kept its delay of an hour: having handed out since the
	// restart, it hands out nothing more; h2.example does.
	pu, err = c.PutURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://h1.example/new", "https://h2.example/new"} {
		pu.Send(&urlfrontier.URLItem{Item: &urlfrontier.URLItem_Discovered{Discovered: &urlfrontier.DiscoveredURLItem{Info: &urlfrontier.URLInfo{Url: u}}}})
		if a, err := pu.Recv(); err != nil || a.GetStatus() != urlfrontier.AckMessage_OK {
			t.Fatalf("put %s: %v %v", u, a, err)
		}
	}
	if urls := grpcGetURLs(t, c, &urlfrontier.GetParams{}); strings.Join(urls, " ") != "https://h2.example/new" {
		t.Errorf("after the restart, handed out %q; want only h2.example's (h1.example's delay is an hour)", urls)
	}
	st, err := c.GetStats(ctx, &urlfrontier.QueueWithinCrawlParams{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st.GetCounts()["completed"] != uint64(len(completed)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the recount after a crash
		st, _ = c.GetStats(ctx, &urlfrontier.QueueWithinCrawlParams{})
	}
	if st.GetCounts()["completed"] != uint64(len(completed)) || st.GetSize() != uint64(n-len(completed)+2) {
		t.Errorf("stats after the restart: size %d, completed %d; want %d, %d", st.GetSize(), st.GetCounts()["completed"], n-len(completed)+2, len(completed))
	}
}

// TestFrontierKillPuts: kill -9 of the server while four clients put
// batches (each acknowledged after one fsync): after the restart every URL
// acked OK is known, and every URL the frontier knows (a put again answers
// SKIPPED) is handed out: none is known without its place in a queue.
func TestFrontierKillPuts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir, addr, srv, c := startRestartable(t)
	ctx := context.Background()
	url := func(i int) string { return fmt.Sprintf("https://h%d.example/p%d", i%97, i) }
	const clients, batches = 4, 1000
	var mu sync.Mutex
	acked := map[string]bool{}
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for k := range clients {
		wg.Go(func() {
			pd, err := c.PutDiscovered(ctx)
			if err != nil {
				return
			}
			go func() {
				for b := k; b < batches; b += clients {
					db := &urlfrontier.DiscoveredBatch{ID: fmt.Sprint(b)}
					for j := b * 50; j < b*50+50; j++ {
						db.Items = append(db.Items, &urlfrontier.URLInfo{Url: url(j)})
					}
					if pd.Send(db) != nil {
						return
					}
				}
				pd.CloseSend()
			}()
			for {
				a, err := pd.Recv()
				if err != nil {
					return // the kill, or the end
				}
				var b int
				fmt.Sscan(a.GetID(), &b)
				mu.Lock()
				for j, st := range a.GetStatuses() {
					if st == urlfrontier.AckMessage_OK {
						acked[url(b*50+j)] = true
					}
				}
				mu.Unlock()
			}
		})
	}
	go func() {
		defer close(killed)
		for {
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			if n >= 5000 {
				srv.Process.Kill()
				srv.Wait()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	<-killed
	wg.Wait()
	if len(acked) == batches*50 {
		t.Fatal("every put was acked before the kill: nothing was cut")
	}

	_, c, _ = startFrontier(t, dir, addr)
	// Put everything again: what the frontier knows answers SKIPPED.
	known := map[string]bool{}
	pu, err := c.PutURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := range batches * 50 {
			pu.Send(&urlfrontier.URLItem{Item: &urlfrontier.URLItem_Discovered{Discovered: &urlfrontier.DiscoveredURLItem{Info: &urlfrontier.URLInfo{Url: url(i)}}}})
		}
		pu.CloseSend()
	}()
	for range batches * 50 {
		a, err := pu.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if a.GetStatus() == urlfrontier.AckMessage_SKIPPED {
			known[a.GetID()] = true
		}
	}
	for u := range acked {
		if !known[u] {
			t.Fatalf("%s acked before the kill, new after it", u)
		}
	}
	handed := map[string]bool{}
	for {
		urls := grpcGetURLs(t, c, &urlfrontier.GetParams{DelayRequestable: 3600})
		if len(urls) == 0 {
			break
		}
		for _, u := range urls {
			handed[u] = true
		}
	}
	missing := 0
	for u := range known {
		if !handed[u] {
			missing++
		}
	}
	t.Logf("%d of %d URLs acked before the kill, %d known after it", len(acked), batches*50, len(known))
	if missing > 0 {
		t.Errorf("%d URLs known after the restart and never handed out", missing)
	}
}
