//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
	"github.com/urlhash/urlhash/wire"
)

// TestPowerLoss cuts the power (LazyFS: every write not yet fsynced is
// dropped) at random points under the index's writers, then remounts,
// opens and checks that every write acknowledged before the cut is
// there: a URL dedupe printed, a batch a server answered, a command that
// exited 0. Scenarios, each on its own directory of the mount:
//
//   - dedupe: "urlhash dedupe" on an index directory (its journal in the
//     directory, on the mount);
//   - serve: "urlhash serve" with three concurrent dedupe clients (their
//     journals off the mount: the client machines keep power);
//   - merge: dedupe of batches large enough for key-table merges, the
//     power cut while a merge writes its file (or just after);
//   - move: URLs added (key table), then put with their text, which moves
//     them to Badger (the value writes of this version);
//   - frontier: the crawl frontier of "urlhash serve" (its own index),
//     requests enqueued, claimed and acked done over HTTP;
//   - sync: "urlhash sync" of a threat list from a local fake endpoint;
//   - backup: an add, a backup (--state) and a restore of the chain, the
//     power cut anywhere in them;
//   - valuelog: batches of entries rewritten and synced, a quarter of
//     their values in Badger's value log (an index without a key table,
//     small memtables and value-log files), the power cut after a random
//     batch.
//
// Each round: the writers run, the power goes (SIGSTOP, drop, SIGKILL,
// drop), the mount is cycled; the first open after the loss must succeed
// (counted when not), and every acknowledged write must be there (lost:
// must be 0). URLHASH_POWERLOSS_TIME bounds the rounds (default 7m over
// all scenarios; at least 2 rounds each); URLHASH_POWERLOSS_ONLY runs the
// scenarios whose names it lists (comma-separated).
//
// New writers join as scenarios (a name and a round): the value files'
// writes, once the index puts values in them (move's put then writes
// them), belong here too.
func TestPowerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: starts a FUSE file system and child processes")
	}
	l := newLazyFS(t)
	budget := 7 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("URLHASH_POWERLOSS_TIME")); err == nil {
		budget = d
	}
	scenarios := []powerScenario{dedupeScenario(), serveScenario(), mergeScenario(), moveScenario(), frontierScenario(), syncScenario(), backupScenario(), valueLogScenario()}
	if only := os.Getenv("URLHASH_POWERLOSS_ONLY"); only != "" {
		scenarios = slices.DeleteFunc(scenarios, func(s powerScenario) bool { return !slices.Contains(strings.Split(only, ","), s.name) })
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| scenario | rounds (cut while writing) | acknowledged | lost | first opens failed | notes |\n|---|---|---|---|---|---|\n")
	for i, sc := range scenarios {
		share := budget / time.Duration(len(scenarios)-i)
		start := time.Now()
		st := &powerStats{}
		t.Run(sc.name, func(t *testing.T) {
			p := &powerTest{t: t, l: l, dir: filepath.Join(l.mnt, sc.name), off: t.TempDir(), rng: rand.New(rand.NewPCG(uint64(i)+1, uint64(time.Now().UnixNano())))}
			if err := os.MkdirAll(p.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			state := sc.setup(p)
			for st.rounds < 2 || time.Since(start) < share {
				r := newPowerRound(l)
				state.round(p, r, st)
				st.rounds++
				if r.during {
					st.during++
				}
			}
			if state.finish != nil {
				state.finish(p, st)
			}
			if st.lost > 0 {
				t.Errorf("%d acknowledged writes lost", st.lost)
			}
			if st.firstOpenFailed > 0 {
				t.Errorf("%d first opens after a power loss failed", st.firstOpenFailed)
			}
		})
		budget -= time.Since(start)
		notes := strings.Join(st.notes, "; ")
		if st.duringMerge > 0 {
			notes = fmt.Sprintf("%d cut during a merge; %s", st.duringMerge, notes)
		}
		fmt.Fprintf(&table, "| %s | %d (%d) | %d | %d | %d | %s |\n", sc.name, st.rounds, st.during, st.acked, st.lost, st.firstOpenFailed, strings.TrimSuffix(notes, "; "))
	}
	t.Logf("power losses (LazyFS):\n%s", table.String())
}

// A powerScenario is one kind of writer under power loss.
type powerScenario struct {
	name  string
	setup func(p *powerTest) *powerState
}

// powerState is a scenario's state over its rounds: round runs the
// writers under r, cuts the power (at a random point, or after they end),
// cycles the mount, opens and checks; finish ends the scenario.
type powerState struct {
	round  func(p *powerTest, r *powerRound, st *powerStats)
	finish func(p *powerTest, st *powerStats)
}

// powerStats are a scenario's figures.
type powerStats struct {
	rounds          int
	during          int // rounds whose power was cut while the writers ran
	acked           int // acknowledged writes (URLs, syncs, backups, restores)
	lost            int // of those, missing after a power loss
	firstOpenFailed int
	duringMerge     int
	notes           []string
}

func (st *powerStats) note(format string, args ...any) {
	st.notes = append(st.notes, fmt.Sprintf(format, args...))
}

// powerTest is what a scenario works with.
type powerTest struct {
	t   *testing.T
	l   *lazyFS
	dir string // the scenario's directory on the mount
	off string // a directory off the mount
	rng *rand.Rand
	n   int // URLs generated so far
}

// newURLs returns n URLs never returned before.
func (p *powerTest) newURLs(n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("https://site%d.example/p/%d", p.n%89, p.n)
		p.n++
	}
	return urls
}

// some returns up to n of urls, at random.
func (p *powerTest) some(urls []string, n int) []string {
	if len(urls) <= n {
		return slices.Clone(urls)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = urls[p.rng.IntN(len(urls))]
	}
	return out
}

// shuffled returns the URLs of the parts in a random order.
func (p *powerTest) shuffled(parts ...[]string) []string {
	out := slices.Concat(parts...)
	p.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// between returns a random duration in [lo, hi).
func (p *powerTest) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(p.rng.Int64N(int64(hi-lo)))
}

// writeOff writes urls, one a line, to a new file off the mount.
func (p *powerTest) writeOff(name string, urls []string) string {
	p.t.Helper()
	path := filepath.Join(p.off, name)
	if err := os.WriteFile(path, []byte(strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// command runs a urlhash command (off the power round) and returns its
// exit code, stdout and stderr.
func (p *powerTest) command(stdin string, env []string, args ...string) (int, string, string) {
	cmd := childCommand(args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errs.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errs.String()
	}
	p.t.Fatalf("%v: %v", args, err)
	return 0, "", ""
}

// missing returns how many of acked the index db lacks (has, read-only).
func (p *powerTest) missing(db string, acked []string, env ...string) int {
	p.t.Helper()
	if len(acked) == 0 {
		return 0
	}
	file := p.writeOff("acked.txt", acked)
	code, out, errs := p.command("", env, "has", "--db", db, "--from", file)
	if code == 2 {
		p.t.Errorf("has --db %s after a power loss: %s", db, errs)
		return 0
	}
	return strings.Count(out, "absent\t")
}

// firstOpen runs a writing open of the index after a power loss (a
// dedupe of nothing: it finishes a journalled batch, whose printed URLs
// it returns) and counts a failure; a failed open is run once more, to
// tell a transient refusal from a lasting one.
func (p *powerTest) firstOpen(st *powerStats, db string, env ...string) []string {
	p.t.Helper()
	code, out, errs := p.command("", env, "dedupe", "--db", db)
	if code != 0 {
		st.firstOpenFailed++
		code2, out2, errs2 := p.command("", env, "dedupe", "--db", db)
		p.t.Errorf("round %d: the first open after the power loss failed (exit %d): %s(run again: exit %d %s)", st.rounds, code, errs, code2, errs2)
		out = out2
	}
	return lines(out)
}

// verify runs urlhash verify on db; a failure is an error of the test.
func (p *powerTest) verify(st *powerStats, db string) {
	p.t.Helper()
	if code, out, errs := p.command("", nil, "verify", "--db", db); code != 0 {
		p.t.Errorf("round %d: verify after the power loss: exit %d: %s%s", st.rounds, code, out, errs)
	}
}

// dedupeUnder runs cmd (a dedupe) under r on in and returns the whole
// lines it printed (a line cut by the power loss was not printed).
// printed, when not nil, is called with each line as it is read.
func dedupeUnder(p *powerTest, r *powerRound, cmd *exec.Cmd, in []string, printed func()) []string {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	started, err := r.start(cmd)
	if err != nil {
		p.t.Fatal(err)
	}
	if !started {
		return nil
	}
	go func() {
		// As a crawler's stream: a thousand URLs at a time, paced, so
		// that batches (one a read) are acknowledged one after another
		// and a cut after a line falls among them, not after the end.
		w := bufio.NewWriterSize(stdin, 1<<16)
		for i, u := range in {
			if _, err := w.WriteString(u + "\n"); err != nil {
				return
			}
			if i%1000 == 999 {
				if w.Flush() != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		w.Flush()
		stdin.Close()
	}()
	var out []string
	br := bufio.NewReader(stdout)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break // a last line without its newline was cut: not printed
		}
		out = append(out, strings.TrimSuffix(line, "\n"))
		if printed != nil {
			printed()
		}
	}
	if err := cmd.Wait(); err != nil && !r.isLost() {
		p.t.Errorf("dedupe: %v: %s", err, stderr.String())
	}
	return out
}

// cut returns the function cutAfter returns, for a round that prints up
// to n acknowledged lines: a quarter of the rounds lose the power within
// 1.5 s of the start (an open, a first batch), the others up to 200 ms
// after a random line (within a batch or two), or after the end.
func (p *powerTest) cut(r *powerRound, n int) func() {
	if p.rng.IntN(4) == 0 {
		return cutAfter(r, 0, p.between(0, 1500*time.Millisecond))
	}
	return cutAfter(r, 1+p.rng.IntN(n), p.between(0, 200*time.Millisecond))
}

// phases cuts the power in one of a round's commands, chosen at random
// (or after the last), at a random point of its run as last measured:
// each step runs one command under r and returns whether it exited 0 (the
// next runs only then). est holds the steps' durations across rounds.
type phases struct {
	est []time.Duration
}

func (ph *phases) run(p *powerTest, r *powerRound, steps ...func() bool) {
	for len(ph.est) < len(steps) {
		ph.est = append(ph.est, 2*time.Second)
	}
	target := p.rng.IntN(len(steps) + 1)
	for i, step := range steps {
		if i == target {
			time.AfterFunc(p.between(0, ph.est[i]), r.lose)
		}
		begin := time.Now()
		ok := step()
		if !r.isLost() {
			ph.est[i] = time.Since(begin)
		}
		if !ok {
			break
		}
	}
	r.end()
}

// cutAfter returns a function to call with each acknowledged write: the
// power goes delay after the n-th (n 0: delay after the call to cutAfter).
// Writes are counted, not timed, so that a loaded machine moves the cut
// with them.
func cutAfter(r *powerRound, n int, delay time.Duration) func() {
	var mu sync.Mutex
	seen := 0
	fire := func() { time.AfterFunc(delay, r.lose) }
	if n == 0 {
		fire()
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == n {
			fire()
		}
	}
}

// afterDedupe ends a round of dedupe on the index db after the power
// loss: the URLs printed are acknowledged, the mount is cycled, the first
// open finishes the journal (its URLs acknowledged too), and every
// acknowledged URL must be there and the index verify. It returns acked
// with the new ones.
func (p *powerTest) afterDedupe(r *powerRound, st *powerStats, db string, acked, printed []string) []string {
	acked = append(acked, printed...)
	st.acked += len(printed)
	r.cycle()
	finished := p.firstOpen(st, db)
	acked = append(acked, finished...)
	st.acked += len(finished)
	st.lost += p.missing(db, acked)
	p.verify(st, db)
	return acked
}

// dedupeScenario: dedupe on an index directory on the mount.
func dedupeScenario() powerScenario {
	return powerScenario{name: "dedupe", setup: func(p *powerTest) *powerState {
		db := filepath.Join(p.dir, "idx")
		var acked []string
		return &powerState{round: func(p *powerTest, r *powerRound, st *powerStats) {
			in := p.shuffled(p.newURLs(40000), p.some(acked, 10000))
			cut := p.cut(r, 44000)
			printed := dedupeUnder(p, r, childCommand("dedupe", "--db", db), in, cut)
			r.end()
			acked = p.afterDedupe(r, st, db, acked, printed)
		}}
	}}
}

// mergeScenario: dedupe of large batches on the mount, the power cut
// while a key-table merge writes its file (or up to 150 ms after it
// appeared), or at a random point when none starts.
func mergeScenario() powerScenario {
	return powerScenario{name: "merge", setup: func(p *powerTest) *powerState {
		db := filepath.Join(p.dir, "idx")
		merging := func() bool {
			tmps, _ := filepath.Glob(filepath.Join(db, "keytable", "*.keys.tmp"))
			return len(tmps) > 0
		}
		var acked []string
		return &powerState{round: func(p *powerTest, r *powerRound, st *powerStats) {
			r.merging = merging
			in := p.shuffled(p.newURLs(120000), p.some(acked, 10000))
			stop := make(chan struct{})
			after := p.between(0, 150*time.Millisecond)
			limit := p.between(5*time.Second, 25*time.Second)
			go func() {
				deadline := time.After(limit)
				for {
					select {
					case <-stop:
						return
					case <-deadline:
						r.lose()
						return
					case <-time.After(2 * time.Millisecond):
						if merging() {
							time.Sleep(after)
							r.lose()
							return
						}
					}
				}
			}()
			printed := dedupeUnder(p, r, childCommand("dedupe", "--db", db), in, nil)
			close(stop)
			r.end()
			if r.duringMerge {
				st.duringMerge++
			}
			acked = p.afterDedupe(r, st, db, acked, printed)
		}}
	}}
}

// serveScenario: urlhash serve on the mount, three dedupe clients with
// their journals off it; the server machine loses power (the clients are
// killed with it, their journals kept), the server is started again,
// and a dedupe of nothing finishes the clients' journalled batches.
func serveScenario() powerScenario {
	return powerScenario{name: "serve", setup: func(p *powerTest) *powerState {
		db := filepath.Join(p.dir, "idx")
		cache := filepath.Join(p.off, "cache")
		env := "XDG_CACHE_HOME=" + cache
		srv := p.newServed(db)
		addr := srv.addr
		var acked []string
		var mu sync.Mutex
		return &powerState{
			round: func(p *powerTest, r *powerRound, st *powerStats) {
				srv.underPower(r)
				news := p.newURLs(30000)
				cut := p.cut(r, 33000)
				var wg sync.WaitGroup
				for range 3 {
					in := p.shuffled(p.some(news, 20000), p.some(acked, 3000))
					cmd := childCommand("dedupe", "--db", addr)
					cmd.Env = append(cmd.Env, env)
					wg.Go(func() {
						printed := dedupeUnder(p, r, cmd, in, cut)
						mu.Lock()
						acked = append(acked, printed...)
						st.acked += len(printed)
						mu.Unlock()
					})
				}
				wg.Wait()
				r.end()
				srv.lost()
				r.cycle()
				srv.restart(st)
				_, out, errs := p.command("", []string{env}, "dedupe", "--db", addr)
				if errs != "" {
					p.t.Errorf("round %d: finishing the journals: %s", st.rounds, errs)
				}
				finished := lines(out)
				acked = append(acked, finished...)
				st.acked += len(finished)
				st.lost += p.missing(addr, acked, env)
			},
			finish: func(p *powerTest, st *powerStats) {
				srv.stop()
				p.verify(st, db)
			},
		}
	}}
}

// moveScenario: URLs added (keys only: the key table) and then put with
// their text (--store-url), which moves their entries to Badger (written
// there, then deleted from the key table), the power cut anywhere in the
// two commands. After the loss: every URL an add acknowledged is there,
// every URL a put acknowledged has its text, and the counts are exact
// (stats' entries equal the exported entries: a key a cut move left in
// both stores is one entry, repaired at the first writing open).
func moveScenario() powerScenario {
	return powerScenario{name: "move", setup: func(p *powerTest) *powerState {
		db := filepath.Join(p.dir, "idx")
		var added, put []string
		var ph phases
		return &powerState{round: func(p *powerTest, r *powerRound, st *powerStats) {
			news := p.newURLs(20000)
			moved := p.some(slices.Concat(added, news), 5000)
			addFile := p.writeOff("add.txt", news)
			putFile := p.writeOff("put.txt", moved)
			var addOK, putOK bool
			ph.run(p, r, func() bool {
				var err error
				if addOK, err = r.run(childCommand("add", "--db", db, "--from", addFile)); err != nil {
					p.t.Errorf("round %d: add: %v", st.rounds, err)
				}
				return addOK
			}, func() bool {
				var err error
				if putOK, err = r.run(childCommand("put", "--db", db, "--store-url", "--from", putFile)); err != nil {
					p.t.Errorf("round %d: put: %v", st.rounds, err)
				}
				return putOK
			})
			if addOK {
				added = append(added, news...)
				st.acked += len(news)
			}
			if putOK {
				put = append(put, moved...)
				st.acked += len(moved)
			}
			r.cycle()
			p.firstOpen(st, db)
			st.lost += p.missing(db, added)
			p.verify(st, db)
			// Every acknowledged put's text, and exact counts.
			code, out, errs := p.command("", nil, "export", "--db", db, "--format", "jsonl")
			if code != 0 {
				p.t.Errorf("round %d: export: %s", st.rounds, errs)
				return
			}
			texts := map[string]bool{}
			exported := 0
			for _, l := range lines(out) {
				var e struct {
					Key  string  `json:"key"`
					Text *string `json:"text"`
				}
				if err := json.Unmarshal([]byte(l), &e); err != nil || e.Key == "" {
					continue // the header line
				}
				if e.Text != nil {
					texts[*e.Text] = true
				}
				exported++
			}
			for _, u := range put {
				if !texts[u] {
					st.lost++
				}
			}
			_, stats, _ := p.command("", nil, "stats", "--db", db)
			if got := statsEntries(stats); got != fmt.Sprintf("entries: %d", exported) {
				p.t.Errorf("round %d: stats says %q, export holds %d entries", st.rounds, got, exported)
			}
		}}
	}}
}

// served is "urlhash serve" of an index on the mount, on one address
// across its restarts.
type served struct {
	p      *powerTest
	db     string
	listen string
	addr   string    // http://listen
	cmd    *exec.Cmd // nil: not running
}

func (p *powerTest) newServed(db string) *served {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	return &served{p: p, db: db, listen: listen, addr: "http://" + listen}
}

// start starts the server (under r when not nil) and waits until it
// listens: false when it failed (its stderr logged).
func (s *served) start(r *powerRound) bool {
	cmd := childCommand("serve", "--db", s.db, "--listen", s.listen)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		s.p.t.Fatal(err)
	}
	if r != nil {
		if _, err := r.start(cmd); err != nil {
			s.p.t.Fatal(err)
		}
	} else if err := cmd.Start(); err != nil {
		s.p.t.Fatal(err)
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil || !strings.Contains(line, " on http://") {
		rest, _ := io.ReadAll(stderr)
		cmd.Wait()
		s.p.t.Logf("serve did not start: %s%s", line, rest)
		return false
	}
	go io.Copy(io.Discard, stderr)
	s.cmd = cmd
	return true
}

// underPower makes the running server (started on a new index when none
// runs) one of r's writers, stopped and killed by its power loss.
func (s *served) underPower(r *powerRound) {
	if s.cmd == nil {
		if !s.start(r) {
			s.p.t.Fatal("serve did not start on a new index")
		}
		return
	}
	r.mu.Lock()
	r.procs = append(r.procs, s.cmd)
	r.mu.Unlock()
}

// lost reaps the server the power loss killed.
func (s *served) lost() {
	s.cmd.Wait()
	s.cmd = nil
}

// restart starts the server after a power loss: its first open, counted
// when it fails (and tried once more).
func (s *served) restart(st *powerStats) {
	if !s.start(nil) {
		st.firstOpenFailed++
		if !s.start(nil) {
			s.p.t.Fatalf("round %d: serve does not start after the power loss", st.rounds)
		}
	}
}

// stop stops the server with SIGTERM (a clean close).
func (s *served) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		s.p.t.Errorf("serve after SIGTERM: %v", err)
	}
	s.cmd = nil
}

// post posts body to the server's path with an Idempotency-Key of its
// own and returns the answer's status and body (status 0: no answer).
func (s *served) post(path, body string) (int, string) {
	req, err := http.NewRequest("POST", s.addr+path, strings.NewReader(body))
	if err != nil {
		s.p.t.Fatal(err)
	}
	req.Header.Set("Idempotency-Key", fmt.Sprintf("%x", s.p.rng.Uint64()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, ""
	}
	return resp.StatusCode, string(b)
}

// A frontierClaim is a request the frontier handed out.
type frontierClaim struct{ ID, URL string }

// claim claims the due requests query allows (max, per_queue, lease):
// false when the server did not answer 200.
func (s *served) claim(query string) ([]frontierClaim, bool) {
	code, body := s.post(wire.PathFrontierClaim+"?"+query, "")
	if code != http.StatusOK {
		return nil, false
	}
	var cs []frontierClaim
	for _, l := range lines(body) {
		var c frontierClaim
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			s.p.t.Fatalf("claim: %v: %q", err, l)
		}
		cs = append(cs, c)
	}
	return cs, true
}

// frontierScenario: the crawl frontier of urlhash serve (its index,
// DIR/urlhash.frontier, on the mount), fed over HTTP as a scrapy
// scheduler feeds it: batches of new requests enqueued, due ones claimed
// and half of them acked done, the power cut after a random answer.
// After the loss (the server started again): every request whose enqueue
// was answered is queued or was acked done, and none acked done is handed
// out again.
func frontierScenario() powerScenario {
	return powerScenario{name: "frontier", setup: func(p *powerTest) *powerState {
		srv := p.newServed(filepath.Join(p.dir, "idx"))
		enqueued := map[string]bool{} // acknowledged
		done := map[string]bool{}     // acknowledged
		acking := map[string]bool{}   // in an ack whose answer the loss cut: done or not
		return &powerState{
			round: func(p *powerTest, r *powerRound, st *powerStats) {
				srv.underPower(r)
				cut := p.cut(r, 40)
				if code, body := srv.post(wire.PathFrontierDelay+"?seconds=0", ""); code != http.StatusOK && !r.isLost() {
					p.t.Fatalf("delay: %d %s", code, body)
				}
				for batch := 0; batch < 40 && !r.isLost(); batch++ {
					urls := p.newURLs(500)
					var b strings.Builder
					for _, u := range urls {
						fmt.Fprintf(&b, "{\"url\":%q}\n", u)
					}
					code, body := srv.post(wire.PathFrontierEnqueue, b.String())
					if code != http.StatusOK {
						break // the power is lost
					}
					for i, l := range lines(body) {
						if l != "new" && l != "present" {
							p.t.Fatalf("enqueue: line %d: %q", i, l)
						}
						enqueued[urls[i]] = true
					}
					st.acked += len(urls)
					cut()
					if batch%2 == 1 {
						// Claim some, ack half of them done.
						cs, ok := srv.claim("max=200&per_queue=10&lease=600")
						if !ok {
							break
						}
						if len(cs) == 0 {
							continue
						}
						var ids, idURLs []string
						for i, c := range cs {
							if i%2 == 0 {
								ids, idURLs = append(ids, c.ID), append(idURLs, c.URL)
							}
						}
						code, body := srv.post(wire.PathFrontierAck, strings.Join(ids, "\n")+"\n")
						if code != http.StatusOK {
							for _, u := range idURLs {
								acking[u] = true
							}
							break
						}
						for i, l := range lines(body) {
							if l == "done" {
								done[idURLs[i]] = true
								st.acked++
							}
						}
						cut()
					}
				}
				r.end()
				srv.lost()
				r.cycle()
				srv.restart(st)
				// Everything due (in transit before the loss: due at once),
				// claimed and released.
				claimed := map[string]bool{}
				var release []string
				for {
					cs, ok := srv.claim("max=5000&per_queue=5000&lease=600")
					if !ok {
						p.t.Fatalf("round %d: claim after the power loss: no answer", st.rounds)
					}
					if len(cs) == 0 {
						break
					}
					for _, c := range cs {
						claimed[c.URL] = true
						release = append(release, c.ID)
					}
				}
				lostNow := 0
				var sample []string
				for u := range enqueued {
					if !claimed[u] && !done[u] && !acking[u] {
						lostNow++
						if len(sample) < 3 {
							sample = append(sample, u)
						}
					}
				}
				if lostNow > 0 {
					st.lost += lostNow
					p.t.Errorf("round %d: %d requests enqueued (acknowledged) are neither queued nor done after the power loss (of %d enqueued, %d claimed, %d done), e.g. %v", st.rounds, lostNow, len(enqueued), len(claimed), len(done), sample)
				}
				again := 0
				for u := range done {
					if claimed[u] {
						again++
					}
				}
				for u := range acking {
					if claimed[u] {
						delete(acking, u) // not done: due again
					} else {
						done[u] = true // done, without an answer
					}
				}
				if again > 0 {
					p.t.Errorf("round %d: %d requests acked done were handed out again", st.rounds, again)
				}
				// Due again for the next round's claims, in requests of at
				// most the lines a server takes (a round can hold more in
				// transit).
				for len(release) > 0 {
					part := release[:min(len(release), wire.MaxFrontierLines)]
					release = release[len(part):]
					if code, body := srv.post(wire.PathFrontierRelease, strings.Join(part, "\n")+"\n"); code != http.StatusOK {
						p.t.Fatalf("round %d: release: %d %s", st.rounds, code, body)
					}
				}
			},
			finish: func(p *powerTest, st *powerStats) { srv.stop() },
		}
	}}
}

// syncScenario: urlhash sync of a threat list from a local fake endpoint
// that switches it between two versions (RESET, then DIFFs of 25,000
// additions and removals each way), one sync after another until the
// power goes. After the loss the index must hold exactly the list its
// saved state names, and that state must be the last acknowledged one
// when no sync was running.
func syncScenario() powerScenario {
	return powerScenario{name: "sync", setup: func(p *powerTest) *powerState {
		fake := newTwoVersionList(p.t, p.rng, 50000)
		db := filepath.Join(p.dir, "list")
		var ackedVersion byte // 0: none acknowledged yet
		var ph phases
		return &powerState{round: func(p *powerTest, r *powerRound, st *powerStats) {
			// One to three syncs, the power cut in one of them or after.
			running := false
			sync := func() bool {
				cmd := childCommand("sync", "--db", db, "--endpoint", fake.url)
				var errs strings.Builder
				cmd.Stderr = &errs
				ok, err := r.run(cmd)
				switch {
				case err != nil:
					p.t.Errorf("sync: %v: %s", err, errs.String())
				case !ok:
					running = true // killed by the loss (or kept from starting)
				default:
					ackedVersion = fake.sent()
					st.acked++
				}
				return ok
			}
			steps := make([]func() bool, 1+p.rng.IntN(3))
			for i := range steps {
				steps[i] = sync
			}
			ph.run(p, r, steps...)
			r.cycle()
			idx, err := index.Open(db, nil)
			if err != nil {
				if ackedVersion != 0 || !errors.Is(err, store.ErrNoIndex) {
					st.firstOpenFailed++
					p.t.Errorf("round %d: open after the power loss: %v", st.rounds, err)
				}
				return
			}
			defer idx.Close()
			ls, err := threatlist.Open(context.Background(), idx)
			if err != nil {
				st.firstOpenFailed++
				p.t.Errorf("round %d: threatlist.Open after the power loss: %v", st.rounds, err)
				return
			}
			var b threatlist.Builder
			if err := idx.Scan(context.Background(), nil, 0, 0, func(e store.Entry) error { return b.Add(e.Key()) }); err != nil {
				p.t.Errorf("round %d: scan: %v", st.rounds, err)
				return
			}
			got := b.List()
			s := ls.State(threatlist.WebRiskName("MALWARE"))
			switch {
			case s == nil && ackedVersion != 0:
				st.lost++
				p.t.Errorf("round %d: an acknowledged sync (version %d) left no saved list", st.rounds, ackedVersion)
			case s == nil:
			case len(s.Version) != 1 || fake.lists[s.Version[0]] == nil || !s.List.Equal(fake.lists[s.Version[0]]) || !got.Equal(s.List):
				st.lost++
				p.t.Errorf("round %d: the index holds %d entries, the saved list %d (version %x): not the list of its version", st.rounds, got.Len(), s.List.Len(), s.Version)
			case !running && s.Version[0] != ackedVersion:
				st.lost++
				p.t.Errorf("round %d: the saved list is version %d, the last acknowledged sync saved %d", st.rounds, s.Version[0], ackedVersion)
			}
			if err := idx.Close(); err != nil {
				p.t.Errorf("round %d: close: %v", st.rounds, err)
			}
		}}
	}}
}

// backupScenario: on the mount, an add of new URLs, a backup with
// --state (full, then incremental) and a restore of the whole chain into
// a new directory, the power cut anywhere in them. After the loss: the
// source holds every URL an add acknowledged; the chain of acknowledged
// backups restores (off the mount) with every URL acknowledged before
// its last backup; an acknowledged restore opens with them; a restore
// the loss cut is refused (urlhash.restoring) or whole.
func backupScenario() powerScenario {
	return powerScenario{name: "backup", setup: func(p *powerTest) *powerState {
		src := filepath.Join(p.dir, "src")
		state := filepath.Join(p.dir, "chain")
		var acked []string // in the source
		var chain []string // acknowledged backup files
		var chainAt []int  // len(acked) when each was written
		var ph phases
		return &powerState{round: func(p *powerTest, r *powerRound, st *powerStats) {
			n := st.rounds
			news := p.newURLs(5000)
			file := p.writeOff(fmt.Sprintf("add%d.txt", n), news)
			bak := filepath.Join(p.dir, fmt.Sprintf("b%03d.bak", n))
			restored := filepath.Join(p.dir, fmt.Sprintf("r%03d", n))
			stateBefore, _ := os.ReadFile(state)
			var added, backedUp, restoreStarted, restoredOK bool
			ph.run(p, r, func() bool {
				var err error
				if added, err = r.run(childCommand("add", "--db", src, "--from", file)); err != nil {
					p.t.Errorf("round %d: add: %v", n, err)
				}
				return added
			}, func() bool {
				out, err := os.Create(bak)
				if err != nil {
					p.t.Fatal(err)
				}
				cmd := childCommand("backup", "--db", src, "--state", state)
				cmd.Stdout = out
				backedUp, err = r.run(cmd)
				out.Close()
				if err != nil {
					p.t.Errorf("round %d: backup: %v", n, err)
				}
				return backedUp
			}, func() bool {
				restoreStarted = true
				var err error
				restoredOK, err = r.run(childCommand(append([]string{"restore", "--db", restored}, append(slices.Clone(chain), bak)...)...))
				if err != nil {
					p.t.Errorf("round %d: restore: %v", n, err)
				}
				return restoredOK
			})
			if added {
				acked = append(acked, news...)
				st.acked += len(news)
			}
			r.cycle()
			p.firstOpen(st, src)
			st.lost += p.missing(src, acked)
			// The backup: acknowledged, or written whole (the state moves on
			// only after the file is fsynced) and cut before its exit.
			stateAfter, _ := os.ReadFile(state)
			switch {
			case backedUp:
				st.acked++
			case added && string(stateAfter) != string(stateBefore):
				st.note("round %d: backup cut after its state was written: kept", n)
				backedUp = true
			default:
				os.Remove(bak)
			}
			if backedUp {
				chain = append(chain, bak)
				chainAt = append(chainAt, len(acked))
			}
			if len(chain) > 0 {
				// The chain restores (off the mount) with every URL up to
				// its last backup.
				chk := filepath.Join(p.off, fmt.Sprintf("check%d", n))
				code, _, errs := p.command("", nil, append([]string{"restore", "--db", chk}, chain...)...)
				if code != 0 {
					st.lost++
					p.t.Errorf("round %d: the chain of %d acknowledged backups does not restore: %s", n, len(chain), errs)
				} else {
					st.lost += p.missing(chk, acked[:chainAt[len(chainAt)-1]])
				}
				os.RemoveAll(chk)
			}
			// The restore.
			switch {
			case restoredOK:
				st.acked++
				st.lost += p.missing(restored, acked[:chainAt[len(chainAt)-1]])
			case restoreStarted:
				if _, err := os.Stat(restored); err != nil {
					break // cut before it made the directory
				}
				// Refused as unfinished (urlhash.restoring), or whole, or,
				// cut before the restore began writing, empty: never
				// part of the chain served as if whole.
				want := acked[:chainAt[len(chainAt)-1]]
				file := p.writeOff("acked.txt", want)
				code, out, errs := p.command("", nil, "has", "--db", restored, "--from", file)
				if code == 2 && strings.Contains(errs, "not closed cleanly") {
					p.firstOpen(st, restored)
					code, out, errs = p.command("", nil, "has", "--db", restored, "--from", file)
				}
				absent := strings.Count(out, "absent\t")
				switch {
				case code == 0:
					st.note("round %d: restore cut after it finished", n)
				case code == 2 && strings.Contains(errs, "urlhash.restoring"):
				case code == 1 && absent == len(want):
					st.note("round %d: restore cut before it began", n)
				case code == 2 && strings.Contains(errs, "holds no index"):
					// Cut after it made the directory, before anything in
					// it was durable: nothing was acknowledged.
					st.note("round %d: restore cut before it wrote anything", n)
				default:
					st.lost++
					p.t.Errorf("round %d: a restore cut by the power loss: has exits %d (%d of %d absent): %s", n, code, absent, len(want), errs)
				}
			}
			os.RemoveAll(restored)
		}, finish: func(p *powerTest, st *powerStats) {
			p.verify(st, src)
			st.note("chain of %d backups", len(chain))
		}}
	}}
}
