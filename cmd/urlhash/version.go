package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/urlhash/urlhash/index"
)

// printVersion writes what identifies this build: the module version (or
// the VCS revision of a development build), the Go toolchain, and the
// formats its identities and indexes are written in.
func printVersion(w io.Writer) error {
	version, revision, goVersion := "(devel)", "", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				revision = " " + s.Value[:12]
			}
		}
	}
	_, err := fmt.Fprintf(w, "urlhash %s%s (%s; index format %d)\n", version, revision, goVersion, index.FormatVersion)
	return err
}

func versionCommand() *command {
	return &command{
		name:      "version",
		usageLine: "version",
		short:     "print the build: version, Go toolchain, index format",
		long: `Prints what identifies this build: the module version (or the VCS
revision of a development build), the Go toolchain, and the format its
indexes are written in. "urlhash --version" is the same.
`,
		example: `$ urlhash version
urlhash (devel) (go1.26.8; index format 2)
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			return func(e *env, _ []string) error { return printVersion(e.stdout) }
		},
	}
}
