package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeBlock returns the README's fenced block of lang that holds marker,
// failing unless exactly one does.
func readmeBlock(t *testing.T, lang, marker string) string {
	t.Helper()
	var found []string
	blocks, _ := fencedBlocks(readme(t), lang)
	for _, b := range blocks {
		if strings.Contains(b, marker) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("README.md has %d %s blocks with %q, want 1", len(found), lang, marker)
	}
	return found[0]
}

// readmeInstallLines returns the README's install lines of the command
// and of the Python package: its sh blocks that hold "go install
// ./cmd/urlhash" and "pip install", checked for the lines issue 37 wants
// run (completion, man pages, man, a venv: no pip against the system's
// Python, which PEP 668 refuses on Debian).
func readmeInstallLines(t *testing.T) (install, python string) {
	t.Helper()
	install = readmeBlock(t, "sh", "go install ./cmd/urlhash")
	python = readmeBlock(t, "sh", "pip install")
	for _, want := range []string{"go install ./cmd/urlhash", "urlhash completion bash", "urlhash man --dir", "MANPATH=", "man urlhash-import"} {
		if !strings.Contains(install, want) {
			t.Errorf("the README's install block has no %q:\n%s", want, install)
		}
	}
	if !strings.Contains(python, "python3 -m venv") {
		t.Errorf("the README's Python install block makes no venv:\n%s", python)
	}
	for _, l := range strings.Split(python, "\n") {
		cmd := strings.TrimSpace(l)
		if strings.Contains(cmd, "pip install") && !strings.Contains(strings.Fields(cmd)[0], "/bin/pip") {
			t.Errorf("the README runs pip outside a venv (PEP 668): %q", cmd)
		}
	}
	return install, python
}

// TestReadmeFreshUser runs the README's install lines (the command, its
// completion and manual pages, man, the Python package in a venv), exactly
// as the README has them, as a new user with a fresh home in a fresh clone,
// and checks what they did: urlhash runs from the PATH the README sets,
// completion is loaded, "man urlhash-import" renders, the venv imports
// urlhash. The README's blocks are checked in every run; running them needs
// root (useradd) and URLHASH_TEST_FRESH_USER=1, as .ci/run sets on its
// Debian. The user's Go fetches modules from a copy of this machine's
// module download cache (GOPROXY=file://...), the network's stand-in.
func TestReadmeFreshUser(t *testing.T) {
	install, python := readmeInstallLines(t)
	if os.Getenv("URLHASH_TEST_FRESH_USER") != "1" {
		t.Skip("set URLHASH_TEST_FRESH_USER=1 (as root) to run the README's install lines as a new user")
	}
	if os.Geteuid() != 0 {
		t.Fatal("URLHASH_TEST_FRESH_USER=1 needs root (useradd)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}

	base, err := os.MkdirTemp("", "urlhash-readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("uhreadme%d", os.Getpid()%1000000)
	home := filepath.Join(base, "home")
	run("useradd", "--create-home", "--home-dir", home, "--shell", "/bin/bash", user)
	t.Cleanup(func() { exec.Command("userdel", "--remove", user).Run() })

	// The user's module proxy: this machine's download cache, linked.
	proxy := filepath.Join(base, "goproxy")
	cache := filepath.Join(run("go", "env", "GOMODCACHE"), "cache", "download")
	if err := exec.Command("cp", "-al", cache, proxy).Run(); err != nil {
		os.RemoveAll(proxy)
		run("cp", "-a", cache, proxy)
	}
	run("chmod", "-R", "a+rX", proxy)

	// A clone of this checkout, with its uncommitted changes to tracked
	// files.
	repo := run("git", "-C", "../..", "rev-parse", "--show-toplevel")
	clone := filepath.Join(home, "urlhash")
	run("git", "clone", "--quiet", repo, clone)
	if diff, err := exec.Command("git", "-C", repo, "diff", "--binary", "HEAD").Output(); err != nil {
		t.Fatal(err)
	} else if len(diff) > 0 {
		apply := exec.Command("git", "-C", clone, "apply", "--whitespace=nowarn")
		apply.Stdin = strings.NewReader(string(diff))
		if out, err := apply.CombinedOutput(); err != nil {
			t.Fatalf("git apply: %v\n%s", err, out)
		}
	}
	run("chown", "-R", user+":", clone)

	script := "set -euo pipefail\ncd ~/urlhash\n" + install + python + `echo "== checks"
echo "version: $(command -v urlhash): $(urlhash version)"
echo "completion: $(complete -p urlhash)"
`
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "runuser", "-u", user, "--", "env", "-i",
		"HOME="+home, "USER="+user, "LOGNAME="+user, "SHELL=/bin/bash", "LANG=C.UTF-8", "TERM=dumb",
		"PATH="+filepath.Dir(goBin)+":/usr/local/bin:/usr/bin:/bin",
		"GOPROXY=file://"+proxy, "GOSUMDB=off", "GOTOOLCHAIN=local",
		"bash", "-c", script)
	cmd.Dir = home
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("the README's install lines as %s, %v:\n%s", user, time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("the README's install lines failed as a new user: %v", err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^NAME\s*\n\s*urlhash-import\b`),                                     // man urlhash-import rendered
		regexp.MustCompile(`(?m)^urlhash: man: \d+ pages written to `),                              // urlhash man --dir wrote them
		regexp.MustCompile(`(?m)^urlhash [0-9]`),                                                    // the venv imports urlhash
		regexp.MustCompile(`(?m)^version: ` + regexp.QuoteMeta(home) + `/go/bin/urlhash: urlhash `), // from the PATH the README sets
		regexp.MustCompile(`(?m)^completion: complete -F \S+ urlhash$`),                             // completion is loaded
	} {
		if !want.Match(out) {
			t.Errorf("the output does not match %s", want)
		}
	}
}
