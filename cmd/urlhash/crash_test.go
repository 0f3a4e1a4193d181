package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killRuns returns how many killed runs a kill loop makes: def, or
// URLHASH_KILL_RUNS. It skips the test in -short mode (child processes).
func killRuns(t *testing.T, def int) int {
	t.Helper()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	if n, err := strconv.Atoi(os.Getenv("URLHASH_KILL_RUNS")); err == nil {
		return n
	}
	return def
}

// TestDedupeKillLoop kills dedupe with SIGKILL at random points while it
// reads a stream of URLs, then runs it again, several times, and a last
// run to completion. Every URL must be printed at least once over all the
// runs (none stored and lost), and every printed URL must be present.
// URLHASH_KILL_RUNS sets the number of killed runs (default 6; the longer
// loop is a benchmark-sized run of the same test).
func TestDedupeKillLoop(t *testing.T) {
	runs := killRuns(t, 6)
	dir := filepath.Join(t.TempDir(), "idx")
	var urls []string
	for i := range 40000 {
		urls = append(urls, fmt.Sprintf("https://site%d.example/page/%d", i%97, i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	printed := make(map[string]int)
	var killedAfter []int
	for run := 0; run <= runs; run++ {
		in := append([]string(nil), urls...)
		rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		kill := run < runs
		lines := dedupeChild(t, childCommand("dedupe", "--db", dir), in, kill, time.Duration(30+rng.IntN(400))*time.Millisecond)
		for _, l := range lines {
			printed[l]++
		}
		killedAfter = append(killedAfter, len(lines))
	}
	checkPrinted(t, urls, printed, dir, fmt.Sprintf("%d killed runs (lines printed per run: %v)", runs, killedAfter))
}

// checkPrinted is the verdict of a kill loop over urls, after a last run
// to completion: every URL was printed at least once (a URL stored
// without being printed is lost: the crash took an acknowledged answer),
// and the index at db holds every one of them. It logs what printed them
// (runs) and how many were printed again after a crash.
func checkPrinted(t *testing.T, urls []string, printed map[string]int, db, runs string) {
	t.Helper()
	lost, dups := 0, 0
	for _, u := range urls {
		switch c := printed[u]; {
		case c == 0:
			lost++
		case c > 1:
			dups += c - 1
		}
	}
	t.Logf("%s, %d URLs, %d printed, %d printed again after a crash, %d lost", runs, len(urls), len(printed), dups, lost)
	if lost != 0 {
		t.Fatalf("%d stored URLs were never printed", lost)
	}
	// Every printed URL is present (no filter false negative, nothing lost).
	if out, err := cli(t, strings.Join(urls, "\n")+"\n", "has", "--db", db, "-q"); err != nil {
		t.Fatalf("has after the loop: %v %s", err, out)
	}
}

// dedupeChild runs cmd, a "urlhash dedupe" (childCommand), on in,
// killing it with SIGKILL after d when kill is set, and returns the whole
// lines it printed. It may run in a goroutine of its own: a failure is
// reported with t.Error, and what the run printed returned.
func dedupeChild(t *testing.T, cmd *exec.Cmd, in []string, kill bool, d time.Duration) []string {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Error(err)
		return nil
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Error(err)
		return nil
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return nil
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, u := range in {
			if _, err := w.WriteString(u + "\n"); err != nil {
				return // killed
			}
		}
		w.Flush()
		stdin.Close()
	}()
	if kill {
		time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
	}
	b, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil && !kill {
		t.Errorf("dedupe: %v: %s", err, stderr.String())
	}
	text := string(b)
	i := strings.LastIndexByte(text, '\n')
	if i <= 0 {
		return nil
	}
	return strings.Split(text[:i], "\n") // a line cut by the kill was not printed
}

// TestImportKillLoop kills import with SIGKILL at random points, then
// imports the same file again, several times, and once to completion.
// The index must open, verify and hold every URL (no loss, no filter
// false negative): an interrupted import acknowledges nothing and can
// always be run again.
func TestImportKillLoop(t *testing.T) {
	runs := killRuns(t, 4)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "idx")
	file := filepath.Join(tmp, "urls.txt")
	var b strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&b, "https://site%d.example/page/%d\n", i%97, i)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	killed := 0
	for range runs {
		cmd := childCommand("import", "--db", dir, file)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(time.Duration(20+rng.IntN(400))*time.Millisecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
		if err := cmd.Wait(); err != nil {
			killed++
		}
	}
	if out, err := childCommand("import", "--db", dir, file).CombinedOutput(); err != nil {
		t.Fatalf("import after the kills: %v: %s", err, out)
	}
	if out, err := childCommand("verify", "--db", dir).CombinedOutput(); err != nil {
		t.Fatalf("verify: %v: %s", err, out)
	}
	var errs strings.Builder
	has := childCommand("has", "--db", dir, "-q", "--from", file)
	has.Stderr = &errs
	if err := has.Run(); err != nil {
		t.Fatalf("has of every imported URL: %v %s", err, errs.String())
	}
	t.Logf("%d import runs, %d killed before they ended; then all 200000 URLs present, verify ok", runs, killed)
}

// TestImportInterrupted interrupts (SIGINT, as Ctrl-C) an import that is
// reading a pipe: it stores nothing, leaves no index it created, exits 2
// and says "interrupted", whether the interrupt comes while it waits for
// input or after it read some.
func TestImportInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, lines := range []int{0, 5000} {
		t.Run(strconv.Itoa(lines), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			cmd := childCommand("import", "--db", dir, "-")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for i := range lines {
				fmt.Fprintf(stdin, "https://example.com/%d\n", i)
			}
			// The import has its signal handler once it created the index
			// (under load the child took longer than a fixed pause to get
			// there, and SIGINT's default killed it); the pipe stays
			// open: it waits for more.
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(dir); err == nil || time.Now().After(deadline) {
					break
				}
			}
			time.Sleep(200 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGINT)
			err = cmd.Wait()
			stdin.Close()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitError {
				t.Fatalf("exit: %v, want status 2; stderr:\n%s", err, stderr.String())
			}
			want := "urlhash: error: interrupted: nothing stored\nurlhash: import: 0 stored, 0 duplicates, 0 skipped\n"
			if stderr.String() != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the index the import created is left behind: %v", err)
			}
		})
	}
}
