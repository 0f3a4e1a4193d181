package main

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/urlhash/urlhash/index"
)

func recoverCommand() *command {
	return &command{
		name:      "recover",
		usageLine: "recover --db DIR --to NEW [--json]",
		short:     "copy every readable entry of a damaged index into a new one",
		long: `Reads the index in DIR, which may be damaged, and copies every entry it
can read into a new index in NEW (which must not exist or be empty),
keeping the recorded profile; DIR is never changed. It reads every table
file block by block, skipping blocks that fail their checksum, the
memtable logs a crash left and the value log. It prints, for each file,
what it read and what it could not, then the entries copied and an
estimate of what was lost. Exit status: 0 when nothing was lost, 1 when
something was, 2 on an error.

Use it when a command reports damage ("store: corrupt: ..."): check the
result with "urlhash verify --db NEW", then replace DIR with NEW.
`,
		example: `$ urlhash recover --db idx --to idx.recovered
000006.sst (table): 49 of 50 blocks read: 1 of 50 blocks unreadable
11831 entries, 0 prefix entries copied; about 71 records lost
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			o := new(recoverOptions)
			fs.StringVar(&o.dir, "db", "", "the damaged index directory `DIR`")
			fs.StringVar(&o.to, "to", "", "the directory `NEW` of the new index")
			fs.BoolVar(&o.json, "json", false, "print the report as one JSON object")
			fs.check(func() error {
				if o.dir == "" || o.to == "" {
					return usagef("--db DIR and --to NEW are required")
				}
				return nil
			})
			return o.run
		},
	}
}

type recoverOptions struct {
	dir, to string
	json    bool
}

func (o *recoverOptions) run(e *env, _ []string) error {
	rep, err := index.Recover(o.dir, o.to, nil)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(e.stdout)
	if o.json {
		b, _ := json.Marshal(rep)
		out.Write(append(b, '\n'))
	} else {
		for _, f := range rep.Files {
			fmt.Fprintf(out, "%s (%s): %d records", f.Name, f.Kind, f.Records)
			if f.Blocks > 0 {
				fmt.Fprintf(out, ", %d of %d blocks read", f.Blocks-f.BadBlocks, f.Blocks)
			}
			if f.Problem != "" {
				fmt.Fprintf(out, ": %s", f.Problem)
			}
			out.WriteByte('\n')
		}
		fmt.Fprintf(out, "%d entries, %d prefix entries copied into %s", rep.Entries, rep.PrefixEntries, o.to)
		if rep.ValuesLost > 0 {
			fmt.Fprintf(out, "; %d values unreadable (their keys kept)", rep.ValuesLost)
		}
		fmt.Fprintf(out, "; about %d records lost\n", rep.LostEstimate)
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if rep.LostEstimate > 0 || rep.ValuesLost > 0 {
		return errNotFound // exit 1: something was lost
	}
	return nil
}
