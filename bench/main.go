// Command bench is urlhash's reproducible end-to-end benchmark. It builds the
// urlhash binary and the baseline programs in bench/peer, derives a URL
// corpus from hashkey/testdata with a fixed seed, runs every scenario on both
// in the same run, and prints each figure as a ratio against its baseline.
//
//	go run ./bench                  # 1M URLs, best of 3 runs per scenario
//	go run ./bench -n 200000 -runs 1 -only hash,canon-webrisk
//	go run ./bench -n 300000 -only present-served   # adds of stored URLs vs has, through a server
//	go run ./bench -n 200000 -only shared           # four crawlers through urlhash serve vs Redis
//	go run ./bench -n 1000000 -only frontier         # the crawl frontier against scrapy-redis on Redis
//
// Whole-process wall time is measured, so start-up, I/O and both cores count;
// peak RSS comes from GNU time (/usr/bin/time, Debian package "time").
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urlhash/urlhash/bench/internal/proc"
	"github.com/urlhash/urlhash/bench/internal/shared"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/internal/corpus"
)

type scenario struct {
	name     string
	input    string                 // file name under the work dir fed on stdin
	prepare  func(w *work) error    // run before each timed run, untimed
	ours     func(w *work) []string // command line of urlhash
	baseline func(w *work) []string // command line of the baseline
	check    func(ours, base []byte) error
	// exitOurs is the exit status urlhash must end with (has-absent: 1,
	// "not found"); any other is a failed run.
	exitOurs int
	// sizeFree marks work that does not depend on the index size (hashing
	// URLs): it runs in the first table only.
	sizeFree bool
	// served runs urlhash's command as a client of "urlhash serve" on its
	// index (w.addr, its http:// location), started after prepare and stopped after the run;
	// the RSS reported is the client's plus the server's.
	served bool
}

type work struct {
	dir     string
	n       int
	urlhash string
	whatwg  string
	badger  string
	oursDB  string
	plainDB string
	loaded  bool // both DBs hold urls.txt
	// oursTextDB and plainTextDB are dictionaries of urls.txt (hash ->
	// URL text); textLoaded is set once both hold it.
	oursTextDB, plainTextDB string
	textLoaded              bool
	textBytes               int64          // the URL text of urls.txt, newlines excluded
	lines                   map[string]int // inputs of each input file
	addr                    string         // the running "urlhash serve" of a served scenario
}

func (w *work) path(name string) string { return filepath.Join(w.dir, name) }

func main() {
	sizes := flag.String("n", "1000000,10000000", "comma-separated numbers of corpus-derived URLs: one table each")
	runs := flag.Int("runs", 0, "timed runs per program and scenario, the best kept (default 3 up to 1M URLs, 1 above)")
	only := flag.String("only", "", "comma-separated scenario names to run (default all)")
	keep := flag.Bool("keep", false, "keep the work directory")
	flag.IntVar(&frontierHosts, "frontier-hosts", frontierHosts, "hosts (queues) of the frontier scenario")
	flag.Parse()
	for i, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1000 {
			fmt.Fprintf(os.Stderr, "bench: -n %q: want integers of at least 1000\n", *sizes)
			os.Exit(2)
		}
		r := *runs
		if r == 0 {
			r = 3
			if n > 1_000_000 {
				r = 1
			}
		}
		if i > 0 {
			fmt.Println()
		}
		if err := run(n, r, *only, *keep, i == 0); err != nil {
			fmt.Fprintln(os.Stderr, "bench: error:", err)
			os.Exit(2)
		}
	}
}

// maxProbes bounds the lookups of the has scenarios: at 10M entries, a
// million lookups measure the index as well as ten million would.
const maxProbes = 1_000_000

// maxGets bounds the present hashes the get scenario reads back.
const maxGets = 500_000

func run(n, runs int, only string, keep, first bool) error {
	dir, err := os.MkdirTemp("", "urlhash-bench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "bench: work dir", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	// dedupe's journals of served indexes stay in the work directory.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	w := &work{dir: dir, n: n,
		urlhash: filepath.Join(dir, "urlhash"), whatwg: filepath.Join(dir, "whatwg"), badger: filepath.Join(dir, "badger"),
		oursDB: filepath.Join(dir, "db-urlhash"), plainDB: filepath.Join(dir, "db-plain"),
		oursTextDB: filepath.Join(dir, "db-urlhash-text"), plainTextDB: filepath.Join(dir, "db-plain-text")}
	for bin, pkg := range map[string]string{w.urlhash: "./cmd/urlhash", w.whatwg: "./bench/peer/whatwg", w.badger: "./bench/peer/badger"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	base, err := corpus.ReadLines("testdata/debian-package-urls.txt")
	if err != nil {
		return fmt.Errorf("%v (run from the module root)", err)
	}
	// Keep the URLs the URL Standard accepts, so that every program
	// processes the same inputs and exit statuses mean what they say.
	var urls []string
	rejected := 0
	for _, u := range corpus.Derive(base, n+n/100, corpus.Seed) {
		if len(urls) == n {
			break
		}
		if _, err := urlhash.Default.Canonical(u); err != nil {
			rejected++
			continue
		}
		urls = append(urls, u)
	}
	if err := writeLines(filepath.Join(dir, "urls.txt"), urls); err != nil {
		return err
	}
	for _, u := range urls {
		w.textBytes += int64(len(u))
	}
	probes := min(len(urls), maxProbes)
	gets := min(len(urls)/2, maxGets)
	w.lines = map[string]int{"urls.txt": len(urls), "hashes.txt": len(urls), "empty.txt": 0,
		"present.txt": probes, "absent.txt": probes, "present-hashes.txt": probes, "absent-hashes.txt": probes,
		"get-hashes.txt": gets}
	if err := writeLines(filepath.Join(dir, "present.txt"), urls[:probes]); err != nil {
		return err
	}
	absent := make([]string, probes)
	for i, u := range urls[:probes] {
		absent[i] = strings.TrimRight(u, "/") + fmt.Sprintf("/absent-%d", i)
	}
	if err := writeLines(filepath.Join(dir, "absent.txt"), absent); err != nil {
		return err
	}
	// The same keys as hex hashes (present once urls.txt is loaded), and
	// random hashes no URL has (absent).
	hexLines := make([]string, len(urls))
	for i, u := range urls {
		h, err := urlhash.Default.Hash(u)
		if err != nil {
			return err
		}
		hexLines[i] = hex.EncodeToString(h[:])
	}
	if err := writeLines(filepath.Join(dir, "hashes.txt"), hexLines); err != nil {
		return err
	}
	if err := writeLines(filepath.Join(dir, "present-hashes.txt"), hexLines[:probes]); err != nil {
		return err
	}
	// Every other present hash, so that a sorted batch of gets skips
	// half the keys, as a real batch of lookups would.
	getLines := make([]string, 0, gets)
	for i := 0; i < len(hexLines) && len(getLines) < gets; i += 2 {
		getLines = append(getLines, hexLines[i])
	}
	if err := writeLines(filepath.Join(dir, "get-hashes.txt"), getLines); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(corpus.Seed, 1))
	var k [32]byte
	hexLines = hexLines[:probes]
	for i := range hexLines {
		for j := 0; j < len(k); j += 8 {
			binary.LittleEndian.PutUint64(k[j:], r.Uint64())
		}
		hexLines[i] = hex.EncodeToString(k[:])
	}
	if err := writeLines(filepath.Join(dir, "absent-hashes.txt"), hexLines); err != nil {
		return err
	}
	if err := writeLines(filepath.Join(dir, "empty.txt"), nil); err != nil {
		return err
	}
	nURLs := len(urls)
	urls, absent, base, hexLines = nil, nil, nil, nil

	fmt.Printf("urlhash end-to-end benchmark: %d corpus-derived URLs (seed %d; %d rejected by the URL Standard left out), best of %d, %d cores, %s\n",
		nURLs, corpus.Seed, rejected, runs, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("speed-up = baseline wall time / urlhash wall time, whole process, same run; lookups: %d inputs\n\n", probes)

	const row = "%-19s %10s %11s %9s %15s %16s %17s\n"
	fmt.Printf(row, "scenario", "urlhash s", "baseline s", "speed-up", "urlhash inputs/s", "urlhash RSS MiB", "baseline RSS MiB")
	for _, sc := range scenarios() {
		if only != "" && !slices.Contains(strings.Split(only, ","), sc.name) {
			continue
		}
		if sc.sizeFree && !first {
			continue // the same work whatever the index size: in the first table only
		}
		ours, oursOut, err := measure(w, sc, sc.ours, sc.exitOurs, sc.served, runs)
		if err != nil {
			return fmt.Errorf("%s: urlhash: %w", sc.name, err)
		}
		basel, baseOut, err := measure(w, sc, sc.baseline, 0, false, runs)
		if err != nil {
			return fmt.Errorf("%s: baseline: %w", sc.name, err)
		}
		if sc.check != nil {
			if err := sc.check(oursOut, baseOut); err != nil {
				fmt.Fprintf(os.Stderr, "bench: note: %s: outputs differ: %v\n", sc.name, err)
			}
		}
		fmt.Printf(row, sc.name,
			fmt.Sprintf("%.2f", ours.wall.Seconds()), fmt.Sprintf("%.2f", basel.wall.Seconds()),
			fmt.Sprintf("%.1fx", basel.wall.Seconds()/ours.wall.Seconds()),
			fmt.Sprintf("%.0f", float64(w.lines[sc.input])/ours.wall.Seconds()),
			fmt.Sprintf("%.0f", float64(ours.rss)/(1<<20)), fmt.Sprintf("%.0f", float64(basel.rss)/(1<<20)))
	}
	if w.textLoaded {
		if err := printTextDisk(w, nURLs); err != nil {
			return err
		}
	}
	if only == "" || slices.Contains(strings.Split(only, ","), "present-served") {
		if err := servedPresent(w, runs); err != nil {
			return fmt.Errorf("present-served: %w", err)
		}
	}
	if only == "" || slices.Contains(strings.Split(only, ","), "frontier") {
		if err := frontierBench(w); err != nil {
			return fmt.Errorf("frontier: %w", err)
		}
	}
	if only == "" || slices.Contains(strings.Split(only, ","), "shared") {
		// Many crawlers, one seen-set: urlhash serve against Redis.
		fmt.Println()
		if _, err := exec.LookPath("redis-server"); err != nil {
			fmt.Println("shared: skipped: no redis-server (apt-get install redis-server)")
			return nil
		}
		if err := shared.Run(shared.Options{N: n, Revisit: true, Out: os.Stdout}); err != nil {
			return fmt.Errorf("shared: %w", err)
		}
	}
	return nil
}

// printTextDisk prints the dictionary's bytes on disk per entry against
// its goal, 32 bytes plus 0.6 times the text's, and the plain program's.
func printTextDisk(w *work, entries int) error {
	var st struct {
		DiskBytes int64 `json:"disk_bytes"`
	}
	out, err := exec.Command(w.urlhash, "stats", "--json", "--db", w.oursTextDB).Output()
	if err != nil {
		return fmt.Errorf("stats: %v", err)
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return fmt.Errorf("stats: %v", err)
	}
	plain, err := diskBytes(w.plainTextDB)
	if err != nil {
		return err
	}
	text := float64(w.textBytes) / float64(entries)
	fmt.Printf("dictionary on disk: %.1f B/entry (text %.1f B/entry; goal <= 32 + 0.6 x text = %.1f); plain Badger %.1f B/entry\n",
		float64(st.DiskBytes)/float64(entries), text, 32+0.6*text, float64(plain)/float64(entries))
	return nil
}

// diskBytes returns the bytes a directory takes on disk, as allocated
// (du), as urlhash stats counts its own.
func diskBytes(dir string) (int64, error) {
	out, err := exec.Command("du", "-s", "-B1", dir).Output()
	if err != nil {
		return 0, fmt.Errorf("du %s: %v", dir, err)
	}
	var n int64
	if _, err := fmt.Sscan(string(out), &n); err != nil {
		return 0, fmt.Errorf("du %s: %q", dir, out)
	}
	return n, nil
}

type result struct {
	wall time.Duration
	rss  int64 // peak resident set, bytes
}

// measure runs argv runs times (after sc.prepare, with sc's input) and
// keeps the best; served runs it beside a "urlhash serve" of its own.
func measure(w *work, sc scenario, argv func(*work) []string, want int, served bool, runs int) (result, []byte, error) {
	best := result{wall: time.Duration(1<<63 - 1)}
	var out []byte
	for range runs {
		if sc.prepare != nil {
			if err := sc.prepare(w); err != nil {
				return best, nil, err
			}
		}
		in, err := os.Open(filepath.Join(w.dir, sc.input))
		if err != nil {
			return best, nil, err
		}
		// Output goes to a file, not to a pipe this process must drain on
		// a core the program could use. GNU time reports the peak RSS: a
		// child's own rusage would count this process's memory at fork.
		outPath, rssPath := w.path("stdout"), w.path("rss")
		stdout, err := os.Create(outPath)
		if err != nil {
			in.Close()
			return best, nil, err
		}
		var stopServer func() int64
		if served {
			if stopServer, err = startServer(w); err != nil {
				in.Close()
				stdout.Close()
				return best, nil, err
			}
		}
		args := argv(w)
		cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", rssPath}, args...)...)
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, stdout, &stderr
		start := time.Now()
		err = cmd.Run()
		wall := time.Since(start)
		in.Close()
		stdout.Close()
		var serverRSS int64
		if stopServer != nil {
			serverRSS = stopServer()
		}
		if cmd.ProcessState == nil {
			return best, nil, fmt.Errorf("%s: %v", strings.Join(args, " "), err)
		}
		if code := cmd.ProcessState.ExitCode(); code != want {
			return best, nil, fmt.Errorf("%s: exit status %d, want %d\n%s", strings.Join(args, " "), code, want, lastLines(stderr.String(), 5))
		}
		var rssKiB int64
		if b, err := os.ReadFile(rssPath); err == nil {
			fmt.Sscan(lastLines(string(b), 1), &rssKiB)
		}
		if wall < best.wall {
			best = result{wall: wall, rss: rssKiB<<10 + serverRSS}
		}
		if out, err = os.ReadFile(outPath); err != nil {
			return best, nil, err
		}
	}
	return best, out, nil
}

// startServer starts "urlhash serve" on the urlhash index, sets w.addr,
// and returns the function that stops it and returns its peak RSS.
func startServer(w *work) (stop func() int64, err error) {
	srv, err := proc.Serve(w.urlhash, w.oursDB)
	if err != nil {
		return nil, err
	}
	w.addr = srv.Addr
	return srv.Stop, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func writeLines(path string, lines []string) error {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// sameFields returns a check that the outputs' lines agree in their first
// n tab-separated fields.
func sameFields(n int) func(a, b []byte) error {
	cut := func(out []byte) []byte {
		var b bytes.Buffer
		for _, l := range bytes.Split(out, []byte{'\n'}) {
			f := bytes.SplitN(l, []byte{'\t'}, n+1)
			b.Write(bytes.Join(f[:min(n, len(f))], []byte{'\t'}))
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	return func(a, b []byte) error { return sameLines(cut(a), cut(b)) }
}

// sameLines checks that two outputs have the same lines, whatever the
// number of inputs each one rejected: both must agree on what they print.
func sameLines(a, b []byte) error {
	if bytes.Equal(a, b) {
		return nil
	}
	la, lb := bytes.Split(a, []byte{'\n'}), bytes.Split(b, []byte{'\n'})
	if len(la) != len(lb) {
		return fmt.Errorf("%d lines vs %d lines", len(la)-1, len(lb)-1)
	}
	diff := 0
	for i := range la {
		if !bytes.Equal(la[i], lb[i]) {
			diff++
		}
	}
	return fmt.Errorf("%d of %d lines differ", diff, len(la)-1)
}
