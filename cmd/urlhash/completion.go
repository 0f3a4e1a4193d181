package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

func completionCommand() *command {
	return &command{
		name:      "completion",
		usageLine: "completion bash|zsh|fish",
		short:     "print a shell completion script (bash, zsh or fish)",
		long: `Prints a script that completes urlhash's commands, each command's flags
and the values of the flags that take one of a few (formats, profiles,
threat types...); load it from your shell's start-up file. It is made from
the same flag definitions the commands parse.
`,
		example: `$ source <(urlhash completion bash)                    # bash
$ urlhash completion zsh > "${fpath[1]}/_urlhash"      # zsh
$ urlhash completion fish > ~/.config/fish/completions/urlhash.fish
`,
		argValues: func() []string { return []string{"bash", "zsh", "fish"} },
		setFlags: func(fs *flagSet) runFunc {
			return func(e *env, args []string) error {
				if len(args) != 1 {
					return usagef("want one shell: bash, zsh or fish")
				}
				write, ok := completionWriters[args[0]]
				if !ok {
					return usagef("unknown shell %q (want bash, zsh or fish)", args[0])
				}
				var b strings.Builder
				write(&b, completionSpecs())
				_, err := io.WriteString(e.stdout, b.String())
				return err
			}
		},
	}
}

// completionSpec is what completion offers for one command.
type completionSpec struct {
	name, short string
	flags       []completionFlag
	args        []string // what the arguments may be; nil for files
}

// completionFlag is one flag of a command as completion offers it.
type completionFlag struct {
	name, shorthand string
	takesValue      bool
	values          []string // the values of an enumeration; nil for any
	usage           string
}

// completionSpecs returns every command's flags, from the definitions the
// command parses; hidden flags (old names) are left out.
func completionSpecs() []completionSpec {
	var specs []completionSpec
	for _, c := range commands() {
		fs, _ := c.flags()
		spec := completionSpec{name: c.name, short: c.short}
		if c.argValues != nil {
			spec.args = c.argValues()
		}
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			_, usage := pflag.UnquoteUsage(f)
			spec.flags = append(spec.flags, completionFlag{
				name: f.Name, shorthand: f.Shorthand, takesValue: f.NoOptDefVal == "",
				values: f.Annotations[enumAnnotation], usage: usage,
			})
		})
		spec.flags = append(spec.flags, completionFlag{name: "help", usage: "print the command's usage"})
		specs = append(specs, spec)
	}
	return specs
}

// words returns the words completion offers for a command's flags.
func (s *completionSpec) words() string {
	var w []string
	for _, f := range s.flags {
		w = append(w, "--"+f.name)
		if f.shorthand != "" {
			w = append(w, "-"+f.shorthand)
		}
	}
	return strings.Join(append(w, s.args...), " ")
}

// completionWriters write the script of each shell.
var completionWriters = map[string]func(b *strings.Builder, specs []completionSpec){
	"bash": writeBash,
	"zsh":  writeZsh,
	"fish": writeFish,
}

func commandNames(specs []completionSpec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	return strings.Join(names, " ")
}

func writeBash(b *strings.Builder, specs []completionSpec) {
	b.WriteString("# bash completion for urlhash\n_urlhash() {\n")
	b.WriteString("  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n")
	b.WriteString("  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W \"" + commandNames(specs) + " --version --help\" -- \"$cur\"))\n    return\n  fi\n")
	b.WriteString("  case ${COMP_WORDS[1]} in\n")
	for _, s := range specs {
		fmt.Fprintf(b, "    %s)\n      case $prev in\n", s.name)
		for _, f := range s.flags {
			if len(f.values) > 0 {
				fmt.Fprintf(b, "        --%s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n", f.name, strings.Join(f.values, " "))
			} else if f.takesValue {
				fmt.Fprintf(b, "        --%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f.name)
			}
		}
		fmt.Fprintf(b, "      esac\n      COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n", s.words())
	}
	b.WriteString("  esac\n  [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))\n}\ncomplete -F _urlhash urlhash\n")
}

func writeZsh(b *strings.Builder, specs []completionSpec) {
	b.WriteString("#compdef urlhash\n_urlhash() {\n  if (( CURRENT == 2 )); then\n    compadd -- " + commandNames(specs) + " --version --help\n    return\n  fi\n")
	b.WriteString("  case $words[2] in\n")
	for _, s := range specs {
		fmt.Fprintf(b, "    %s)\n      case $words[CURRENT-1] in\n", s.name)
		for _, f := range s.flags {
			if len(f.values) > 0 {
				fmt.Fprintf(b, "        --%s) compadd -- %s; return ;;\n", f.name, strings.Join(f.values, " "))
			} else if f.takesValue {
				fmt.Fprintf(b, "        --%s) _files; return ;;\n", f.name)
			}
		}
		fmt.Fprintf(b, "      esac\n      compadd -- %s; _files ;;\n", s.words())
	}
	b.WriteString("  esac\n}\ncompdef _urlhash urlhash\n")
}

func writeFish(b *strings.Builder, specs []completionSpec) {
	b.WriteString("# fish completion for urlhash\ncomplete -c urlhash -f\n")
	for _, s := range specs {
		fmt.Fprintf(b, "complete -c urlhash -n __fish_use_subcommand -a %s -d %s\n", s.name, fishQuote(s.short))
		if len(s.args) > 0 {
			fmt.Fprintf(b, "complete -c urlhash -n '__fish_seen_subcommand_from %s' -a %s\n", s.name, fishQuote(strings.Join(s.args, " ")))
		}
		for _, f := range s.flags {
			fmt.Fprintf(b, "complete -c urlhash -n '__fish_seen_subcommand_from %s' -l %s", s.name, f.name)
			if f.shorthand != "" {
				fmt.Fprintf(b, " -s %s", f.shorthand)
			}
			switch {
			case len(f.values) > 0:
				fmt.Fprintf(b, " -x -a %s", fishQuote(strings.Join(f.values, " ")))
			case f.takesValue:
				b.WriteString(" -r -F")
			}
			fmt.Fprintf(b, " -d %s\n", fishQuote(firstSentence(f.usage)))
		}
	}
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// firstSentence is the start of a flag's description, up to its first
// ':', ';' or '(' , for a one-line hint.
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ":;("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
