package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSnapshotHost builds the host's archive as CI's snapshot does and
// checks it: the archive holds the binary and the docs, SHA256SUMS names
// it with its digest, and the binary's "version --json" carries the
// snapshot's version and the checkout's commit.
func TestSnapshotHost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds urlhash")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if runtime.GOOS == "windows" {
		t.Skip("unpacks a tar.gz")
	}
	t.Chdir("..")
	v, err := readVCS()
	if err != nil {
		t.Skip(err) // not a git checkout
	}
	out := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	var log bytes.Buffer
	if err := run([]string{"-snapshot", "-out", out, "-targets", target}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("%s", log.String())
	version := "v0.0.0-snapshot." + v.commit[:12]
	name := "urlhash_" + strings.TrimPrefix(version, "v") + "_" + runtime.GOOS + "_" + runtime.GOARCH
	archive, err := os.ReadFile(filepath.Join(out, name+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(archive)
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]) + "  " + name + ".tar.gz\n"; string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	bin := filepath.Join(t.TempDir(), "urlhash")
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		if hdr.Name == name+"/urlhash" {
			b, _ := io.ReadAll(tr)
			if err := os.WriteFile(bin, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{name + "/CHANGELOG.md", name + "/LICENSE", name + "/README.md", name + "/urlhash"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("archive holds %q, want %q", names, want)
	}
	got, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Version, Commit, Date, Platform string
		Dirty                           bool
	}
	if err := json.Unmarshal(got, &st); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	if st.Version != version || st.Commit != v.commit || st.Platform != target || st.Dirty != v.dirty || st.Date == "" {
		t.Errorf("version --json = %s, want version %s, commit %s, platform %s, dirty %t", got, version, v.commit, target, v.dirty)
	}
}

// TestRefuses checks the release's refusals: no version, a malformed one,
// a malformed target.
func TestRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"-version", "0.4"},
		{"-version", "v0.4.0", "-targets", "linux"},
		{"extra"},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

// TestRepositoryFiles checks what a release ships and how a clone
// stays clean: LICENSE is the Apache License 2.0 the Python package
// declares, CHANGELOG.md keeps an [Unreleased] section in Keep a
// Changelog's form, and what the README's first command creates
// (demo.idx) is ignored by git, so that a build from the clone is not
// stamped dirty.
func TestRepositoryFiles(t *testing.T) {
	t.Chdir("..")
	license, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(license, []byte("Apache License\n                           Version 2.0, January 2004")) ||
		!bytes.Contains(license, []byte("END OF TERMS AND CONDITIONS")) {
		t.Error("LICENSE is not the full Apache License 2.0")
	}
	py, err := os.ReadFile("python/pyproject.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(py, []byte(`license = { text = "Apache-2.0" }`)) {
		t.Error("python/pyproject.toml no longer declares Apache-2.0: LICENSE and it must agree")
	}
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Changelog\n", "keepachangelog.com", "\n## [Unreleased]\n", "\n## [0.1.0] - "} {
		if !bytes.Contains(changelog, []byte(want)) {
			t.Errorf("CHANGELOG.md lacks %q", want)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("import --db demo.idx ")) {
		t.Fatal("the README's first command no longer writes demo.idx: update this test")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, path := range []string{"demo.idx/", "demo.idx/MANIFEST", "dist/"} {
		if err := exec.Command("git", "check-ignore", "-q", path).Run(); err != nil {
			t.Errorf("git check-ignore %s: %v (a clone that ran the README would build +dirty)", path, err)
		}
	}
}
