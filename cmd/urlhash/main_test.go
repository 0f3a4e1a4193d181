package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the testscript files run "urlhash" in-process, and the
// crash tests run it as a child process (URLHASH_TEST_MAIN=1).
func TestMain(m *testing.M) {
	if os.Getenv("URLHASH_TEST_MAIN") == "1" {
		// As main: SIGINT and SIGTERM cancel the context.
		ctx, stop := signalContext(os.Args[1:])
		code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	// Child processes keep dedupe's journals out of the user's cache
	// directory (testscript.Main exits: one fixed directory, which the
	// journals' locks let runs share, rather than one left per run).
	os.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "urlhash-test-cache"))
	testscript.Main(m, map[string]func(){
		"urlhash": func() {
			os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the end-to-end CLI scenarios in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// Scripts that need PostgreSQL start with [!postgres] skip; under CI
		// the server must be there.
		Condition: func(cond string) (bool, error) {
			if cond == "postgres" {
				return os.Getenv("URLHASH_TEST_POSTGRES") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			pg := os.Getenv("URLHASH_TEST_POSTGRES")
			if pg == "" && os.Getenv("CI") == "true" {
				return errors.New("URLHASH_TEST_POSTGRES is unset under CI: .ci/run starts PostgreSQL with .ci/postgres.sh")
			}
			env.Setenv("URLHASH_TEST_POSTGRES", pg)
			// dedupe's journals of shared indexes go under the cache dir.
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("PGSCHEMA", fmt.Sprintf("t%d_%d", time.Now().UnixNano(), os.Getpid()))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// randbytes FILE N writes N pseudo-random bytes (a fixed seed).
			"randbytes": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: randbytes FILE N")
				}
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				b := make([]byte, n)
				r := rand.New(rand.NewPCG(7, 7))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
			},
			// gzip FILE writes FILE.gz, so that scripts can test compressed input.
			"gzip": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: gzip FILE")
				}
				var b bytes.Buffer
				zw := gzip.NewWriter(&b)
				zw.Write([]byte(ts.ReadFile(args[0])))
				ts.Check(zw.Close())
				ts.Check(os.WriteFile(ts.MkAbs(args[0]+".gz"), b.Bytes(), 0o644))
			},
		},
	})
}

// TestEveryCommandHasHelp reads every subcommand's --help.
func TestEveryCommandHasHelp(t *testing.T) {
	for name, c := range commands() {
		t.Run(name, func(t *testing.T) {
			var out, errs bytes.Buffer
			code := run(context.Background(), []string{name, "--help"}, nil, &out, &errs)
			if code != exitOK || out.String() != c.usage || errs.String() != "" {
				t.Fatalf("%s --help: code %d, stdout %q, stderr %q", name, code, out.String(), errs.String())
			}
			if len(c.usage) < 100 || !strings.Contains(c.usage, "Usage: urlhash "+name) || !strings.Contains(c.usage, "Example") {
				t.Errorf("%s usage lacks a synopsis or an example", name)
			}
		})
	}
}
