package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the testscript files run "urlhash" in-process.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"urlhash": func() {
			os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the end-to-end CLI scenarios in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}

// TestEveryCommandHasHelp reads every subcommand's --help.
func TestEveryCommandHasHelp(t *testing.T) {
	for name, c := range commands() {
		t.Run(name, func(t *testing.T) {
			var out, errs testBuffer
			code := run(context.Background(), []string{name, "--help"}, nil, &out, &errs)
			if code != exitOK || out.String() != c.usage || errs.String() != "" {
				t.Fatalf("%s --help: code %d, stdout %q, stderr %q", name, code, out.String(), errs.String())
			}
			if len(c.usage) < 100 || !contains(c.usage, "Usage: urlhash "+name) || !contains(c.usage, "Example") {
				t.Errorf("%s usage lacks a synopsis or an example", name)
			}
		})
	}
}
