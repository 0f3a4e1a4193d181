package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urlhash/urlhash/index"
)

// A release build stamps these with the linker (go run ./release does):
//
//	go build -ldflags "-X main.version=v0.4.0 -X main.commit=SHA -X main.date=RFC3339 -X main.dirty=false"
//
// Left empty, buildStamp reads what the go command stamped from the VCS
// (a go build or go install in a git clone; go run and a git worktree
// stamp nothing). They are set at link time only, never written.
var (
	version string
	commit  string
	date    string
	dirty   string // "true" when the tree had changes
)

// stamp identifies a build: the contract of "urlhash version --json".
type stamp struct {
	Version     string `json:"version"`  // a tag (v0.4.0), Go's pseudo-version, or "(devel)"
	Commit      string `json:"commit"`   // the full VCS revision; "" when unknown
	Date        string `json:"date"`     // the commit's time, RFC 3339; "" when unknown
	Go          string `json:"go"`       // the toolchain, go1.26.8
	Platform    string `json:"platform"` // GOOS/GOARCH
	Dirty       bool   `json:"dirty"`    // built from a tree with uncommitted changes
	IndexFormat int    `json:"index_format"`
}

// buildStamp returns this build's stamp: the linker's values where set,
// else the go command's VCS settings.
func buildStamp() stamp {
	s := stamp{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		IndexFormat: index.FormatVersion}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			s.Version = v
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				s.Commit = kv.Value
			case "vcs.time":
				s.Date = kv.Value
			case "vcs.modified":
				s.Dirty = kv.Value == "true"
			}
		}
	}
	if version != "" {
		s.Version = version
	}
	if commit != "" {
		s.Commit = commit
	}
	if date != "" {
		s.Date = date
	}
	if dirty != "" {
		s.Dirty = dirty == "true"
	}
	return s
}

// String is the one-line form: "urlhash VERSION [COMMIT[+dirty] DATE]
// (GO PLATFORM; index format N)".
func (s stamp) String() string {
	line := "urlhash " + s.Version
	if s.Commit != "" {
		line += " " + s.Commit[:min(12, len(s.Commit))]
		if s.Dirty {
			line += "+dirty"
		}
	}
	if s.Date != "" {
		line += " " + s.Date
	}
	return fmt.Sprintf("%s (%s %s; index format %d)", line, s.Go, s.Platform, s.IndexFormat)
}

func versionCommand() *command {
	return &command{
		name:      "version",
		usageLine: "version [--json]",
		short:     "print the build: version, commit, Go toolchain, platform, index format",
		long: `Prints what identifies this build: its version (a release's tag, the
pseudo-version the go command stamps from git, or "(devel)"), the commit
and its date (marked +dirty when built from a tree with uncommitted
changes), the Go toolchain, the platform and the format its indexes are
written in. "urlhash --version" is the same.

A go build or go install in a git clone stamps the commit; go run and a
build in a git worktree stamp none. Release builds (go run ./release) set
every field with -ldflags "-X main.version=... -X main.commit=... -X
main.date=... -X main.dirty=...".
`,
		example: `$ urlhash version
urlhash v0.4.0 0123456789ab 2026-11-27T10:00:00Z (go1.26.8 linux/amd64; index format 2)
$ urlhash version --json
{"version":"v0.4.0","commit":"0123456789abcdef0123456789abcdef01234567","date":"2026-11-27T10:00:00Z","go":"go1.26.8","platform":"linux/amd64","dirty":false,"index_format":2}
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			asJSON := fs.Bool("json", false, "one object: version, commit, date, go, platform, dirty, index_format")
			return func(e *env, _ []string) error {
				s := buildStamp()
				if *asJSON {
					return newJSONWriter(e.stdout).Encode(s)
				}
				_, err := io.WriteString(e.stdout, s.String()+"\n")
				return err
			}
		},
	}
}
