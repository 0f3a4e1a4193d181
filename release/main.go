// Command release builds urlhash's release archives from the checkout it
// runs in, with one command:
//
//	go run ./release -version v0.4.0      # a release: a clean tree, archives in dist/
//	go run ./release -snapshot            # CI: every target built, nothing to publish
//
// For each target (linux, darwin and windows on amd64 and arm64 by
// default) it builds cmd/urlhash with CGO off, -trimpath, and the version,
// commit, commit date and dirty mark stamped through -ldflags -X (what
// "urlhash version --json" prints), then packs the binary with LICENSE,
// README.md and CHANGELOG.md into urlhash_VERSION_OS_ARCH.tar.gz (.zip for
// Windows), and writes SHA256SUMS for the archives. Archives are
// reproducible: their entries are sorted and dated at the commit's time.
//
// A release refuses a tree with uncommitted changes; -snapshot takes one
// (marking the build dirty) and names its version after the commit.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

// defaultTargets are the platforms a release is built for.
const defaultTargets = "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64"

// docs are the files every archive holds beside the binary.
var docs = []string{"LICENSE", "README.md", "CHANGELOG.md"}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release: error:", err)
		os.Exit(2)
	}
}

// options are release's flags.
type options struct {
	version  string
	snapshot bool
	out      string
	targets  []string
}

// vcs is what the checkout says of itself.
type vcs struct {
	commit string    // full revision
	date   time.Time // the commit's time
	dirty  bool      // uncommitted changes
}

// semver matches a release version: vMAJOR.MINOR.PATCH with an optional
// pre-release.
var semver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	var o options
	var targets string
	fs.StringVar(&o.version, "version", "", "the release `VERSION`, vX.Y.Z (required unless -snapshot)")
	fs.BoolVar(&o.snapshot, "snapshot", false, "build every target from any tree, version named after the commit: what CI runs")
	fs.StringVar(&o.out, "out", "dist", "the `DIR`ectory the archives and SHA256SUMS are written to (replaced)")
	fs.StringVar(&targets, "targets", defaultTargets, "comma-separated `OS/ARCH` list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, t := range strings.Split(targets, ",") {
		if goos, goarch, ok := strings.Cut(strings.TrimSpace(t), "/"); !ok || goos == "" || goarch == "" {
			return fmt.Errorf("-targets: %q is not OS/ARCH", t)
		}
		o.targets = append(o.targets, strings.TrimSpace(t))
	}
	v, err := readVCS()
	if err != nil {
		return err
	}
	switch {
	case o.snapshot && o.version == "":
		o.version = "v0.0.0-snapshot." + v.commit[:min(12, len(v.commit))]
	case o.version == "":
		return errors.New("-version vX.Y.Z is required (or -snapshot)")
	case !semver.MatchString(o.version):
		return fmt.Errorf("-version %q: want vMAJOR.MINOR.PATCH", o.version)
	case v.dirty && !o.snapshot:
		return errors.New("the tree has uncommitted changes: commit them, or build with -snapshot")
	}
	return build(&o, v, stdout)
}

// readVCS asks git about the checkout.
func readVCS() (vcs, error) {
	out, err := exec.Command("git", "log", "-1", "--format=%H %cI").Output()
	if err != nil {
		return vcs{}, fmt.Errorf("git log: %w (release builds from a git checkout)", err)
	}
	rev, when, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	t, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return vcs{}, fmt.Errorf("git log: commit time %q: %w", when, err)
	}
	status, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		return vcs{}, fmt.Errorf("git status: %w", err)
	}
	return vcs{commit: rev, date: t.UTC(), dirty: len(bytes.TrimSpace(status)) > 0}, nil
}

// build builds and packs every target into o.out, then writes SHA256SUMS.
func build(o *options, v vcs, stdout io.Writer) error {
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "urlhash-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.date=%s -X main.dirty=%t",
		o.version, v.commit, v.date.Format(time.RFC3339), v.dirty)
	fmt.Fprintf(stdout, "release %s, commit %s (%s)", o.version, v.commit, v.date.Format(time.RFC3339))
	if v.dirty {
		fmt.Fprint(stdout, ", dirty")
	}
	fmt.Fprintln(stdout)
	var sums strings.Builder
	for _, t := range o.targets {
		goos, goarch, _ := strings.Cut(t, "/")
		name := fmt.Sprintf("urlhash_%s_%s_%s", strings.TrimPrefix(o.version, "v"), goos, goarch)
		bin := "urlhash"
		if goos == "windows" {
			bin += ".exe"
		}
		binPath := filepath.Join(work, name, bin)
		start := time.Now()
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", binPath, "./cmd/urlhash")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build for %s: %w\n%s", t, err, out)
		}
		files := map[string]string{name + "/" + bin: binPath}
		for _, d := range docs {
			files[name+"/"+d] = d
		}
		archive := name + ".tar.gz"
		pack := writeTarGz
		if goos == "windows" {
			archive, pack = name+".zip", writeZip
		}
		var buf bytes.Buffer
		if err := pack(&buf, files, v.date); err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		if err := os.WriteFile(filepath.Join(o.out, archive), buf.Bytes(), 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), archive)
		fmt.Fprintf(stdout, "%-44s %6.1f MiB  sha256 %x  (%.0fs)\n", archive, float64(buf.Len())/(1<<20), sum[:8], time.Since(start).Seconds())
	}
	if err := os.WriteFile(filepath.Join(o.out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d archives and SHA256SUMS in %s (built with %s)\n", len(o.targets), o.out, runtime.Version())
	return nil
}

// sortedNames returns the archive names of files in order.
func sortedNames(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// mode is an archive entry's permissions: executables 0755.
func mode(name string) int64 {
	if b := filepath.Base(name); b == "urlhash" || b == "urlhash.exe" {
		return 0o755
	}
	return 0o644
}

// writeTarGz writes files (archive name -> path on disk) as a gzipped tar,
// every entry dated at mtime.
func writeTarGz(w io.Writer, files map[string]string, mtime time.Time) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for _, name := range sortedNames(files) {
		b, err := os.ReadFile(files[name])
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, Mode: mode(name), Size: int64(len(b)), ModTime: mtime, Format: tar.FormatPAX,
			Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeZip writes files as a zip, every entry dated at mtime.
func writeZip(w io.Writer, files map[string]string, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, name := range sortedNames(files) {
		b, err := os.ReadFile(files[name])
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(os.FileMode(mode(name)))
		f, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return zw.Close()
}
