package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/urlhash/urlhash/bench/internal/proc"
	"github.com/urlhash/urlhash/wire"
)

// loadedDB builds urlhash's index of urls.txt, untimed, unless the
// scenarios did.
func loadedDB(w *work) error {
	if w.loaded {
		return nil
	}
	if err := os.RemoveAll(w.oursDB); err != nil {
		return err
	}
	cmd := exec.Command(w.urlhash, "import", "--db", w.oursDB, "urls.txt")
	cmd.Dir = w.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("import: %v\n%s", err, out)
	}
	return nil
}

// crawlerStep is how many URLs the simulated crawler feeds before it
// waits for their answers.
const crawlerStep = 10

// servedPresent measures, through one "urlhash serve" of the index of
// urls.txt, adding URLs that are all stored already against asking whether
// they are: the cost of a seen-set's common case. Rows: the CLI reading
// present.txt at once (dedupe, default flags: journal and Idempotency-Key,
// vs has); the CLI fed crawlerStep URLs at a time by a crawler that waits
// for their answers (dedupe --json vs has --json); and a client of
// /v1/urls/add vs /v1/urls/has (text URLs, crawlerStep per request, as the
// Python client sends them). The goal is add/has <= 1.5.
func servedPresent(w *work, runs int) error {
	if err := loadedDB(w); err != nil {
		return err
	}
	srv, err := proc.Serve(w.urlhash, w.oursDB)
	if err != nil {
		return err
	}
	defer srv.Stop()
	urls, err := readLines(w.path("present.txt"))
	if err != nil {
		return err
	}
	// The crawler rows ask fewer URLs: each is a round trip.
	steps := urls[:min(len(urls), 20000)]
	type pair struct {
		name     string
		n        int
		add, has func() error
	}
	cli := func(feed []string, args ...string) func() error {
		return func() error { return runCLI(w.urlhash, feed, args) }
	}
	stepped := func(args ...string) func() error {
		return func() error { return crawlCLI(w.urlhash, steps, args) }
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	text := func(path string) func() error {
		return func() error { return crawlText(client, srv.Addr+path, steps) }
	}
	rows := []pair{
		{"cli, all at once", len(urls), cli(urls, "dedupe", "--db", srv.Addr), cli(urls, "has", "-q", "--db", srv.Addr)},
		{fmt.Sprintf("cli, %d at a time", crawlerStep), len(steps), stepped("dedupe", "--json", "--db", srv.Addr), stepped("has", "--json", "--db", srv.Addr)},
		{fmt.Sprintf("/v1/urls, %d a request", crawlerStep), len(steps), text("/v1/urls/add"), text("/v1/urls/has")},
	}
	fmt.Printf("\npresent keys through urlhash serve (%d stored URLs; add = every URL already stored, best of %d)\n", w.lines["urls.txt"], runs)
	const row = "%-26s %8s %10s %10s %8s\n"
	fmt.Printf(row, "client", "URLs", "add s", "has s", "add/has")
	for _, p := range rows {
		add, err := best(runs, p.add)
		if err != nil {
			return fmt.Errorf("%s: add: %w", p.name, err)
		}
		has, err := best(runs, p.has)
		if err != nil {
			return fmt.Errorf("%s: has: %w", p.name, err)
		}
		fmt.Printf(row, p.name, fmt.Sprint(p.n), fmt.Sprintf("%.3f", add.Seconds()), fmt.Sprintf("%.3f", has.Seconds()),
			fmt.Sprintf("%.2fx", add.Seconds()/has.Seconds()))
	}
	return nil
}

func best(runs int, fn func() error) (time.Duration, error) {
	b := time.Duration(1<<63 - 1)
	for range runs {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		b = min(b, time.Since(start))
	}
	return b, nil
}

// runCLI runs bin args with feed on stdin; dedupe of present URLs prints
// nothing, has -q exits 0. dedupe's journals go under run's
// XDG_CACHE_HOME.
func runCLI(bin string, feed []string, args []string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(strings.Join(feed, "\n") + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, lastLines(out.String(), 3))
	}
	if args[0] == "dedupe" && out.Len() > 0 {
		return fmt.Errorf("dedupe printed %q: a URL was not stored", lastLines(out.String(), 1))
	}
	return nil
}

// crawlCLI feeds bin args (a --json command) crawlerStep URLs at a time
// and reads their answers before it feeds more.
func crawlCLI(bin string, urls []string, args []string) error {
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	r := bufio.NewReader(stdout)
	for i := 0; i < len(urls); i += crawlerStep {
		chunk := urls[i:min(i+crawlerStep, len(urls))]
		if _, err := io.WriteString(stdin, strings.Join(chunk, "\n")+"\n"); err != nil {
			return err
		}
		for range chunk {
			line, err := r.ReadString('\n')
			if err != nil {
				return fmt.Errorf("after %d answers: %v", i, err)
			}
			if strings.Contains(line, `"new":true`) || strings.Contains(line, `"present":false`) {
				return fmt.Errorf("answer %q: a URL was not stored", line)
			}
		}
	}
	stdin.Close()
	io.Copy(io.Discard, r)
	return cmd.Wait()
}

// crawlText posts urls to a /v1/urls/ endpoint crawlerStep at a time.
func crawlText(c *http.Client, endpoint string, urls []string) error {
	want := "present\n"
	for i := 0; i < len(urls); i += crawlerStep {
		chunk := urls[i:min(i+crawlerStep, len(urls))]
		req, err := http.NewRequest("POST", endpoint, strings.NewReader(strings.Join(chunk, "\n")+"\n"))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", wire.ContentTypeText)
		if strings.HasSuffix(endpoint, "/add") {
			// As the Python client sends a batch: with a key of its own.
			req.Header.Set(wire.HeaderIdempotencyKey, wire.FormatKey(wire.NewKey()))
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || string(b) != strings.Repeat(want, len(chunk)) {
			return fmt.Errorf("%s: %d %q", endpoint, resp.StatusCode, lastLines(string(b), 2))
		}
	}
	return nil
}

func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}
