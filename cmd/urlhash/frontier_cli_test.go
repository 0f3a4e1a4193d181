package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/urlhash/urlhash/internal/golden"
)

// startFrontierAddr starts "urlhash serve --frontier" on a new index and
// returns its gRPC address.
func startFrontierAddr(t *testing.T) string {
	t.Helper()
	addr := freeAddr(t)
	startFrontier(t, filepath.Join(t.TempDir(), "idx"), addr)
	return addr
}

// rfc3339 matches the times status and list print.
var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// TestFrontierActions runs testdata/frontier-actions: each "run" is an
// urlhash command line (its first input line; the other lines are its
// standard input) against a served frontier (--addr added), answered with
// its output, then its exit status. Times print as TIME, the server's
// address as ADDR. Every action of "urlhash frontier" must be run.
func TestFrontierActions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	addr := startFrontierAddr(t)
	seen := map[string]bool{}
	golden.Rewrite(t)
	datadriven.RunTest(t, "testdata/frontier-actions", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "run" {
			t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
		}
		line, stdin, _ := strings.Cut(td.Input, "\n")
		args := shellWords(t, line)
		if len(args) > 1 && args[0] == "frontier" {
			seen[args[1]] = true
		}
		var out bytes.Buffer
		code := run(context.Background(), append(args, "--addr", addr), strings.NewReader(stdin), &out, &out)
		s := strings.ReplaceAll(rfc3339.ReplaceAllString(out.String(), "TIME"), addr, "ADDR")
		return fmt.Sprintf("%sexit %d\n", s, code)
	})
	for _, a := range frontierActionNames() {
		if !seen[a] {
			t.Errorf("testdata/frontier-actions runs no \"frontier %s\"", a)
		}
	}
}

// TestFrontierHelpCoversActions: the help, the man page and every shell's
// completion name every action of "urlhash frontier" (made from one
// table, so that an action added there is in each).
func TestFrontierHelpCoversActions(t *testing.T) {
	c := findCommand("frontier")
	specs := completionSpecs()
	docs := map[string]string{"help": c.usage(), "man page": c.manPage()}
	for shell, write := range completionWriters {
		var b strings.Builder
		write(&b, specs)
		docs[shell+" completion"] = b.String()
	}
	for _, a := range frontierActions() {
		for name, doc := range docs {
			if !strings.Contains(doc, a.name) && !strings.Contains(doc, roffEscape(a.name)) {
				t.Errorf("the %s does not name the action %q", name, a.name)
			}
		}
		if !strings.Contains(docs["help"], "urlhash frontier "+a.name) {
			t.Errorf("the help has no synopsis of %q", a.name)
		}
		for _, f := range a.flags {
			if !strings.Contains(docs["help"], "--"+f) {
				t.Errorf("the help does not name %s's flag --%s", a.name, f)
			}
		}
	}
}

// TestReadmeFrontier runs the README's frontier commands (the shell block
// of "Crawl frontier") against a served frontier, in order: each must
// succeed, and what the block says a command prints ("# " lines after it,
// spaces aside) is what it prints.
func TestReadmeFrontier(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	text := readme(t)
	i := strings.Index(text, "## Crawl frontier")
	if i < 0 {
		t.Fatal("README.md has no Crawl frontier section")
	}
	blocks, _ := fencedBlocks(text[i:], "sh")
	if len(blocks) == 0 {
		t.Fatal("README.md's Crawl frontier section has no sh block")
	}
	addr := startFrontierAddr(t)
	var cmds [][]string // command lines, then the lines they print
	for _, l := range strings.Split(blocks[0], "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "urlhash frontier "):
			if j := strings.Index(l, " #"); j >= 0 {
				l = l[:j]
			}
			for _, c := range strings.Split(l, ";") {
				cmds = append(cmds, []string{strings.TrimSpace(c)})
			}
		case strings.HasPrefix(l, "# ") && len(cmds) > 0 && strings.HasPrefix(cmds[len(cmds)-1][0], "urlhash frontier "):
			if j := strings.Index(l, "  ("); j >= 0 {
				l = l[:j] // a note, not output
			}
			cmds[len(cmds)-1] = append(cmds[len(cmds)-1], strings.Join(strings.Fields(l[2:]), " "))
		}
	}
	ran := map[string]bool{}
	for _, c := range cmds {
		args := shellWords(t, strings.TrimPrefix(c[0], "urlhash "))
		ran[args[1]] = true
		var out, errs bytes.Buffer
		if code := run(context.Background(), append(args, "--addr", addr), strings.NewReader(""), &out, &errs); code != exitOK {
			t.Errorf("README.md: %s: exit %d: %s", c[0], code, errs.String())
			continue
		}
		if len(c) == 1 {
			continue
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			got = append(got, strings.Join(strings.Fields(l), " "))
		}
		if strings.Join(got, "\n") != strings.Join(c[1:], "\n") {
			t.Errorf("README.md: %s prints\n%s\nnot, as the README says,\n%s", c[0], strings.Join(got, "\n"), strings.Join(c[1:], "\n"))
		}
	}
	if len(ran) < 4 {
		t.Errorf("README.md's frontier block ran %d actions: %v", len(ran), cmds)
	}
}

// shellWords splits a command line into words as sh does for words in
// single quotes and words without quotes.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, have := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			in, have = !in, true
		case r == ' ' && !in:
			if have {
				words = append(words, w.String())
			}
			w.Reset()
			have = false
		default:
			w.WriteRune(r)
			have = true
		}
	}
	if in {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if have {
		words = append(words, w.String())
	}
	return words
}
