package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
)

func manCommand() *command {
	return &command{
		name:      "man",
		usageLine: "man [COMMAND]\nman --dir DIR",
		short:     "print the manual pages (roff), or write them all to a directory",
		long: `Prints the manual page urlhash(1) or, given a command, urlhash-COMMAND(1),
in roff for man(1); with --dir it writes every page into DIR instead,
creating DIR (and its parents) if needed. man finds the pages when DIR's
parent is on MANPATH (a trailing ':' keeps the system's pages). The pages
are made from the same definitions as the help and the completion.
`,
		example: `$ urlhash man has | man -l -
$ urlhash man --dir ~/.local/share/man/man1 && export MANPATH="$HOME/.local/share/man:$MANPATH"
$ man urlhash-has
`,
		argValues: commandNameList,
		setFlags: func(fs *flagSet) runFunc {
			o := new(manOptions)
			fs.StringVar(&o.dir, "dir", "", "write urlhash.1 and every urlhash-COMMAND.1 into `DIR` (created if needed)")
			return o.run
		},
	}
}

type manOptions struct{ dir string }

func (o *manOptions) run(e *env, args []string) error {
	if o.dir != "" {
		if len(args) > 0 {
			return usagef("--dir writes every page: give no command")
		}
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return err
		}
		pages := map[string]string{"urlhash.1": overviewPage()}
		for _, c := range commands() {
			pages["urlhash-"+c.name+".1"] = c.manPage()
		}
		for name, page := range pages {
			if err := os.WriteFile(filepath.Join(o.dir, name), []byte(page), 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintf(e.stderr, "urlhash: man: %d pages written to %s\n", len(pages), o.dir)
		return nil
	}
	switch len(args) {
	case 0:
		_, err := io.WriteString(e.stdout, overviewPage())
		return err
	case 1:
		c := findCommand(args[0])
		if c == nil {
			return usagef("unknown command %q", args[0])
		}
		_, err := io.WriteString(e.stdout, c.manPage())
		return err
	}
	return usagef("want at most one command")
}

// overviewPage is urlhash(1): every command and the shared conventions.
func overviewPage() string {
	var b strings.Builder
	b.WriteString(".TH URLHASH 1\n.SH NAME\nurlhash \\- stable SHA-256 identities for URLs, and an embedded index of them\n")
	b.WriteString(".SH SYNOPSIS\n.B urlhash\n.I COMMAND\n[flags] [ARG...]\n.SH COMMANDS\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, ".TP\n.BR urlhash\\-%s (1)\n%s\n", roffEscape(c.name), roffEscape(c.short))
	}
	b.WriteString(".SH INPUTS\n" + roffText(inputRules))
	b.WriteString(".SH EXIT STATUS\n0 success or found, 1 not found, 2 error.\n")
	return b.String()
}

// manPage is the command's page: its synopsis, description, flags and
// example.
func (c *command) manPage() string {
	var b strings.Builder
	upper := strings.ToUpper(c.name)
	fmt.Fprintf(&b, ".TH URLHASH-%s 1\n.SH NAME\nurlhash\\-%s \\- %s\n.SH SYNOPSIS\n", roffEscape(upper), roffEscape(c.name), roffEscape(c.short))
	for _, line := range strings.Split(c.usageLine, "\n") {
		b.WriteString(".B urlhash\n" + roffEscape(line) + "\n.br\n")
	}
	b.WriteString(".SH DESCRIPTION\n" + roffText(c.long))
	fs, _ := c.flags()
	if fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS\n")
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			spec, text := flagHelp(f)
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffEscape(strings.TrimSpace(spec)), roffEscape(text))
		})
	}
	if c.example != "" {
		b.WriteString(".SH EXAMPLE\n.nf\n" + roffEscapeLines(c.example) + ".fi\n")
	}
	b.WriteString(".SH SEE ALSO\n.BR urlhash (1)\n")
	return b.String()
}

// roffText turns paragraphs of plain text into roff: a blank line starts
// a paragraph; indented lines are kept as they are.
func roffText(s string) string {
	var b strings.Builder
	for _, para := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if strings.HasPrefix(para, " ") || strings.Contains(para, "\n ") {
			b.WriteString(".PP\n.nf\n" + roffEscapeLines(para+"\n") + ".fi\n")
			continue
		}
		b.WriteString(".PP\n" + roffEscapeLines(para+"\n"))
	}
	return b.String()
}

// roffEscape escapes s for a roff text line: backslashes and hyphens.
func roffEscape(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffEscapeLines escapes every line of s, and guards a line that starts
// with a roff control character.
func roffEscapeLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		l = roffEscape(l)
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			l = `\&` + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "")
}
