package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlhash/urlhash/bench/internal/proc"
	"github.com/urlhash/urlhash/frontier/urlfrontier"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The frontier benchmark (issue 36): N discovered URLs over frontierHosts
// hosts put by frontierClients concurrent clients in batches of
// frontierBatch (a page's outlinks), then drained by as many clients and
// marked completed; against the scrapy-redis layout on Redis in the same
// run: SADD of the request fingerprint, ZADD of the serialised request
// into one priority queue, ZPOPMIN batches to drain.
const (
	frontierClients = 4
	frontierBatch   = 50
	// frontierWindow is how many batches a client has in flight.
	frontierWindow = 8
	// redisPop is the ZPOPMIN count of the Redis drain.
	redisPop = 500
)

// frontierHosts is the number of hosts (queues) of the frontier scenario.
var frontierHosts = 10000

// frontierURLs returns the URLs of the frontier scenario: urls.txt's paths
// spread over frontierHosts hosts, and the number of identities they hold.
func frontierURLs(w *work) ([]string, int, error) {
	lines, err := readLines(w.path("urls.txt"))
	if err != nil {
		return nil, 0, err
	}
	out := make([]string, 0, len(lines))
	ids := map[[16]byte]bool{}
	for i, l := range lines {
		u, err := url.Parse(l)
		if err != nil {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(l))
		s := fmt.Sprintf("https://h%d.example%s", (h.Sum32()+uint32(i))%uint32(frontierHosts), u.EscapedPath())
		if u.RawQuery != "" {
			s += "?" + u.RawQuery
		}
		id, err := urlhash.Default.Hash(s)
		if err != nil {
			continue
		}
		ids[[16]byte(id[:16])] = true
		out = append(out, s)
	}
	return out, len(ids), nil
}

type phase struct {
	put, drain time.Duration
	rss        int64
	anon, file int64 // peaks of RssAnon and RssFile (urlhash only)
	// The peaks of the put's server and of the restarted one that
	// drains, and the resident set of a server that restarted with every
	// URL queued, once it handed out the first (urlhash only).
	putRSS, drainRSS, openRSS int64
	disk                      int64
	handed                    int64
	restart                   time.Duration // clean restart to the first URL
	killed                    time.Duration // restart after kill -9 to the first URL
}

func frontierBench(w *work) error {
	urls, distinct, err := frontierURLs(w)
	if err != nil {
		return err
	}
	fmt.Printf("\nfrontier: %d discovered URLs (%d identities) over %d hosts, %d clients, batches of %d; drained and completed\n",
		len(urls), distinct, frontierHosts, frontierClients, frontierBatch)
	ours, err := frontierOurs(w, urls)
	if err != nil {
		return fmt.Errorf("urlhash: %w", err)
	}
	redis, err := frontierRedis(w, urls)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if ours.handed != int64(distinct) || redis.handed != int64(distinct) {
		fmt.Fprintf(os.Stderr, "bench: note: frontier: handed out %d (urlhash) and %d (Redis) of %d identities\n", ours.handed, redis.handed, distinct)
	}
	const row = "%-34s %9s %9s %12s %10s %12s\n"
	fmt.Printf(row, "", "put s", "drain s", "URLs/s", "peak MiB", "disk B/URL")
	for _, r := range []struct {
		name string
		p    phase
	}{{"urlhash serve --frontier (gRPC)", ours}, {"Redis (scrapy-redis layout)", redis}} {
		total := r.p.put + r.p.drain
		fmt.Printf(row, r.name, fmt.Sprintf("%.2f", r.p.put.Seconds()), fmt.Sprintf("%.2f", r.p.drain.Seconds()),
			fmt.Sprintf("%.0f", float64(len(urls))/total.Seconds()), fmt.Sprintf("%.0f", float64(r.p.rss)/(1<<20)),
			fmt.Sprintf("%.1f", float64(r.p.disk)/float64(distinct)))
	}
	fmt.Printf("urlhash / Redis: throughput %.2fx, peak RSS %.2fx\n",
		(redis.put+redis.drain).Seconds()/(ours.put+ours.drain).Seconds(), float64(ours.rss)/float64(redis.rss))
	fmt.Printf("urlhash peak RssAnon %.0f MiB (heap, stacks), RssFile %.0f MiB (mapped files), each at its own moment\n",
		float64(ours.anon)/(1<<20), float64(ours.file)/(1<<20))
	fmt.Printf("urlhash peak RSS of the put's server %.0f MiB, of the restarted server that drains %.0f MiB; restarted with every URL queued, after its first URL: %.0f MiB\n",
		float64(ours.putRSS)/(1<<20), float64(ours.drainRSS)/(1<<20), float64(ours.openRSS)/(1<<20))
	fmt.Printf("urlhash restart with %d URLs queued, to the first URL of GetURLs: %.3f s (SIGTERM), %.3f s (kill -9)\n",
		distinct, ours.restart.Seconds(), ours.killed.Seconds())
	return nil
}

// split keeps the peaks of a stopped server's RssAnon and RssFile.
func (p *phase) split(srv *proc.Server) {
	a, f := srv.PeakSplit()
	p.anon, p.file = max(p.anon, a), max(p.file, f)
}

func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func dial(addr string) (urlfrontier.URLFrontierClient, *grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return urlfrontier.NewURLFrontierClient(conn), conn, nil
}

// shards splits urls between the clients.
func shards(urls []string) [][]string {
	out := make([][]string, frontierClients)
	for i, u := range urls {
		out[i%frontierClients] = append(out[i%frontierClients], u)
	}
	return out
}

func frontierOurs(w *work, urls []string) (phase, error) {
	var p phase
	db := w.path("db-frontier")
	os.RemoveAll(db)
	srv, err := proc.Serve(w.urlhash, db, "--frontier", "127.0.0.1:0")
	if err != nil {
		return p, err
	}
	c, conn, err := dial(srv.GRPC)
	if err != nil {
		srv.Stop()
		return p, err
	}
	ctx := context.Background()
	if _, err := c.SetDelay(ctx, &urlfrontier.QueueDelayParams{DelayRequestable: 0}); err != nil {
		srv.Stop()
		return p, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, frontierClients)
	for k, part := range shards(urls) {
		wg.Go(func() { errs[k] = putDiscovered(ctx, c, part) })
	}
	wg.Wait()
	p.put = time.Since(start)
	conn.Close()
	if err := errors.Join(errs...); err != nil {
		srv.Stop()
		return p, err
	}
	p.rss = srv.Kill()
	p.putRSS = p.rss
	p.split(srv)
	p.disk = dirBytes(filepath.Join(db, "urlhash.frontier"))
	// Restarts: after kill -9, then after a clean stop, each to the first
	// URL handed out.
	for _, clean := range []bool{false, true} {
		t0 := time.Now()
		srv, err = proc.Serve(w.urlhash, db, "--frontier", "127.0.0.1:0")
		if err != nil {
			return p, err
		}
		if c, conn, err = dial(srv.GRPC); err != nil {
			srv.Stop()
			return p, err
		}
		stream, err := c.GetURLs(ctx, &urlfrontier.GetParams{MaxQueues: 1, MaxUrlsPerQueue: 1, DelayRequestable: 1})
		if err == nil {
			_, err = stream.Recv()
			for err == nil {
				_, err = stream.Recv()
			}
			if err == io.EOF {
				err = nil
			}
		}
		d := time.Since(t0)
		conn.Close()
		if clean {
			p.restart = d
			p.openRSS = proc.RSS(srv.Pid())
		} else {
			p.killed = d
			p.rss = max(p.rss, srv.Stop())
			p.split(srv)
		}
		if err != nil {
			srv.Stop()
			return p, err
		}
	}
	time.Sleep(1100 * time.Millisecond) // the two URLs handed out are due again
	if c, conn, err = dial(srv.GRPC); err != nil {
		srv.Stop()
		return p, err
	}
	defer conn.Close()
	start = time.Now()
	var handed atomic.Int64
	for k := range frontierClients {
		wg.Go(func() { errs[k] = drain(ctx, c, &handed) })
	}
	wg.Wait()
	p.drain = time.Since(start)
	p.handed = handed.Load()
	p.drainRSS = srv.Stop()
	p.rss = max(p.rss, p.drainRSS)
	p.split(srv)
	return p, errors.Join(errs...)
}

// putDiscovered sends urls in batches on one PutDiscovered stream,
// frontierWindow batches in flight, and checks every ack.
func putDiscovered(ctx context.Context, c urlfrontier.URLFrontierClient, urls []string) error {
	stream, err := c.PutDiscovered(ctx)
	if err != nil {
		return err
	}
	n := (len(urls) + frontierBatch - 1) / frontierBatch
	window := make(chan struct{}, frontierWindow)
	sendErr := make(chan error, 1)
	go func() {
		for i := 0; i < len(urls); i += frontierBatch {
			window <- struct{}{}
			b := &urlfrontier.DiscoveredBatch{ID: strconv.Itoa(i)}
			for _, u := range urls[i:min(i+frontierBatch, len(urls))] {
				b.Items = append(b.Items, &urlfrontier.URLInfo{Url: u})
			}
			if err := stream.Send(b); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- stream.CloseSend()
	}()
	for range n {
		ack, err := stream.Recv()
		if err != nil {
			return err
		}
		for _, s := range ack.GetStatuses() {
			if s == urlfrontier.AckMessage_FAIL {
				return fmt.Errorf("batch %s: FAIL", ack.GetID())
			}
		}
		<-window
	}
	return <-sendErr
}

// drain gets due URLs and marks them completed until the frontier holds
// none.
func drain(ctx context.Context, c urlfrontier.URLFrontierClient, handed *atomic.Int64) error {
	done, err := c.PutURLs(ctx)
	if err != nil {
		return err
	}
	defer done.CloseSend()
	for idle := 0; idle < 3; {
		stream, err := c.GetURLs(ctx, &urlfrontier.GetParams{MaxQueues: 200, MaxUrlsPerQueue: 25, DelayRequestable: 300})
		if err != nil {
			return err
		}
		var got []*urlfrontier.URLInfo
		for {
			in, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			got = append(got, in)
		}
		if len(got) == 0 {
			s, err := c.GetStats(ctx, &urlfrontier.QueueWithinCrawlParams{})
			if err != nil {
				return err
			}
			if s.GetSize() == 0 {
				idle++
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		handed.Add(int64(len(got)))
		for _, in := range got {
			if err := done.Send(&urlfrontier.URLItem{Item: &urlfrontier.URLItem_Known{Known: &urlfrontier.KnownURLItem{Info: in}}}); err != nil {
				return err
			}
		}
		for range got {
			ack, err := done.Recv()
			if err != nil {
				return err
			}
			if ack.GetStatus() != urlfrontier.AckMessage_OK {
				return fmt.Errorf("completing %s: %v", ack.GetID(), ack.GetStatus())
			}
		}
	}
	return nil
}

// resp writes Redis commands and reads their replies.
type resp struct {
	rw *bufio.ReadWriter
}

func (r *resp) cmd(args ...string) {
	fmt.Fprintf(r.rw, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(r.rw, "$%d\r\n%s\r\n", len(a), a)
	}
}

// reply reads one reply: an integer, or an array of bulk strings (whose
// count it returns).
func (r *resp) reply() (int, error) {
	line, err := r.rw.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 3 {
		return 0, fmt.Errorf("reply %q", line)
	}
	n, _ := strconv.Atoi(line[1 : len(line)-2])
	switch line[0] {
	case ':':
		return n, nil
	case '*':
		for range n {
			h, err := r.rw.ReadString('\n')
			if err != nil {
				return 0, err
			}
			m, _ := strconv.Atoi(h[1 : len(h)-2])
			if _, err := r.rw.Discard(m + 2); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
	return 0, fmt.Errorf("reply %q", line)
}

func frontierRedis(w *work, urls []string) (phase, error) {
	var p phase
	dir := w.path("redis-frontier")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return p, err
	}
	srv, err := proc.StartRedis(dir)
	if err != nil {
		return p, err
	}
	defer srv.Stop()
	connect := func() (*resp, net.Conn, error) {
		conn, err := net.Dial("unix", srv.Socket)
		if err != nil {
			return nil, nil, err
		}
		return &resp{bufio.NewReadWriter(bufio.NewReaderSize(conn, 64<<10), bufio.NewWriterSize(conn, 64<<10))}, conn, nil
	}
	var wg sync.WaitGroup
	errs := make([]error, frontierClients)
	start := time.Now()
	for k, part := range shards(urls) {
		wg.Go(func() {
			r, conn, err := connect()
			if err != nil {
				errs[k] = err
				return
			}
			defer conn.Close()
			errs[k] = redisPut(r, part)
		})
	}
	wg.Wait()
	p.put = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return p, err
	}
	p.disk = dirBytes(dir)
	var handed atomic.Int64
	start = time.Now()
	for k := range frontierClients {
		wg.Go(func() {
			r, conn, err := connect()
			if err != nil {
				errs[k] = err
				return
			}
			defer conn.Close()
			for {
				r.cmd("ZPOPMIN", "requests", strconv.Itoa(redisPop))
				if err := r.rw.Flush(); err != nil {
					errs[k] = err
					return
				}
				n, err := r.reply()
				if err != nil {
					errs[k] = err
					return
				}
				if n == 0 {
					return
				}
				handed.Add(int64(n / 2)) // member, score
			}
		})
	}
	wg.Wait()
	p.drain = time.Since(start)
	p.handed = handed.Load()
	p.rss = proc.PeakRSS(srv.Pid())
	return p, errors.Join(errs...)
}

// redisPut puts urls as scrapy-redis does, a batch at a time: SADD of
// each request's fingerprint (here the URL's identity), then ZADD of the
// new requests, serialised, to the priority queue.
func redisPut(r *resp, urls []string) error {
	for i := 0; i < len(urls); i += frontierBatch {
		batch := urls[i:min(i+frontierBatch, len(urls))]
		fps := make([]string, len(batch))
		for j, u := range batch {
			h, err := urlhash.Default.Hash(u)
			if err != nil {
				return err
			}
			fps[j] = string(h[:])
			r.cmd("SADD", "dupefilter", fps[j])
		}
		if err := r.rw.Flush(); err != nil {
			return err
		}
		var fresh []string
		for _, u := range batch {
			n, err := r.reply()
			if err != nil {
				return err
			}
			if n == 1 {
				fresh = append(fresh, u)
			}
		}
		for _, u := range fresh {
			// A serialised request as scrapy-redis keeps it (its pickled
			// request_to_dict is larger still).
			req := `{"url": "` + u + `", "callback": "parse", "errback": null, "method": "GET", "headers": {}, "body": "", "cookies": {}, "meta": {"depth": 1}, "encoding": "utf-8", "priority": 0, "dont_filter": false, "flags": [], "cb_kwargs": {}}`
			r.cmd("ZADD", "requests", "0", req)
		}
		if err := r.rw.Flush(); err != nil {
			return err
		}
		for range fresh {
			if _, err := r.reply(); err != nil {
				return err
			}
		}
	}
	return nil
}
