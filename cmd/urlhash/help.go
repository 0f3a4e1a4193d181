package main

import "io"

func helpCommand() *command {
	return &command{
		name:      "help",
		usageLine: "help [COMMAND]",
		short:     "print the commands, or one command's usage",
		long: `Prints the list of commands and the conventions they share or, given a
command, its usage: synopsis, description, flags and example (what
"urlhash COMMAND --help" prints).
`,
		example: `$ urlhash help has
`,
		argValues: commandNameList,
		setFlags: func(fs *flagSet) runFunc {
			return func(e *env, args []string) error {
				switch len(args) {
				case 0:
					return writeOverview(e.stdout)
				case 1:
					c := findCommand(args[0])
					if c == nil {
						return usagef("unknown command %q", args[0])
					}
					_, err := io.WriteString(e.stdout, c.usage())
					return err
				}
				return usagef("want at most one command")
			}
		},
	}
}

// commandNameList returns the names of the commands, for completion.
func commandNameList() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}
