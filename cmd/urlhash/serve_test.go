package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
)

// startServe runs "urlhash serve --db dir" as a child process on a free
// loopback port and returns it with its URL.
func startServe(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	return startServeOn(t, dir, "127.0.0.1:0")
}

// startServeOn runs "urlhash serve --db dir --listen listen" (a loopback
// address) as a child process and returns it with its URL.
func startServeOn(t *testing.T, dir, listen string) (*exec.Cmd, string) {
	t.Helper()
	return startServeWith(t, dir, "--listen", listen)
}

// startServeWith runs "urlhash serve --db dir" with more flags as a child
// process on loopback and returns it with its URL (http or https).
func startServeWith(t *testing.T, dir string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := childCommand(append([]string{"serve", "--db", dir}, flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A test that fails midway leaves no server behind (holding its
	// directory); a stopped one is not stopped twice.
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	_, addr, ok := strings.Cut(strings.TrimSpace(line), " on ")
	if !ok || !strings.HasPrefix(addr, "http://127.0.0.1:") && !strings.HasPrefix(addr, "https://127.0.0.1:") {
		t.Fatalf("serve said %q", line)
	}
	go io.Copy(io.Discard, stderr)
	return cmd, addr
}

// cli runs a urlhash command as a child and returns its stdout.
func cli(t *testing.T, stdin string, args ...string) (string, error) {
	cmd := childCommand(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, errb.String())
	}
	return string(out), err
}

// TestServeDedupe: four concurrent dedupe clients of one server, each
// with the same URLs in another order, print every URL exactly once in
// total; remote export, scan and has answer as the directory does; SIGTERM
// stops the server with exit 0.
func TestServeDedupe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	// Dedupe's journals are keyed by the server's URL: orphans that other
	// tests' killed clients left for a server on the same port (ports are
	// reused) must not be finished into this one.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "idx")
	srv, addr := startServe(t, dir)
	var urls []string
	for i := range 20000 {
		urls = append(urls, fmt.Sprintf("https://site%d.example/p/%d", i%50, i))
	}
	outs := make([]string, 4)
	var wg sync.WaitGroup
	for k := range 4 {
		in := append([]string(nil), urls...)
		rand.New(rand.NewPCG(uint64(k), 9)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		wg.Go(func() {
			out, err := cli(t, strings.Join(in, "\n")+"\n", "dedupe", "--db", addr)
			if err != nil {
				t.Error(err)
			}
			outs[k] = out
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, o := range outs {
		for _, l := range strings.Fields(o) {
			seen[l]++
		}
	}
	for _, u := range urls {
		if seen[u] != 1 {
			t.Fatalf("%s printed %d times over the four clients", u, seen[u])
		}
	}
	// What the index must answer, over the server and from the directory:
	// every URL's hash (dedupe stores no text), in order; those starting
	// 0a; one URL present and one absent (exit 1).
	var hashes []string
	for _, u := range urls {
		h := hashkey.Sum([]byte(u)) // the URLs are canonical
		hashes = append(hashes, hex.EncodeToString(h[:]))
	}
	slices.Sort(hashes)
	var prefixed []string
	for _, h := range hashes {
		if strings.HasPrefix(h, "0a") {
			prefixed = append(prefixed, h)
		}
	}
	checks := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"export"}, strings.Join(hashes, "\n") + "\n", exitOK},
		{[]string{"scan", "--prefix", "0a"}, strings.Join(prefixed, "\n") + "\n", exitOK},
		{[]string{"has", "https://site1.example/p/1", "https://none.example/"},
			"present\thttps://site1.example/p/1\nabsent\thttps://none.example/\n", exitNotFound},
	}
	answers := func(db string) {
		t.Helper()
		for _, c := range checks {
			out, err := cli(t, "", append(c.args, "--db", db)...)
			code := exitOK
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || out != c.want {
				t.Errorf("%s --db %s: exit %d (%v), %d bytes; want exit %d, %d bytes", c.args[0], db, code, err, len(out), c.code, len(c.want))
			}
		}
	}
	answers(addr)
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	answers(dir)
}

// TestServeKill: kill -9 of the server while clients dedupe, once each
// client has printed an answer; after a restart every URL a client
// printed is present.
func TestServeKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	// Dedupe's journals are keyed by the server's URL: orphans that other
	// tests' killed clients left for a server on the same port (ports are
	// reused) must not be finished into this one.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "idx")
	srv, addr := startServe(t, dir)
	var mu sync.Mutex
	var printed []string
	var wg sync.WaitGroup
	answered := make(chan struct{}, 2) // one a client, at its first line
	for k := range 2 {
		var in strings.Builder
		for i := range 100000 {
			fmt.Fprintf(&in, "https://c%d.example/%d\n", k, i)
		}
		cmd := childCommand("dedupe", "--db", addr)
		cmd.Stdin = strings.NewReader(in.String())
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sc := bufio.NewScanner(stdout) // a line cut by the kill has no LF: not printed
			first := true
			for sc.Scan() {
				mu.Lock()
				printed = append(printed, sc.Text())
				mu.Unlock()
				if first {
					answered <- struct{}{}
					first = false
				}
			}
			cmd.Wait() // killed midway: an error
		})
	}
	for range 2 {
		select {
		case <-answered:
		case <-time.After(2 * time.Minute):
			t.Fatal("a client printed nothing in 2 minutes")
		}
	}
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	wg.Wait()
	srv, addr = startServe(t, dir)
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	if out, err := cli(t, strings.Join(printed, "\n")+"\n", "has", "--db", addr); err != nil {
		var absent []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "absent\t") {
				absent = append(absent, l)
			}
		}
		t.Fatalf("after the restart, %d of the %d printed URLs are absent (%v), e.g. %q", len(absent), len(printed), err, absent[:min(3, len(absent))])
	}
	if len(printed) >= 200000 {
		t.Fatalf("the clients printed all %d URLs: the kill came after their last answer", len(printed))
	}
	t.Logf("%d URLs printed before the kill, all present after the restart", len(printed))
}

// TestServeLogFlags: --log-format and --log-level take the documented
// values and refuse others with a usage error naming the flag.
func TestServeLogFlags(t *testing.T) {
	tests := []struct {
		format, level string
		wantErr       string // "" when accepted
		debug, info   bool   // enabled levels when accepted
	}{
		{"text", "info", "", false, true},
		{"json", "debug", "", true, true},
		{"json", "warn", "", false, false},
		{"text", "ERROR", "", false, false},
		{"xml", "info", "--log-format", false, false},
		{"text", "loud", "--log-level", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.format+"/"+tc.level, func(t *testing.T) {
			l, err := newLogger(io.Discard, tc.format, tc.level)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Enabled(t.Context(), slog.LevelDebug); got != tc.debug {
				t.Errorf("debug enabled = %v, want %v", got, tc.debug)
			}
			if got := l.Enabled(t.Context(), slog.LevelInfo); got != tc.info {
				t.Errorf("info enabled = %v, want %v", got, tc.info)
			}
		})
	}
}

// writer writes through a server until stop is closed or a write fails
// (the server was killed): batches of new entries, in turn added and put
// with each URL as its value's text, and added without a value (a
// seen-set's entries, which the key table holds). It returns the entries
// whose write was acknowledged, in order, each with the time of its
// acknowledgement.
func writer(t *testing.T, addr string, k, run int, stop <-chan struct{}) (acked []store.Entry, at []time.Time) {
	ctx := context.Background()
	db, err := remote.Open(t.Context(), addr, &remote.Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Error(err)
		return nil, nil
	}
	defer db.Close()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return acked, at
		default:
		}
		es := make([]store.Entry, 50)
		for j := range es {
			u := fmt.Sprintf("https://w%d.example/run%d/%d/%d", k, run, i, j)
			es[j] = store.FullEntry(hashkey.Sum([]byte(u)), store.Value{Text: []byte(u)})
			if i%3 == 2 {
				es[j].Value = store.Value{}
			}
		}
		if i%3 == 1 {
			err = db.PutBatch(ctx, es)
		} else {
			_, err = db.AddBatch(ctx, es)
		}
		if err != nil {
			return acked, at
		}
		now := time.Now()
		for range es {
			at = append(at, now)
		}
		acked = append(acked, es...)
	}
}

// checkAcked fails the test unless every entry is stored (with its text)
// in the index served at addr, and that index verifies.
func checkAcked(t *testing.T, addr string, acked []store.Entry) {
	t.Helper()
	db, err := remote.Open(t.Context(), addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkEntries(t, db, acked)
	if err := db.Verify(context.Background()); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// checkEntries fails the test unless every entry is stored in st, with its
// value's text.
func checkEntries(t *testing.T, st store.Backend, want []store.Entry) {
	ctx := context.Background()
	t.Helper()
	hs := make([]hashkey.Hash, len(want))
	for i, e := range want {
		hs[i] = e.Hash
	}
	found, err := st.HasBatch(ctx, hs)
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	for i, ok := range found {
		if !ok {
			if missing++; missing <= 3 {
				t.Errorf("acknowledged %x (%s) is missing", want[i].Hash[:8], want[i].Value.Text)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged entries missing", missing, len(want))
	}
	for i := 0; i < len(want); i += max(1, len(want)/200) { // a sample of the values
		v, err := st.Get(ctx, want[i].Hash)
		if err != nil || string(v.Text) != string(want[i].Value.Text) {
			t.Fatalf("%s: text %q, %v", want[i].Value.Text, v.Text, err)
		}
	}
}

// TestServeKillLoop: kill -9 of the server while clients write, then a
// restart, many times over: after every restart, every write a client saw
// acknowledged is present and the index verifies. URLHASH_KILL_RUNS sets
// the number of kills (default 3).
func TestServeKillLoop(t *testing.T) {
	runs := killRuns(t, 3)
	dir := filepath.Join(t.TempDir(), "idx")
	rng := rand.New(rand.NewPCG(5, 6))
	var acked []store.Entry
	srv, addr := startServe(t, dir)
	for run := range runs {
		stop := make(chan struct{}) // never closed: the kill stops the writers
		var mu sync.Mutex
		var wg sync.WaitGroup
		for k := range 3 {
			wg.Go(func() {
				es, _ := writer(t, addr, k, run, stop)
				mu.Lock()
				acked = append(acked, es...)
				mu.Unlock()
			})
		}
		time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		srv.Process.Signal(syscall.SIGKILL)
		srv.Wait()
		wg.Wait()
		srv, addr = startServe(t, dir)
		checkAcked(t, addr, acked)
		t.Logf("run %d: %d entries acknowledged so far, all present after the restart", run, len(acked))
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before any kill")
	}
}

// TestServeBackup: "urlhash backup --db http://…" while clients write;
// the backup restores into a new directory that verifies and holds every
// entry acknowledged before the backup started.
func TestServeBackup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	tmp := t.TempDir()
	srv, addr := startServe(t, filepath.Join(tmp, "idx"))
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	stop := make(chan struct{})
	var mu sync.Mutex
	var acked []store.Entry
	var at []time.Time
	var wg sync.WaitGroup
	for k := range 3 {
		wg.Go(func() {
			es, ts := writer(t, addr, k, 0, stop)
			mu.Lock()
			acked, at = append(acked, es...), append(at, ts...)
			mu.Unlock()
		})
	}
	time.Sleep(300 * time.Millisecond)
	bak := filepath.Join(tmp, "full.bak")
	f, err := os.Create(bak)
	if err != nil {
		t.Fatal(err)
	}
	cmd := childCommand("backup", "--db", addr)
	cmd.Stdout = f
	var stderr strings.Builder
	cmd.Stderr = &stderr
	began := time.Now()
	err = cmd.Run()
	f.Close()
	time.Sleep(100 * time.Millisecond) // writes after the backup too
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "urlhash: backup: full") || !strings.Contains(stderr.String(), "next: --since ") {
		t.Errorf("backup said %q", stderr.String())
	}
	var before []store.Entry
	for i, e := range acked {
		if at[i].Before(began) {
			before = append(before, e)
		}
	}
	if len(before) == 0 || len(before) == len(acked) {
		t.Fatalf("%d of %d writes acknowledged before the backup: the writes did not overlap it", len(before), len(acked))
	}
	restored := filepath.Join(tmp, "restored")
	if out, err := cli(t, "", "restore", "--db", restored, bak); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
	if out, err := cli(t, "", "verify", "--db", restored); err != nil {
		t.Fatalf("verify of the restored index: %v %s", err, out)
	}
	db, err := index.Open(restored, &index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkEntries(t, db, before)
	t.Logf("%d entries acknowledged before the backup began (of %d), all restored", len(before), len(acked))
}

// TestServeDrainsOnSIGTERM: SIGTERM while two bulk loads stream (longer
// than the 5 s grace other commands get) lets both finish and be answered,
// then serve syncs, closes the index cleanly and exits 0 (issue 21, item
// 6): a read-only open afterwards finds every loaded key.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	srv, addr := startServe(t, dir)
	const loads, lines = 2, 70
	key := func(l, i int) string { return hashkey.Sum([]byte(fmt.Sprintf("drain %d %d", l, i))).String() }
	answers := make(chan string, loads)
	started := make(chan struct{}, loads)
	for l := range loads {
		pr, pw := io.Pipe()
		go func() {
			started <- struct{}{}
			for i := range lines {
				fmt.Fprintf(pw, "{\"key\":%q}\n", key(l, i))
				time.Sleep(100 * time.Millisecond) // 7 s in all
			}
			pw.Close()
		}()
		go func() {
			resp, err := http.Post(addr+"/v1/load", "application/x-ndjson", pr)
			if err != nil {
				answers <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(b))
		}()
	}
	for range loads {
		<-started
	}
	time.Sleep(time.Second)
	srv.Process.Signal(syscall.SIGTERM)
	for range loads {
		if got := <-answers; !strings.HasPrefix(got, "200 ") {
			t.Errorf("a load in flight at SIGTERM got %q, want 200", got)
		}
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v, want exit 0", err)
	}
	db, err := index.Open(dir, &index.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after SIGTERM: %v (not closed cleanly?)", err)
	}
	defer db.Close()
	for l := range loads {
		for i := range lines {
			h, _ := hashkey.ParseHash(key(l, i))
			if ok, err := db.Has(context.Background(), h); !ok || err != nil {
				t.Fatalf("load %d line %d missing after a drained stop: %v", l, i, err)
			}
		}
	}
}

// TestBackupReadsOnly: backup opens the index read-only, so it runs while
// another process reads it, and a backup killed midway leaves an index
// that readers still open (issue 21, item 10).
func TestBackupReadsOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	var urls strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&urls, "https://example.com/%d\n", i)
	}
	if _, err := cli(t, urls.String(), "add", "--db", dir); err != nil {
		t.Fatal(err)
	}
	reader, err := index.Open(dir, &index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	backup := func() *exec.Cmd {
		f, err := os.Create(filepath.Join(t.TempDir(), "full.bak"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cmd := childCommand("backup", "--db", dir)
		cmd.Stdout = f
		return cmd
	}
	var errb strings.Builder
	first := backup()
	first.Stderr = &errb
	if err := first.Run(); err != nil {
		t.Fatalf("backup beside a reader: %v: %s", err, errb.String())
	}
	reader.Close()
	for range 3 {
		cmd := backup()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		ro, err := index.Open(dir, &index.Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only open after a killed backup: %v", err)
		}
		ro.Close()
	}
}

// TestImportGzipBomb: importing a gzipped run of newlines is an error
// naming the file (exit 2), not minutes of work ending in "0 stored" and
// exit 0 (issue 21, item 13).
func TestImportGzipBomb(t *testing.T) {
	name := filepath.Join(t.TempDir(), "bomb.gz")
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	newlines := bytes.Repeat([]byte("\n"), 1<<20)
	for range 64 {
		zw.Write(newlines)
	}
	zw.Close()
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := cli(t, "", "import", "--db", filepath.Join(t.TempDir(), "idx"), name)
	if err == nil || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "bomb.gz") || !strings.Contains(err.Error(), "decompression bomb") {
		t.Fatalf("import of a gzip bomb: %v; want exit 2 naming bomb.gz as a decompression bomb", err)
	}
	t.Logf("refused after %v", time.Since(start))
}

// TestServeDedupeOrder: dedupe through a server keeps several batches in
// flight, which the server may add in any order; still the first input of
// each identity is the one printed, as on a directory, and the run leaves
// no journal behind.
func TestServeDedupeOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	srv, addr := startServe(t, filepath.Join(t.TempDir(), "idx"))
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	var in, want strings.Builder
	const n = 4 << 13 // four batches of dedupe.Client.BatchSize's 8,192 through a server
	for i := range n {
		// Line i+n/2 is a variant of line i (the same identity), in a
		// later batch.
		host := "example.com"
		if i >= n/2 {
			host = "EXAMPLE.com"
		}
		fmt.Fprintf(&in, "https://%s/%d\n", host, i%(n/2))
		if i < n/2 {
			fmt.Fprintf(&want, "https://example.com/%d\n", i)
		}
	}
	urls := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(urls, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	out, err := cli(t, "", "dedupe", "--db", addr, "--from", urls)
	if err != nil {
		t.Fatal(err)
	}
	if out != want.String() {
		t.Fatalf("printed %d bytes, want the %d of the first inputs", len(out), want.Len())
	}
	journals, _ := filepath.Glob(filepath.Join(cache, "urlhash", "dedupe", "*", "*.journal"))
	if len(journals) != 0 {
		t.Errorf("journals left behind: %v", journals)
	}
}

// TestServeMemoryLimit: --memory-limit refuses a negative size, naming the
// flag, and a serve that returns leaves the process's limit as it was.
func TestServeMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	for _, tc := range []struct {
		limit, want string
	}{
		{"-1", "--memory-limit -1"},
		// Accepted; serve then fails to listen.
		{"64", "listen"},
	} {
		var errs strings.Builder
		args := []string{"serve", "--db", t.TempDir(), "--listen", "127.0.0.1:-1", "--memory-limit", tc.limit}
		if code := run(t.Context(), args, strings.NewReader(""), io.Discard, &errs); code != exitError || !strings.Contains(errs.String(), tc.want) {
			t.Errorf("--memory-limit %s: exit %d, %q; want %d naming %q", tc.limit, code, errs.String(), exitError, tc.want)
		}
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("--memory-limit %s: the limit is %d after serve returned, want %d", tc.limit, got, before)
		}
	}
}
