// Command load is the load test of "urlhash serve": it pre-loads an index,
// serves it on a loopback port, and runs C clients (the Go client, package
// remote, one connection pool each) of N operations each, in a fixed seeded
// mix of reads and durable writes, then prints the throughput and the
// latency percentiles per operation and overall.
//
//	go run ./bench/load                     # 8 clients x 100k operations, single requests
//	go run ./bench/load -batch 100          # the same operations, 100 keys per request
//	go run ./bench/load -ops 5000 -entries 20000   # a quick run
//
// It is bounded: a fixed number of operations, and -timeout for the whole
// run (it fails when that passes). Figures on a shared machine are noisy.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/urlhash/urlhash/bench/internal/proc"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/corpus"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// An op is one kind of operation of the mix, with its share in percent.
type op struct {
	name  string
	share int
	batch bool // batched with -batch: one request carries many keys
}

// mix is the operation mix: mostly lookups, as for a shared "seen" set or
// blocklist, a fifth durable writes.
var mix = []op{
	{"has-present", 30, true},
	{"has-absent", 25, true},
	{"get-present", 10, false},
	{"get-absent", 5, false},
	{"match", 5, false},
	{"scan-10", 3, false},
	{"add-new", 8, true},
	{"add-present", 7, true},
	{"put", 7, true},
}

type config struct {
	clients, ops, entries, batch int
	timeout                      time.Duration
	dir                          string
}

func main() {
	var c config
	flag.IntVar(&c.clients, "clients", 8, "concurrent clients")
	flag.IntVar(&c.ops, "ops", 100_000, "operations per client")
	flag.IntVar(&c.entries, "entries", 200_000, "entries pre-loaded")
	flag.IntVar(&c.batch, "batch", 1, "keys per request for has, add and put (1: one request per operation)")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "bound on the whole run")
	flag.StringVar(&c.dir, "dir", "", "work directory (default: a new temporary one, removed at the end)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "load: error:", err)
		os.Exit(2)
	}
}

func run(c config) error {
	if c.clients < 1 || c.ops < 1 || c.entries < 1 || c.batch < 1 {
		return errors.New("-clients, -ops, -entries and -batch must be at least 1")
	}
	dir := c.dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "urlhash-load-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "urlhash")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/urlhash").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/urlhash: %v\n%s", err, out)
	}
	base, err := corpus.ReadLines("testdata/debian-package-urls.txt")
	if err != nil {
		return err
	}
	urls := corpus.Derive(base, c.entries, 7)
	present := make([]hashkey.Hash, len(urls))
	for i, u := range urls {
		present[i] = hashkey.Sum([]byte(u))
	}
	idx := filepath.Join(dir, "idx")
	if err := preload(context.Background(), idx, urls, present); err != nil {
		return err
	}

	srv, err := proc.Serve(bin, idx)
	if err != nil {
		return err
	}
	defer srv.Stop()
	addr := srv.Addr

	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	lat := make([][][]time.Duration, c.clients) // client, op, latencies
	errs := make([]error, c.clients)
	var wg sync.WaitGroup
	start := time.Now()
	for k := range c.clients {
		wg.Go(func() {
			lat[k], errs[k] = client(ctx, addr, k, c, present)
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	db, err := remote.Open(context.Background(), addr, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := db.ServerStats(ctx)
	if err != nil {
		return err
	}
	report(c, wall, lat, st)
	return nil
}

// preload writes the entries, each with its URL as text, to a new index.
func preload(ctx context.Context, dir string, urls []string, hs []hashkey.Hash) error {
	db, err := index.Open(dir, nil)
	if err != nil {
		return err
	}
	_, err = db.Load(ctx, func(yield func(store.Entry) bool) {
		for i, u := range urls {
			if !yield(store.FullEntry(hs[i], store.Value{Text: []byte(u)})) {
				return
			}
		}
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// client runs one client's operations and returns the latency of every
// request, by op. With batch > 1, the batched ops run batch keys per
// request, and each request's latency counts once per key it carries (so
// that percentiles are over operations).
func client(ctx context.Context, addr string, k int, c config, present []hashkey.Hash) ([][]time.Duration, error) {
	db, err := remote.Open(ctx, addr, &remote.Options{Timeout: time.Minute})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(uint64(k), 2026))
	absent := func() hashkey.Hash {
		var h hashkey.Hash
		for i := 0; i < hashkey.Size; i += 8 {
			v := rng.Uint64()
			for j := range 8 {
				h[i+j] = byte(v >> (8 * j))
			}
		}
		return h
	}
	fresh := 0
	newEntry := func() store.Entry {
		fresh++
		u := fmt.Sprintf("https://load%d.example/item/%d", k, fresh)
		return store.FullEntry(hashkey.Sum([]byte(u)), store.Value{Text: []byte(u)})
	}
	lat := make([][]time.Duration, len(mix))
	for i := range lat {
		lat[i] = make([]time.Duration, 0, c.ops*mix[i].share/100+c.batch)
	}
	var hs []hashkey.Hash
	var es []store.Entry
	for done := 0; done < c.ops; {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("client %d: %d of %d operations done: %w", k, done, c.ops, err)
		}
		i := pick(rng, c.batch)
		o := mix[i]
		n := 1
		if o.batch {
			n = min(c.batch, c.ops-done)
		}
		hs, es = hs[:0], es[:0]
		for range n {
			switch o.name {
			case "has-present", "get-present", "match":
				hs = append(hs, present[rng.IntN(len(present))])
			case "has-absent", "get-absent":
				hs = append(hs, absent())
			case "add-new", "put":
				es = append(es, newEntry())
			case "add-present":
				h := present[rng.IntN(len(present))]
				es = append(es, store.FullEntry(h, store.Value{}))
			}
		}
		t0 := time.Now()
		switch o.name {
		case "has-present", "has-absent":
			var got []bool
			if got, err = db.HasBatch(ctx, hs); err == nil && slices.Contains(got, o.name == "has-absent") {
				err = fmt.Errorf("%s answered wrongly", o.name)
			}
		case "get-present":
			_, err = db.Get(ctx, hs[0])
		case "get-absent":
			if _, err = db.Get(ctx, hs[0]); errors.Is(err, store.ErrNotFound) {
				err = nil
			} else if err == nil {
				err = errors.New("get-absent found a key")
			}
		case "match":
			var ok bool
			if _, ok, err = db.Match(ctx, hs[0]); err == nil && !ok {
				err = errors.New("match missed a present key")
			}
		case "scan-10":
			p := byte(rng.IntN(256))
			err = db.Scan(ctx, []byte{p}, 8, 10, func(store.Entry) error { return nil })
		case "add-new", "add-present":
			var added []bool
			if added, err = db.AddBatch(ctx, es); err == nil && slices.Contains(added, o.name == "add-present") {
				err = fmt.Errorf("%s answered wrongly", o.name)
			}
		case "put":
			err = db.PutBatch(ctx, es)
		}
		d := time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("client %d: %s: %w", k, o.name, err)
		}
		for range n {
			lat[i] = append(lat[i], d)
		}
		done += n
	}
	return lat, nil
}

// pick draws the op of a request so that operations follow the mix's
// shares: an unbatched op is drawn batch times as often, as its requests
// carry one operation each.
func pick(rng *rand.Rand, batch int) int {
	weight := func(o op) int {
		if o.batch {
			return o.share
		}
		return o.share * batch
	}
	total := 0
	for _, o := range mix {
		total += weight(o)
	}
	x := rng.IntN(total)
	for i, o := range mix {
		if x < weight(o) {
			return i
		}
		x -= weight(o)
	}
	return len(mix) - 1
}

func report(c config, wall time.Duration, lat [][][]time.Duration, st wire.Stats) {
	mode := "one request per operation"
	if c.batch > 1 {
		mode = fmt.Sprintf("has, add and put %d keys per request (latency per request)", c.batch)
	}
	fmt.Printf("%d clients x %d operations on loopback, %s; index of %d entries; %d cores (shared machine: noisy)\n",
		c.clients, c.ops, mode, c.entries, runtime.NumCPU())
	fmt.Printf("%-12s %8s %11s %9s %9s %9s %9s\n", "op", "count", "ops/s", "p50", "p99", "p999", "max")
	var all []time.Duration
	for i, o := range mix {
		var ds []time.Duration
		for _, l := range lat {
			ds = append(ds, l[i]...)
		}
		all = append(all, ds...)
		line(o.name, ds, wall)
	}
	line("all", all, wall)
	fmt.Printf("wall %.2fs; filter: %d absent, %d found, %d false positives; entries now %d\n",
		wall.Seconds(), st.FilterAbsent, st.FilterFound, st.FilterFalsePositives, st.Entries)
}

func line(name string, ds []time.Duration, wall time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(p float64) string { return fmtDur(ds[min(len(ds)-1, int(p*float64(len(ds))))]) }
	fmt.Printf("%-12s %8d %11.0f %9s %9s %9s %9s\n", name, len(ds), float64(len(ds))/wall.Seconds(),
		q(0.50), q(0.99), q(0.999), fmtDur(ds[len(ds)-1]))
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
