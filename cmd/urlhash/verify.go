package main

import "fmt"

func verifyCommand() *command {
	return &command{
		name:      "verify",
		usageLine: "verify --db DIR",
		short:     "check an index's keys, values, filter and metadata",
		long: `Reads the whole index and checks that every key is well formed, every value
decodes, the filter covers every key and the counts and metadata agree.
Prints "ok" and exits 0, or reports the problems and exits 2.
`,
		example: `$ urlhash verify --db idx
ok: 30022 entries, 0 prefix entries
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			o := new(verifyOptions)
			o.db.addFlags(fs)
			return o.run
		},
	}
}

type verifyOptions struct{ db dbFlags }

func (o *verifyOptions) run(e *env, _ []string) error {
	st, err := o.db.openReader(e)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Verify(e.ctx); err != nil {
		return err
	}
	s, err := st.Stats(e.ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "ok: %d entries, %d prefix entries\n", s.Entries, s.PrefixEntries)
	return err
}
