package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// Exit statuses: the CLI contract.
const (
	exitOK       = 0 // success; for membership commands: found
	exitNotFound = 1 // a membership command found something absent
	exitError    = 2 // bad usage, bad input or a failure
)

// errNotFound makes a membership command exit 1 without a message.
var errNotFound = errors.New("not found")

// errReported makes a command exit 2 after it already reported its errors
// (one per failed input) on stderr.
var errReported = errors.New("errors reported")

// env is what a command may touch of the outside world.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// warnf prints a diagnostic that does not end the command.
func (e *env) warnf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "urlhash: error: "+format+"\n", args...)
}

// command is one subcommand with its own flag set and hand-written usage.
type command struct {
	name    string
	summary string // one line for "urlhash help"
	usage   string // the full text for "urlhash NAME --help"
	run     func(e *env, args []string) error
}

func commands() map[string]*command {
	cs := []*command{
		hashCommand(), canonCommand(), expressionsCommand(), hashedURICommand(), matchCommand(),
		addCommand(), putCommand(), importCommand(), hasCommand(), getCommand(), deleteCommand(), dedupeCommand(),
		scanCommand(), lookupCommand(), statsCommand(), exportCommand(), verifyCommand(),
		backupCommand(), restoreCommand(), recoverCommand(), serveCommand(), syncCommand(), completionCommand(),
	}
	m := make(map[string]*command, len(cs))
	for _, c := range cs {
		m[c.name] = c
	}
	return m
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	cmds := commands()
	if len(args) == 0 {
		printUsage(stderr, cmds)
		return exitError
	}
	name, rest := args[0], args[1:]
	switch name {
	case "--version", "version":
		printVersion(stdout)
		return exitOK
	case "help", "-h", "--help":
		if len(rest) > 0 {
			if c, ok := cmds[rest[0]]; ok {
				fmt.Fprint(stdout, c.usage)
				return exitOK
			}
		}
		printUsage(stdout, cmds)
		return exitOK
	}
	c, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "urlhash: error: unknown command %q\n", name)
		fmt.Fprintln(stderr, "urlhash: hint: run \"urlhash help\" for the list of commands")
		return exitError
	}
	err := c.run(e, rest)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprint(stdout, c.usage)
		return exitOK
	case errors.Is(err, errNotFound):
		return exitNotFound
	case errors.Is(err, errReported):
		return exitError
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "urlhash: error: interrupted")
		return exitError
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "urlhash: error: %s: %v\n", name, ue.err)
		fmt.Fprintf(stderr, "urlhash: hint: run \"urlhash %s --help\" for usage\n", name)
		return exitError
	}
	fmt.Fprintf(stderr, "urlhash: error: %v\n", err)
	return exitError
}

// usageError is a mistake in the command line rather than in the input.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// newFlags returns a flag set for one subcommand whose errors come back to
// the caller instead of being printed by pflag.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// parseFlags parses args, turning pflag's complaints into usage errors.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}

// parseFlagsOnly parses the flags of a command that takes no arguments: a
// stray argument is a mistake (a misspelt flag, a URL given to stats), not
// something to ignore.
func parseFlagsOnly(fs *pflag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (this command takes flags only)", fs.Arg(0))
	}
	return nil
}

func printUsage(w io.Writer, cmds map[string]*command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(`urlhash: stable SHA-256 identities for URLs, and an embedded index of them.

Usage:
  urlhash COMMAND [flags] [ARG...]

Commands:
`)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-12s %s\n", n, cmds[n].summary)
	}
	b.WriteString(`
Inputs come from the arguments ("-" is standard input), then from each
--from FILE, or, when there are none, from standard input: one per line (or
NUL-separated with -0), or records of --input-format (hashes, ntriples,
nquads, turtle, trig, rdfxml, sitemap; *.nt, *.nq, *.ttl, *.trig, *.rdf and
*.owl files are read as RDF unless it is given); gzip is detected by
content; blank lines and lines whose first non-blank character is '#' are
skipped. Exit status: 0 success or found,
1 not found, 2 error. Run "urlhash COMMAND --help" for a command's flags,
"urlhash --version" for the build.
`)
	fmt.Fprint(w, b.String())
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
