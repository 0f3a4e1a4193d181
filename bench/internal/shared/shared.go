// Package shared runs the shared-index benchmark: four clients
// deduplicate the same N URLs, each in its own order, through "urlhash
// serve" (every write durable before it is answered), and through Redis
// as crawlers share a frontier today (the scrapy-redis dupefilter: SADD of
// SHA-256 fingerprints to one set, pipelined 1,000 at a time over a unix
// socket, appendfsync everysec), in the same run; then the same as
// revisiting crawlers (dedupe --revisit-after 24h against SET
// seen:FINGERPRINT 1 NX EX 86400, a key a URL). It prints throughput, the
// servers' peak RSS and CPU, and the ratios. bench/shared runs it alone,
// and go run ./bench as its last table.
//
// It needs Debian's redis-server (apt-get install redis-server).
package shared

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/urlhash/urlhash/bench/internal/proc"
	"github.com/urlhash/urlhash/internal/corpus"
)

const clients = 4

// Options configures Run.
type Options struct {
	// N is the number of distinct URLs each client deduplicates.
	N int
	// ServeFlags are urlhash serve's flags.
	ServeFlags []string
	// Revisit also runs the revisiting clients.
	Revisit bool
	// Out receives the table.
	Out io.Writer
}

// Run runs the benchmark.
func Run(o Options) error {
	n, serveFlags, revisit, out := o.N, o.ServeFlags, o.Revisit, o.Out
	dir, err := os.MkdirTemp("", "urlhash-shared-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins := map[string]string{"urlhash": "./cmd/urlhash", "redis": "./bench/peer/redis"}
	for name, pkg := range bins {
		bins[name] = filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", bins[name], pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	base, err := corpus.ReadLines("testdata/debian-package-urls.txt")
	if err != nil {
		return err
	}
	urls := corpus.Derive(base, n, 1)
	var inputs []string
	for k := range clients {
		in := append([]string(nil), urls...)
		rand.New(rand.NewPCG(uint64(k), 42)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		name := filepath.Join(dir, fmt.Sprintf("in%d.txt", k))
		if err := os.WriteFile(name, []byte(strings.Join(in, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		inputs = append(inputs, name)
	}
	ours, err := runUrlhash(dir, bins["urlhash"], inputs, serveFlags, nil)
	if err != nil {
		return err
	}
	redis, err := runRedis(dir, bins["redis"], inputs, nil)
	if err != nil {
		return err
	}
	rows := []result{ours, redis}
	var oursRev, redisRev result
	if revisit {
		// A revisiting crawler: each URL new once in 24 hours. Every
		// sighting reads the entry's last-seen time; a new one records it.
		if oursRev, err = runUrlhash(dir, bins["urlhash"], inputs, serveFlags, []string{"--revisit-after", "24h"}); err != nil {
			return err
		}
		if redisRev, err = runRedis(dir, bins["redis"], inputs, []string{"-ttl", "86400"}); err != nil {
			return err
		}
		rows = append(rows, oursRev, redisRev)
	}
	// Exactly once: no line twice, and one line per identity (variants of
	// a URL share one), the same count for both.
	for _, r := range rows {
		if r.printed != r.distinct || r.printed != redis.printed {
			return fmt.Errorf("%s: %d lines printed, %d distinct (Redis: %d): not exactly once", r.name, r.printed, r.distinct, redis.printed)
		}
	}
	total := float64(clients * n)
	fmt.Fprintf(out, "%d clients x %d URLs (%d identities, each printed once), machine: %d cores\n", clients, n, ours.distinct, runtime.NumCPU())
	fmt.Fprintf(out, "%-44s %10s %14s %12s %12s %12s\n", "", "wall", "URLs/s", "peak RSS", "server CPU", "client CPU")
	for _, r := range rows {
		fmt.Fprintf(out, "%-44s %9.2fs %14.0f %8.0f MiB %11.2fs %11.2fs\n", r.name, r.wall.Seconds(), total/r.wall.Seconds(),
			float64(r.rss)/(1<<20), r.cpu.Seconds(), r.clientCPU.Seconds())
	}
	fmt.Fprintf(out, "seen-set:  urlhash / Redis SADD: throughput %.2fx, peak RSS %.2fx\n", redis.wall.Seconds()/ours.wall.Seconds(), float64(ours.rss)/float64(redis.rss))
	if revisit {
		fmt.Fprintf(out, "revisits:  urlhash / Redis SET NX EX: throughput %.2fx, peak RSS %.2fx; revisit / key-only served time %.2fx\n",
			redisRev.wall.Seconds()/oursRev.wall.Seconds(), float64(oursRev.rss)/float64(redisRev.rss), oursRev.wall.Seconds()/ours.wall.Seconds())
	}
	for _, r := range []result{ours, oursRev} {
		if r.name != "" {
			fmt.Fprintf(out, "%s: peak RssAnon %.0f MiB, RssFile %.0f MiB (sampled every 20 ms)\n", r.name, float64(r.anon)/(1<<20), float64(r.file)/(1<<20))
		}
	}
	return nil
}

type result struct {
	name              string
	wall              time.Duration
	rss               int64         // server's peak resident set, bytes
	anon, file        int64         // its peak RssAnon and RssFile (urlhash only)
	cpu               time.Duration // the server's CPU time
	clientCPU         time.Duration // the clients' CPU time, together
	printed, distinct int
}

// runUrlhash runs "urlhash serve" on a new index and the four dedupe
// clients, with dedupeFlags.
func runUrlhash(dir, bin string, inputs, serveFlags, dedupeFlags []string) (result, error) {
	idx := filepath.Join(dir, "idx")
	if err := os.RemoveAll(idx); err != nil {
		return result{}, err
	}
	srv, err := proc.Serve(bin, idx, serveFlags...)
	if err != nil {
		return result{}, err
	}
	r := result{name: strings.TrimSpace("urlhash serve, dedupe " + strings.Join(dedupeFlags, " "))}
	start := time.Now()
	args := append([]string{"dedupe", "--db", srv.Addr}, dedupeFlags...)
	outs, cpu, err := runClients(inputs, func(in string) *exec.Cmd { return exec.Command(bin, args...) })
	r.clientCPU = cpu
	r.wall = time.Since(start)
	r.rss = srv.Stop()
	r.anon, r.file = srv.PeakSplit()
	r.cpu = srv.CPU()
	if err != nil {
		return r, err
	}
	r.printed, r.distinct = count(outs)
	return r, nil
}

// runRedis runs a new redis-server and the four clients, with
// clientFlags (none: SADD; -ttl: SET NX EX).
func runRedis(dir, bin string, inputs, clientFlags []string) (result, error) {
	rdir := filepath.Join(dir, "redis-data")
	if err := os.RemoveAll(rdir); err != nil {
		return result{}, err
	}
	if err := os.Mkdir(rdir, 0o755); err != nil {
		return result{}, err
	}
	srv, err := proc.StartRedis(rdir)
	if err != nil {
		return result{}, err
	}
	defer srv.Stop()
	sock := srv.Socket
	r := result{name: "Redis SADD (appendfsync everysec)"}
	if len(clientFlags) > 0 {
		r.name = "Redis SET NX EX (appendfsync everysec)"
	}
	start := time.Now()
	args := append([]string{"-socket", sock}, clientFlags...)
	outs, cpu, err := runClients(inputs, func(in string) *exec.Cmd { return exec.Command(bin, args...) })
	r.wall = time.Since(start)
	r.rss = proc.PeakRSS(srv.Pid())
	r.cpu, r.clientCPU = proc.CPUTime(srv.Pid()), cpu
	if err != nil {
		return r, err
	}
	r.printed, r.distinct = count(outs)
	return r, nil
}

// runClients runs one client a input, the input on its stdin, and returns
// their outputs and the CPU time they used together.
func runClients(inputs []string, cmd func(in string) *exec.Cmd) ([][]byte, time.Duration, error) {
	outs := make([][]byte, len(inputs))
	errs := make([]error, len(inputs))
	cpus := make([]time.Duration, len(inputs))
	var wg sync.WaitGroup
	for k, in := range inputs {
		wg.Go(func() {
			c := cmd(in)
			f, err := os.Open(in)
			if err != nil {
				errs[k] = err
				return
			}
			defer f.Close()
			c.Stdin = f
			var stderr bytes.Buffer
			c.Stderr = &stderr
			outs[k], errs[k] = c.Output()
			if c.ProcessState != nil {
				cpus[k] = c.ProcessState.UserTime() + c.ProcessState.SystemTime()
			}
			if errs[k] != nil {
				errs[k] = fmt.Errorf("%v: %s", errs[k], stderr.String())
			}
		})
	}
	wg.Wait()
	var cpu time.Duration
	for k, err := range errs {
		if err != nil {
			return nil, 0, err
		}
		cpu += cpus[k]
	}
	return outs, cpu, nil
}

func count(outs [][]byte) (printed, distinct int) {
	seen := map[string]bool{}
	for _, o := range outs {
		for _, l := range bytes.Split(bytes.TrimSuffix(o, []byte("\n")), []byte("\n")) {
			if len(l) > 0 {
				printed++
				seen[string(l)] = true
			}
		}
	}
	return printed, len(seen)
}
