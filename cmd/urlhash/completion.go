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
	// files marks a value that names a file or directory (FILE, DIR,
	// NEW): only those complete file names; a number, a duration, an
	// address or an IRI completes nothing.
	files bool
	usage string
}

// fileValues are the value names of the flags whose value is a path.
var fileValues = map[string]bool{"FILE": true, "DIR": true, "NEW": true}

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
			valueName, usage := pflag.UnquoteUsage(f)
			spec.flags = append(spec.flags, completionFlag{
				name: f.Name, shorthand: f.Shorthand, takesValue: f.NoOptDefVal == "",
				values: f.Annotations[enumAnnotation], files: fileValues[valueName], usage: usage,
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
	"bash": bashScript.write,
	"zsh":  zshScript.write,
	"fish": writeFish,
}

// caseScript is the syntax of a completion script that is a case on the
// command word and, in each command's branch, a case on the word before
// the cursor (bash, zsh).
type caseScript struct {
	head    string // up to the case on the command; %s: the command names
	command string // a command's branch, up to its case on the previous word; %s: the command
	enum    string // a flag that takes one of a few values; %s: the flag, then the values
	file    string // a flag that takes a path; %s: the flag
	none    string // a flag that takes another value (nothing to offer); %s: the flag
	words   string // the end of a command's branch, offering its words; %s: the words
	foot    string
}

// The value of a flag is completed after "--flag " and after "--flag=":
// bash splits "--flag=VALUE" into three words by COMP_WORDBREAKS (or
// keeps one word when '=' is not in it, then pre is the part up to '=');
// zsh keeps one word, which compset -P splits.
var bashScript = caseScript{
	head: "# bash completion for urlhash\n_urlhash() {\n" +
		"  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} pre=\n" +
		"  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W \"%s --version --help\" -- \"$cur\"))\n    return\n  fi\n" +
		"  if [ \"$cur\" = = ]; then cur=\n  elif [ \"$prev\" = = ]; then prev=${COMP_WORDS[COMP_CWORD-2]}\n" +
		"  elif [[ $cur == --*=* ]]; then prev=${cur%%%%=*} pre=${cur%%%%=*}= cur=${cur#*=}\n  fi\n" +
		"  case ${COMP_WORDS[1]} in\n",
	command: "    %s)\n      case $prev in\n",
	enum:    "        --%s) COMPREPLY=($(compgen -P \"$pre\" -W \"%s\" -- \"$cur\")); return ;;\n",
	file:    "        --%s) COMPREPLY=($(compgen -P \"$pre\" -f -- \"$cur\")); return ;;\n",
	none:    "        --%s) COMPREPLY=(); return ;;\n",
	words:   "      esac\n      COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n",
	foot:    "  esac\n  [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))\n}\ncomplete -F _urlhash urlhash\n",
}

var zshScript = caseScript{
	head: "#compdef urlhash\n_urlhash() {\n  if (( CURRENT == 2 )); then\n    compadd -- %s --version --help\n    return\n  fi\n" +
		"  local prev=$words[CURRENT-1]\n" +
		"  if [[ $words[CURRENT] == --*=* ]]; then prev=${words[CURRENT]%%%%=*}; compset -P '*='; fi\n" +
		"  case $words[2] in\n",
	command: "    %s)\n      case $prev in\n",
	enum:    "        --%s) compadd -- %s; return ;;\n",
	file:    "        --%s) _files; return ;;\n",
	none:    "        --%s) return ;;\n",
	words:   "      esac\n      compadd -- %s; _files ;;\n",
	foot:    "  esac\n}\ncompdef _urlhash urlhash\n",
}

func (sh *caseScript) write(b *strings.Builder, specs []completionSpec) {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	fmt.Fprintf(b, sh.head, strings.Join(names, " "))
	for _, s := range specs {
		fmt.Fprintf(b, sh.command, s.name)
		for _, f := range s.flags {
			switch {
			case len(f.values) > 0:
				fmt.Fprintf(b, sh.enum, f.name, strings.Join(f.values, " "))
			case f.files:
				fmt.Fprintf(b, sh.file, f.name)
			case f.takesValue:
				fmt.Fprintf(b, sh.none, f.name)
			}
		}
		fmt.Fprintf(b, sh.words, s.words())
	}
	b.WriteString(sh.foot)
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
			// fish completes "--flag=VALUE" as "--flag VALUE" itself.
			switch {
			case len(f.values) > 0:
				fmt.Fprintf(b, " -x -a %s", fishQuote(strings.Join(f.values, " ")))
			case f.files:
				b.WriteString(" -r -F")
			case f.takesValue:
				b.WriteString(" -x")
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
