// Command scale is urlhash's benchmark at scale: it imports N random
// hashes (100 million by default) into a new index with the urlhash
// binary and reports, whole process:
//   - import time and peak RSS (the kernel's maxrss, with the peaks of
//     RssAnon and RssFile apart), and the import's own summary;
//   - disk bytes per entry and filter bytes per entry (urlhash stats) and
//     the filter's false-positive rate, computed as the share of the
//     2^bits filter values in use (entries / 2^bits, the chance that an
//     absent hash's leading bits hit one);
//   - has of absent and of present hashes, per key (-probe hashes each);
//   - a restart's time to first answer: a new process that opens the
//     index and answers one present hash;
//   - with -served, the same number of other hashes added to a second new
//     index through "urlhash serve" by four dedupe clients, a quarter each
//     (every key new: the merges' worst case), with the server's time,
//     peak RSS and CPU, then has of present hashes through it;
//   - with -times, every entry keeps first- and last-seen times: the import
//     reads JSON lines with first_seen and last_seen (random seconds of
//     the 30 days before the run), and the served clients are revisiting
//     crawlers (dedupe --revisit-after 24h), so every entry they add
//     records its times.
//
// Usage:
//
//	go run ./bench/scale                     # 100M: 6.5 GB of input, 4.2 GB of index
//	go run ./bench/scale -n 10000000 -keep   # 10M, keep the work directory
//	go run ./bench/scale -served             # and through urlhash serve
//	go run ./bench/scale -served -times      # entries with seen times (15 GB of input at 100M)
//
// The work directory (-dir, default a new one under $TMPDIR) needs about
// 140 bytes per entry free: the input file (65), the index (about 42) and
// the import's sorted runs (32, removed when it ends); -served about 105
// more (its inputs and its index).
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/urlhash/urlhash/bench/internal/proc"
)

func main() {
	n := flag.Int("n", 100_000_000, "number of hashes to import")
	probe := flag.Int("probe", 1_000_000, "hashes looked up by each has run")
	dir := flag.String("dir", "", "work directory (default: a new one under $TMPDIR)")
	keep := flag.Bool("keep", false, "keep the work directory")
	memory := flag.Int("memory", 0, "import --memory MiB (0: the default)")
	compression := flag.String("compression", "", "import --compression (none, snappy or zstd; default: the import's)")
	served := flag.Bool("served", false, "also add N other hashes through urlhash serve (four dedupe clients)")
	times := flag.Bool("times", false, "entries keep first- and last-seen times (import of JSON lines; served clients revisit: dedupe --revisit-after 24h)")
	flag.Parse()
	if err := run(*n, *probe, *dir, *keep, *memory, *compression, *served, *times); err != nil {
		fmt.Fprintln(os.Stderr, "scale: error:", err)
		os.Exit(2)
	}
}

func run(n, probe int, dir string, keep bool, memory int, compression string, served, times bool) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "urlhash-scale-")
		if err != nil {
			return err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "scale: work dir", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin := filepath.Join(dir, "urlhash")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/urlhash").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s (run from the module root)", err, out)
	}
	probe = min(probe, n)
	input, present, absent := filepath.Join(dir, "hashes.txt"), filepath.Join(dir, "present.txt"), filepath.Join(dir, "absent.txt")
	t0 := time.Now()
	// Present probes: every (n/probe)th input hash, so they spread over
	// the input's order; absent ones from another seed.
	format := "hashes"
	if times {
		format = "jsonl"
	}
	if err := writeHashes(input, n, 1, present, max(n/probe, 1), times); err != nil {
		return err
	}
	if err := writeHashes(absent, probe, 2, "", 0, false); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "scale: wrote %d input hashes in %.0f s\n", n, time.Since(t0).Seconds())

	db := filepath.Join(dir, "db")
	args := []string{bin, "import", "--db", db, "--input-format", format, "--json"}
	if memory > 0 {
		args = append(args, "--memory", fmt.Sprint(memory))
	}
	if compression != "" {
		args = append(args, "--compression", compression)
	}
	imp, out, err := measure(append(args, input), "", 0)
	if err != nil {
		return err
	}
	stats1, statsOut, err := measure([]string{bin, "stats", "--db", db, "--json"}, "", 0)
	if err != nil {
		return err
	}
	stats2, _, err := measure([]string{bin, "stats", "--db", db, "--json"}, "", 0)
	if err != nil {
		return err
	}
	var st struct {
		Entries             int64   `json:"entries"`
		FilterBits          int     `json:"filter_bits"`
		FilterBytes         int64   `json:"filter_bytes"`
		FilterBytesPerEntry float64 `json:"filter_bytes_per_entry"`
		DiskBytes           int64   `json:"disk_bytes"`
		DiskBytesPerEntry   float64 `json:"disk_bytes_per_entry"`
	}
	if err := json.Unmarshal(statsOut, &st); err != nil {
		return fmt.Errorf("stats --json: %v: %s", err, statsOut)
	}
	// The first run after the import, then a second one (page cache warm).
	hasArgs := []string{bin, "has", "-q", "--hashes", "--db", db}
	absent1, _, err := measure(hasArgs, absent, 1)
	if err != nil {
		return err
	}
	present1, _, err := measure(hasArgs, present, 0)
	if err != nil {
		return err
	}
	absent2, _, err := measure(hasArgs, absent, 1)
	if err != nil {
		return err
	}
	present2, _, err := measure(hasArgs, present, 0)
	if err != nil {
		return err
	}
	one, err := firstLine(present)
	if err != nil {
		return err
	}
	restart, _, err := measure(append(hasArgs, one), "", 0)
	if err != nil {
		return err
	}
	empty, _, err := measure(hasArgs, os.DevNull, 0)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	kind := "random hashes"
	if times {
		kind = "random hashes with first- and last-seen times"
	}
	fmt.Printf("urlhash scale benchmark: %d %s, %s, %d cores, %s\n", n, kind, host, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("import:                %.1f s (%.0f hashes/s), peak RSS %.0f MiB (anon %.0f, file %.0f); %s\n",
		imp.wall.Seconds(), float64(n)/imp.wall.Seconds(), mib(imp.rss), mib(imp.anon), mib(imp.file), strings.TrimSpace(string(out)))
	fmt.Printf("disk:                  %.1f bytes/entry (%d bytes, %d entries)\n", st.DiskBytesPerEntry, st.DiskBytes, st.Entries)
	fp := float64(st.Entries) / float64(uint64(1)<<st.FilterBits)
	fmt.Printf("filter:                %.2f bytes/entry (%d bits), false positives about %.3f%% (entries / 2^bits)\n",
		st.FilterBytesPerEntry, st.FilterBits, 100*fp)
	perKey := func(r result) string {
		return fmt.Sprintf("%.2f us/key (%.1f s, RSS %.0f MiB, anon %.0f, file %.0f)",
			r.wall.Seconds()*1e6/float64(probe), r.wall.Seconds(), mib(r.rss), mib(r.anon), mib(r.file))
	}
	fmt.Printf("has absent, %d:   first %s; again %s\n", probe, perKey(absent1), perKey(absent2))
	fmt.Printf("has present, %d:  first %s; again %s\n", probe, perKey(present1), perKey(present2))
	fmt.Printf("restart to first answer: %.3f s (has of one present hash, new process); empty input %.3f s\n",
		restart.wall.Seconds(), empty.wall.Seconds())
	fmt.Printf("stats:                 %.3f s the first after the import, %.3f s again (new process, --json)\n",
		stats1.wall.Seconds(), stats2.wall.Seconds())
	if served {
		return runServed(bin, dir, n, probe, times)
	}
	return nil
}

// servedClients is how many dedupe clients add through the server.
const servedClients = 4

// runServed adds n new random hashes to a new index through urlhash
// serve, a quarter by each of servedClients dedupe clients at once, and
// prints the time, the server's peak RSS and CPU; then has of probe of
// them through the server. With times the clients revisit (dedupe
// --revisit-after 24h), so every entry records its seen times.
func runServed(bin, dir string, n, probe int, times bool) error {
	t0 := time.Now()
	var inputs []string
	present := filepath.Join(dir, "served-present.txt")
	for c := range servedClients {
		in := filepath.Join(dir, fmt.Sprintf("served-%d.txt", c))
		part := n / servedClients
		sample, every := "", 0
		if c == 0 {
			sample, every = present, max(part/probe, 1)
		}
		if err := writeHashes(in, part, uint64(10+c), sample, every, false); err != nil {
			return err
		}
		inputs = append(inputs, in)
	}
	fmt.Fprintf(os.Stderr, "scale: wrote %d hashes for the served run in %.0f s\n", n, time.Since(t0).Seconds())
	srv, err := proc.Serve(bin, filepath.Join(dir, "served-db"))
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.Stop()
		}
	}()
	start := time.Now()
	errs := make(chan error, len(inputs))
	dedupe := []string{bin, "dedupe", "--db", srv.Addr, "--input-format", "hashes", "--no-journal"}
	if times {
		dedupe = append(dedupe, "--revisit-after", "24h")
	}
	for _, in := range inputs {
		go func() {
			_, _, err := measure(dedupe, in, 0)
			errs <- err
		}()
	}
	for range inputs {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	add := time.Since(start)
	if err != nil {
		return err
	}
	has, _, err := measure([]string{bin, "has", "-q", "--hashes", "--db", srv.Addr}, present, 0)
	if err != nil {
		return err
	}
	scrape, err := timeScrape(srv.Addr + "/metrics")
	if err != nil {
		return err
	}
	stopped = true
	rss := srv.Stop()
	anon, file := srv.PeakSplit()
	if _, statsOut, err := measure([]string{bin, "stats", "--db", filepath.Join(dir, "served-db"), "--json"}, "", 0); err == nil {
		var st struct {
			DiskBytesPerEntry float64 `json:"disk_bytes_per_entry"`
		}
		if json.Unmarshal(statsOut, &st) == nil {
			fmt.Printf("served disk:           %.1f bytes/entry\n", st.DiskBytesPerEntry)
		}
	}
	fmt.Printf("served add, %d new:  %.1f s (%.0f hashes/s, %d dedupe clients), server peak RSS %.0f MiB (anon %.0f, file %.0f), %.0f MiB with its shutdown, server CPU %.1f s\n",
		n, add.Seconds(), float64(n)/add.Seconds(), servedClients, mib(rss), mib(anon), mib(file), mib(srv.LifetimePeakRSS()), srv.CPU().Seconds())
	fmt.Printf("served has present, %d: %.2f us/key (%.1f s, client)\n", probe, has.wall.Seconds()*1e6/float64(probe), has.wall.Seconds())
	fmt.Printf("served /metrics scrape: %.3f s (the slowest of 3)\n", scrape.Seconds())
	return nil
}

// timeScrape GETs url three times and returns the slowest.
func timeScrape(url string) (time.Duration, error) {
	var worst time.Duration
	for range 3 {
		start := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		if err != nil {
			return 0, err
		}
		worst = max(worst, time.Since(start))
	}
	return worst, nil
}

// writeHashes writes n random hashes (hex lines, seeded) to path, and
// every every-th of them to sample when it is named. With times, path
// gets JSON lines instead (jsonl import: the key with first_seen and
// last_seen, random seconds of the 30 days before now); sample still
// gets hex lines.
func writeHashes(path string, n int, seed uint64, sample string, every int, times bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var sw *bufio.Writer
	if sample != "" {
		sf, err := os.Create(sample)
		if err != nil {
			return err
		}
		defer sf.Close()
		sw = bufio.NewWriterSize(sf, 1<<20)
	}
	r := rand.New(rand.NewPCG(seed, 0x5ca1e))
	var b [32]byte
	var line [65]byte
	line[64] = '\n'
	now := time.Now().Unix()
	const month = 30 * 24 * 60 * 60
	var jl []byte
	if times {
		w.WriteString(`{"urlhash_export":1}` + "\n") // no profile: hashes
	}
	for i := range n {
		for j := 0; j < len(b); j += 8 {
			v := r.Uint64()
			for k := range 8 {
				b[j+k] = byte(v >> (8 * k))
			}
		}
		hex.Encode(line[:64], b[:])
		if times {
			first := now - month + r.Int64N(month)
			last := first + r.Int64N(now-first+1)
			jl = append(jl[:0], `{"key":"`...)
			jl = append(jl, line[:64]...)
			jl = append(jl, `","first_seen":"`...)
			jl = time.Unix(first, 0).UTC().AppendFormat(jl, time.RFC3339)
			jl = append(jl, `","last_seen":"`...)
			jl = time.Unix(last, 0).UTC().AppendFormat(jl, time.RFC3339)
			jl = append(jl, "\"}\n"...)
			w.Write(jl)
		} else {
			w.Write(line[:])
		}
		if sw != nil && i%every == 0 {
			sw.Write(line[:])
		}
	}
	if sw != nil {
		if err := sw.Flush(); err != nil {
			return err
		}
	}
	return w.Flush()
}

func firstLine(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	return string(line), nil
}

type result struct {
	wall       time.Duration
	rss        int64 // peak resident set, bytes
	anon, file int64 // peaks of RssAnon and RssFile, sampled, bytes
}

// measure runs argv with stdin from the file in ("" for none), requires
// exit status want, and returns its wall time, peak RSS (the kernel's
// maxrss, as GNU time reports it), the peaks of its anonymous and
// file-backed resident memory (sampled from /proc every 10 ms: the heap
// and the mapped files apart) and its standard output.
func measure(argv []string, in string, want int) (result, []byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			return result{}, nil, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, nil, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	var r result
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			anon, file := procRSS(status)
			r.anon, r.file = max(r.anon, anon), max(r.file, file)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	r.wall = time.Since(start)
	close(done)
	<-sampled
	if cmd.ProcessState == nil {
		return result{}, nil, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	if code := cmd.ProcessState.ExitCode(); code != want {
		return result{}, nil, fmt.Errorf("%s: exit status %d, want %d\n%s", strings.Join(argv, " "), code, want, stderr.String())
	}
	r.rss = proc.MaxRSS(cmd.ProcessState)
	return r, stdout.Bytes(), nil
}

// procRSS returns RssAnon and RssFile, in bytes, from a /proc status file
// (zeros once the process is gone).
func procRSS(status string) (anon, file int64) {
	b, err := os.ReadFile(status)
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(b)) {
		var kib int64
		if _, err := fmt.Sscanf(line, "RssAnon: %d kB", &kib); err == nil {
			anon = kib << 10
		} else if _, err := fmt.Sscanf(line, "RssFile: %d kB", &kib); err == nil {
			file = kib << 10
		}
	}
	return anon, file
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
