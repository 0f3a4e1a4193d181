package main

import (
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/urlhash/urlhash/index"
)

// printVersion writes what identifies this build: the module version (or
// the VCS revision of a development build), the Go toolchain, and the
// formats its identities and indexes are written in.
func printVersion(w io.Writer) {
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
	fmt.Fprintf(w, "urlhash %s%s (%s; index format %d)\n", version, revision, goVersion, index.FormatVersion)
}

func completionCommand() *command {
	return &command{
		name:    "completion",
		summary: "print a shell completion script (bash, zsh or fish)",
		usage: `Usage: urlhash completion bash|zsh|fish

Prints a script that completes urlhash's commands and their flags; load
it from your shell's start-up file.

Example:
  $ source <(urlhash completion bash)                    # bash
  $ urlhash completion zsh > "${fpath[1]}/_urlhash"      # zsh
  $ urlhash completion fish > ~/.config/fish/completions/urlhash.fish
`,
		run: runCompletion,
	}
}

// flagName finds the flags a usage text documents: "  -0, --null",
// "      --db DIR".
var flagName = regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z0-9], )?(--[a-z0-9-]+)`)

// commandFlags returns each command's flags, as its hand-written usage
// documents them.
func commandFlags(cmds map[string]*command) (names []string, flags map[string][]string) {
	flags = make(map[string][]string, len(cmds))
	for n, c := range cmds {
		names = append(names, n)
		for _, m := range flagName.FindAllStringSubmatch(c.usage, -1) {
			flags[n] = append(flags[n], m[1])
		}
		flags[n] = append(flags[n], "--help")
	}
	sort.Strings(names)
	return names, flags
}

func runCompletion(e *env, args []string) error {
	fs := newFlags("completion")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one shell: bash, zsh or fish")
	}
	names, flags := commandFlags(commands())
	var b strings.Builder
	switch fs.Arg(0) {
	case "bash":
		b.WriteString("# bash completion for urlhash\n_urlhash() {\n  local cur=${COMP_WORDS[COMP_CWORD]}\n")
		b.WriteString("  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W \"" + strings.Join(names, " ") + " --version --help\" -- \"$cur\"))\n    return\n  fi\n")
		b.WriteString("  case ${COMP_WORDS[1]} in\n")
		for _, n := range names {
			fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n", n, strings.Join(flags[n], " "))
		}
		b.WriteString("  esac\n  [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))\n}\ncomplete -F _urlhash urlhash\n")
	case "zsh":
		b.WriteString("#compdef urlhash\n_urlhash() {\n  if (( CURRENT == 2 )); then\n    compadd -- " + strings.Join(names, " ") + " --version --help\n    return\n  fi\n")
		b.WriteString("  case $words[2] in\n")
		for _, n := range names {
			fmt.Fprintf(&b, "    %s) compadd -- %s; _files ;;\n", n, strings.Join(flags[n], " "))
		}
		b.WriteString("  esac\n}\ncompdef _urlhash urlhash\n")
	case "fish":
		b.WriteString("# fish completion for urlhash\n")
		for _, n := range names {
			fmt.Fprintf(&b, "complete -c urlhash -n __fish_use_subcommand -a %s -d %q\n", n, commands()[n].summary)
			for _, f := range flags[n] {
				fmt.Fprintf(&b, "complete -c urlhash -n '__fish_seen_subcommand_from %s' -l %s\n", n, strings.TrimPrefix(f, "--"))
			}
		}
	default:
		return usagef("unknown shell %q (want bash, zsh or fish)", fs.Arg(0))
	}
	_, err := io.WriteString(e.stdout, b.String())
	return err
}
