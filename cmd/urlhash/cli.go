package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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

// command is one subcommand, after Go's cmd/go base.Command: its
// documentation and its flags are declared once, in its own file, and the
// help ("urlhash help NAME", "urlhash NAME --help"), the shell completion
// and the man pages are all derived from them.
type command struct {
	name string
	// usageLine is the synopsis after "urlhash "; further synopses follow
	// on lines of their own.
	usageLine string
	short     string // one line for "urlhash help"
	long      string // what the command does, before the flags
	example   string // shell lines after the flags, each "$ " a command
	// flagsOnly marks a command that takes no arguments: a stray one is a
	// mistake (a misspelt flag, a URL given to stats), not ignored.
	flagsOnly bool
	// drains marks a command that, once interrupted, finishes what is in
	// flight however long it takes (serve), rather than within
	// interruptGrace.
	drains bool
	// argValues, when set, returns what the arguments may be, for
	// completion (command names, shells).
	argValues func() []string
	// setFlags declares the command's flags into fs, bound into a new
	// options value, and returns the function that runs the command with
	// them on the arguments left after the flags.
	setFlags func(fs *flagSet) runFunc
}

// runFunc runs a command on its arguments, its flags already parsed.
type runFunc func(e *env, args []string) error

// flagSet is a command's pflag set with the checks its flag groups
// register, run after parsing.
type flagSet struct {
	*pflag.FlagSet
	checks []func() error
}

// enumAnnotation is the pflag annotation that lists a flag's values, for
// completion and the man pages.
const enumAnnotation = "urlhash_values"

// enum records the values a flag takes, for completion.
func (fs *flagSet) enum(name string, values ...string) {
	if err := fs.SetAnnotation(name, enumAnnotation, values); err != nil {
		panic(err) // a flag declared under another name: a bug
	}
}

// check registers a validation of the flags to run after parsing.
func (fs *flagSet) check(fn func() error) { fs.checks = append(fs.checks, fn) }

// flags returns the command's flag set and its run function, bound
// together.
func (c *command) flags() (*flagSet, runFunc) {
	fs := &flagSet{FlagSet: pflag.NewFlagSet(c.name, pflag.ContinueOnError)}
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	run := c.setFlags(fs)
	return fs, run
}

// commands returns every command, in the order "urlhash help" lists them.
func commands() []*command {
	return []*command{
		hashCommand(), canonCommand(), expressionsCommand(), hashedURICommand(), matchCommand(),
		addCommand(), putCommand(), importCommand(), hasCommand(), getCommand(), deleteCommand(), dedupeCommand(),
		scanCommand(), lookupCommand(), statsCommand(), exportCommand(), verifyCommand(),
		backupCommand(), restoreCommand(), recoverCommand(), serveCommand(), frontierCommand(), syncCommand(),
		helpCommand(), manCommand(), completionCommand(), versionCommand(),
	}
}

// findCommand returns the command named name, or nil.
func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// topLevelAliases are the words in a command's place that name another
// command.
var topLevelAliases = map[string]string{"-h": "help", "--help": "help", "--version": "version"}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		writeOverview(stderr)
		return exitError
	}
	name, rest := args[0], args[1:]
	if alias, ok := topLevelAliases[name]; ok {
		name = alias
	}
	c := findCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "urlhash: error: unknown command %q\n", name)
		fmt.Fprintln(stderr, "urlhash: hint: run \"urlhash help\" for the list of commands")
		return exitError
	}
	err := remoteHint(c.run(e, rest))
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, pflag.ErrHelp):
		io.WriteString(stdout, c.usage())
		return exitOK
	case errors.Is(err, errNotFound):
		return exitNotFound
	case errors.Is(err, errReported):
		return exitError
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "urlhash: error: interrupted")
		return exitError
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "urlhash: error: %s: %v\n", c.name, ue.err)
		fmt.Fprintf(stderr, "urlhash: hint: run \"urlhash help %s\" for usage\n", c.name)
		return exitError
	}
	fmt.Fprintf(stderr, "urlhash: error: %v\n", err)
	return exitError
}

// run parses the command's flags, runs their checks and then the command.
func (c *command) run(e *env, args []string) error {
	fs, run := c.flags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if c.flagsOnly && fs.NArg() > 0 {
		return usagef("unexpected argument %q (this command takes flags only)", fs.Arg(0))
	}
	for _, check := range fs.checks {
		if err := check(); err != nil {
			return err
		}
	}
	return run(e, fs.Args())
}

// usageError is a mistake in the command line rather than in the input.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// usage is the command's help: the synopsis, the description, the flags
// as declared, and the example.
func (c *command) usage() string {
	var b strings.Builder
	for i, line := range strings.Split(c.usageLine, "\n") {
		if i == 0 {
			b.WriteString("Usage: urlhash " + line + "\n")
		} else {
			b.WriteString("       urlhash " + line + "\n")
		}
	}
	b.WriteString("\n" + c.long)
	fs, _ := c.flags()
	if fs.HasAvailableFlags() {
		b.WriteString("\nFlags:\n")
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			spec, text := flagHelp(f)
			wrapped := indent(wrap(text, 76-25), 25)
			if len(spec) > 22 {
				b.WriteString("  " + spec + "\n" + wrapped)
			} else {
				b.WriteString("  " + spec + wrapped[2+len(spec):])
			}
		})
	}
	if c.example != "" {
		b.WriteString("\nExample:\n" + indent(c.example, 2))
	}
	return b.String()
}

// flagHelp returns a flag's synopsis ("-0, --null", "--db DIR") and its
// description with its values and default, as declared.
func flagHelp(f *pflag.Flag) (spec, text string) {
	name, text := pflag.UnquoteUsage(f)
	spec = "    --" + f.Name
	if f.Shorthand != "" {
		spec = "-" + f.Shorthand + ", --" + f.Name
	}
	if name != "" {
		spec += " " + name
	}
	if !strings.Contains(text, "default") && !isZeroDefault(f) {
		text += " (default " + f.DefValue + ")"
	}
	return spec, text
}

// isZeroDefault reports whether f's default is its type's zero value,
// which goes without saying.
func isZeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]":
		return true
	}
	return false
}

// wrap breaks text into lines of at most width bytes, at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		}
		if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String() + "\n"
}

// indent prefixes every non-empty line of text with n spaces.
func indent(text string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}

// writeOverview writes "urlhash help": every command and the conventions
// they share.
func writeOverview(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`urlhash: stable SHA-256 identities for URLs, and an embedded index of them.

Usage:
  urlhash COMMAND [flags] [ARG...]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-12s %s\n", c.name, c.short)
	}
	b.WriteString("\n" + inputRules + `Exit status: 0 success or found, 1 not found, 2 error. Run "urlhash help
COMMAND" (or "urlhash COMMAND --help") for a command's flags, "urlhash
--version" for the build, "urlhash man" for the manual pages.
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// inputRules says where every command that reads URLs or hashes takes
// them from: the overview and the man pages print it.
const inputRules = `Inputs come from the arguments ("-" is standard input), then from each
--from FILE, or, when there are none, from standard input: one per line (or
NUL-separated with -0, where an empty record is skipped as a blank line is,
unlike xargs -0), or records of --input-format (hashes, ntriples, nquads,
turtle, trig, rdfxml, sitemap; *.nt, *.nq, *.ttl, *.trig, *.rdf and *.owl
files are read as RDF unless it is given); gzip is detected by content, and
an input that looks binary is refused, standard input as any file; blank
lines and lines whose first non-blank character is '#' are skipped.
`

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
