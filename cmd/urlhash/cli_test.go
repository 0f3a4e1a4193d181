package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/index"
)

// runCLI runs the CLI in-process with the given stdin.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errs)
	return code, out.String(), errs.String()
}

func TestNULSeparatedInput(t *testing.T) {
	code, out, errs := runCLI(t, "https://example.com/a\nb\x00HTTPS://EXAMPLE.COM\x00", "canon", "-0")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// The URL Standard removes the newline inside the first record.
	if want := "https://example.com/ab\nhttps://example.com/\n"; out != want {
		t.Fatalf("stdout = %q, want %q", out, want)
	}
}

func TestLockedIndexIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	ix, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	code, _, errs := runCLI(t, "", "has", "--db", dir, "https://example.com/")
	if code != exitError || !strings.Contains(errs, "locked") || !strings.Contains(errs, "--wait") {
		t.Fatalf("exit %d, stderr %q; want 2 and a locked error with a --wait hint", code, errs)
	}
}

// TestOrderPreservedOnAllCores: canon on four workers prints each input's
// canonical form in input order. The input is not canonical (a command
// that echoed it fails), spans five batches of 8192, and the early
// batches cost more than the later ones, so a writer that took batches in
// the order they finish would print them out of order.
func TestOrderPreservedOnAllCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 5 * 8192
	var in, want strings.Builder
	for i := range n {
		pad := strings.Repeat("x", 1+(n-i)/200) // a segment ".." removes
		fmt.Fprintf(&in, "HTTPS://Example.COM/p/%s/../%d\n", pad, i)
		fmt.Fprintf(&want, "https://example.com/p/%d\n", i)
	}
	code, out, errs := runCLI(t, in.String(), "canon")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if got := out; got != want.String() {
		gl, wl := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d of %d: %q, want %q", i+1, len(wl)-1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl)-1, len(wl)-1)
	}
}

// A producer that writes one URL to a --from pipe and waits gets its
// answer before it closes the pipe: only regular files are read in full
// batches.
func TestFromPipeAnsweredAsItArrives(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "urls")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no named pipes here:", err)
	}
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"dedupe", "--db", filepath.Join(dir, "idx"), "--from", fifo}, strings.NewReader(""), outW, io.Discard)
		outW.Close()
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, "https://a.example/\n"); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outR).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line != "https://a.example/\n" {
			t.Errorf("first answer %q", line)
		}
	case <-time.After(20 * time.Second):
		t.Error("no answer while the pipe stays open")
	}
	w.Close()
	go io.Copy(io.Discard, outR)
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

// failingWriter fails every write, as a full disk or a closed pipe does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestOutputFailure: a command whose output cannot be written says so
// and exits 2, however small the output (a buffered writer fails only
// when it is flushed).
func TestOutputFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	if code, _, errs := runCLI(t, "", "add", "--db", dir, "https://a.example/"); code != exitOK {
		t.Fatal(errs)
	}
	for _, args := range [][]string{
		{"hash", "https://a.example/"},
		{"has", "--db", dir, "https://a.example/"},
		{"get", "--db", dir, "https://a.example/"},
		{"dedupe", "--db", dir, "https://b.example/"},
		{"scan", "--db", dir, "--prefix", ""},
		{"scan", "--db", dir, "--prefix", "", "--json"},
		{"stats", "--db", dir},
		{"stats", "--db", dir, "--json"},
		{"export", "--db", dir},
		{"verify", "--db", dir},
		{"import", "--db", dir, "--json", "-"},
		{"version"},
		{"help"},
	} {
		var errs bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), failingWriter{}, &errs)
		if code != exitError || !strings.Contains(errs.String(), "disk full") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the write error", args, code, errs.String())
		}
	}
}
