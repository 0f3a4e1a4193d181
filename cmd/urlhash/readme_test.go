package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readme returns the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fencedBlocks returns the bodies of the README's fenced blocks of lang
// ("console", "go"), each with the line of the README it starts on.
func fencedBlocks(text, lang string) (bodies []string, lines []int) {
	var body strings.Builder
	in := false
	start := 0
	for i, l := range strings.Split(text, "\n") {
		switch {
		case !in && l == "```"+lang:
			in, start = true, i+2
			body.Reset()
		case in && l == "```":
			in = false
			bodies, lines = append(bodies, body.String()), append(lines, start)
		case in:
			body.WriteString(l + "\n")
		}
	}
	return bodies, lines
}

// shellQuote quotes s for sh, in single quotes.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestReadmeConsole runs every console block of README.md, each in a new
// directory holding the repository's testdata/debian-package-urls.txt,
// through bash with this test binary as urlhash: each "$ " line is a
// command (its stderr merged into its stdout; "echo $?" sees the status of
// the command before it), and what the commands print must be the block's
// other lines. In an expected line "…" matches any text (a hash, a time):
// the tour can never go stale again.
func TestReadmeConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	urls, err := os.ReadFile("../../testdata/debian-package-urls.txt")
	if err != nil {
		t.Fatal(err)
	}
	blocks, starts := fencedBlocks(readme(t), "console")
	if len(blocks) < 2 {
		t.Fatalf("%d console blocks in README.md, want the CLI tour and more", len(blocks))
	}
	for i, block := range blocks {
		t.Run(strings.TrimSpace(strings.SplitN(block, "\n", 2)[0]), func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "testdata"), 0o755)
			if err := os.WriteFile(filepath.Join(dir, "testdata", "debian-package-urls.txt"), urls, 0o644); err != nil {
				t.Fatal(err)
			}
			var script strings.Builder
			script.WriteString("st=0\n")
			for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
				switch {
				case strings.HasPrefix(line, "$ "):
					script.WriteString("printf '%s\\n' " + shellQuote(line) + "\n")
					script.WriteString("(exit $st); {\n" + line[2:] + "\n} 2>&1; st=$?\n")
				case line == "":
					script.WriteString("echo\n")
				}
			}
			cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script.String())
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
			out, _ := cmd.CombinedOutput()
			got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			want := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
			for j := range max(len(got), len(want)) {
				var g, w string
				if j < len(got) {
					g = got[j]
				}
				if j < len(want) {
					w = want[j]
				}
				if !lineMatches(g, w) {
					t.Errorf("README.md:%d: the console block's line %d differs:\n got: %q\nwant: %q\nwhole output:\n%s",
						starts[i]+j, j+1, g, w, out)
					break
				}
			}
		})
	}
}

// lineMatches reports whether a printed line is the expected one, where
// "…" in want matches any text.
func lineMatches(got, want string) bool {
	if !strings.Contains(want, "…") {
		return got == want
	}
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(got)
}

// TestReadmeLibraryTour checks that the README's Library tour is the body
// of query's Example_tour, which compiles and runs with go test.
func TestReadmeLibraryTour(t *testing.T) {
	src, err := os.ReadFile("../../query/tour_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	begin := strings.Index(s, "func Example_tour() {\n")
	end := strings.Index(s, "\t// Output:")
	if begin < 0 || end < begin {
		t.Fatal("query/tour_example_test.go: no Example_tour with an Output comment")
	}
	var body strings.Builder
	for _, l := range strings.SplitAfter(s[begin+len("func Example_tour() {\n"):end], "\n") {
		body.WriteString(strings.TrimPrefix(l, "\t"))
	}
	text := readme(t)
	i := strings.Index(text, "## Library tour")
	if i < 0 {
		t.Fatal("README.md has no Library tour")
	}
	blocks, _ := fencedBlocks(text[i:], "go")
	if len(blocks) == 0 || blocks[0] != body.String() {
		var got string
		if len(blocks) > 0 {
			got = blocks[0]
		}
		t.Fatalf("README.md's Library tour is not the body of query.Example_tour (query/tour_example_test.go).\nREADME:\n%s\nExample:\n%s", got, body.String())
	}
}

// TestReadmeInstall checks the README says how to install the urlhash
// command, and that the line works.
func TestReadmeInstall(t *testing.T) {
	const line = "go install ./cmd/urlhash"
	if !strings.Contains(readme(t), line) {
		t.Fatalf("README.md does not say %q", line)
	}
	if testing.Short() {
		t.Skip("builds the command")
	}
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "./cmd/urlhash")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "urlhash"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "urlhash ") {
		t.Fatalf("the installed urlhash version: %v %s", err, out)
	}
}
