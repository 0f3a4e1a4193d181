package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/pflag"
)

// TestMain lets the testscript files run "urlhash" in-process, and the
// crash tests run it as a child process (URLHASH_TEST_MAIN=1).
func TestMain(m *testing.M) {
	if os.Getenv("URLHASH_TEST_MAIN") == "1" {
		runAsMain()
	}
	if dir := os.Getenv(valueLogWriterEnv); dir != "" {
		runValueLogWriter(dir)
	}
	// Child processes keep dedupe's journals out of the user's cache
	// directory (testscript.Main exits: one fixed directory, which the
	// journals' locks let runs share, rather than one left per run).
	os.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "urlhash-test-cache"))
	testscript.Main(m, map[string]func(){
		"urlhash": runAsMain,
	})
}

// runAsMain runs the command in os.Args[1:] as main does and exits with
// its status: SIGINT and SIGTERM cancel the context (a script's "kill
// -INT" stops a background serve as Ctrl-C would).
func runAsMain() {
	ctx, stop := signalContext(os.Args[1:])
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// childCommand returns "urlhash args..." to run as a child process: the
// test binary, run as main (see TestMain).
func childCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "URLHASH_TEST_MAIN=1")
	return cmd
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
			// genurls FILE N writes N distinct URLs, one a line.
			"genurls": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: genurls FILE N")
				}
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				var b strings.Builder
				for i := range n {
					fmt.Fprintf(&b, "https://site%d.example/page/%d\n", i%97, i)
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
			},
			// corrupt DIR flips 64 bytes in the middle of the largest table
			// file of the index in DIR.
			"corrupt": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: corrupt DIR")
				}
				tables, err := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "*.sst"))
				ts.Check(err)
				var largest string
				var size int64
				for _, name := range tables {
					if fi, err := os.Stat(name); err == nil && fi.Size() > size {
						largest, size = name, fi.Size()
					}
				}
				if size < 4096 {
					ts.Fatalf("no table of 4 KiB or more in %s", args[0])
				}
				b, err := os.ReadFile(largest)
				ts.Check(err)
				for i := size / 2; i < size/2+64; i++ {
					b[i] ^= 0xff
				}
				ts.Check(os.WriteFile(largest, b, 0o644))
			},
			// waitfile FILE waits (up to 30s) until FILE exists: a
			// background serve is ready.
			"waitfile": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: waitfile FILE")
				}
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
						return
					}
				}
				ts.Fatalf("%s did not appear within 30s", args[0])
			},
			// httpget ADDRFILE PATH gets PATH from the server whose address
			// ("http://HOST:PORT", as urlhash serve records it) is in
			// ADDRFILE, and prints the status code and the body.
			"httpget": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: httpget ADDRFILE PATH")
				}
				resp, err := http.Get(strings.TrimSpace(ts.ReadFile(args[0])) + args[1])
				ts.Check(err)
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				ts.Check(err)
				fmt.Fprintf(ts.Stdout(), "%d %s\n", resp.StatusCode, body)
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

// TestEveryCommandHasHelp reads every subcommand's --help and "urlhash help
// NAME": the same text, with a synopsis, every flag and an example.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			usage := c.usage()
			for _, args := range [][]string{{c.name, "--help"}, {"help", c.name}} {
				var out, errs bytes.Buffer
				code := run(context.Background(), args, nil, &out, &errs)
				if code != exitOK || out.String() != usage || errs.String() != "" {
					t.Fatalf("%s: code %d, stdout %q, stderr %q", args, code, out.String(), errs.String())
				}
			}
			if len(usage) < 100 || !strings.Contains(usage, "Usage: urlhash "+c.name) || !strings.Contains(usage, "Example") {
				t.Errorf("%s usage lacks a synopsis or an example", c.name)
			}
			fs, _ := c.flags()
			fs.VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(usage, "--"+f.Name+" ") && !strings.Contains(usage, "--"+f.Name+"\n") {
					t.Errorf("%s usage does not show --%s", c.name, f.Name)
				}
			})
		})
	}
}
