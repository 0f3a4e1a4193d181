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
keeping the recorded profile and the idempotency records of batches; DIR
is never changed. It reads every file on its own, so that one damaged
file costs only what it held: Badger's tables block by block, skipping
blocks that fail their checksum, the memtable logs a crash left, the
value log, and the key table's key files and log segments (a key file
whose keys fail their checksum is not copied: none of its keys can be
told from a damaged one). It prints, for each file, what it read and
what it could not (how many keys or records, when the file tells), then
the entries copied and what was lost. Exit status: 0 when nothing was
lost, 1 when something was (or may have been), 2 on an error.

Use it when a command reports damage ("store: corrupt: ..."). When it
exits 0, check NEW with "urlhash verify --db NEW" and replace DIR with
NEW. When it exits 1, NEW holds everything that could be read, and the
report says what could not: keep DIR until you have decided (a backup
to restore, or the loss accepted).
`,
		example: `$ urlhash recover --db idx --to idx.recovered
000006.sst (table): 11831 records, 49 of 50 blocks read: 1 of 50 blocks unreadable
keytable/000002.keys (key file): 30022 keys
keytable/000004.log (log segment): 3 records
11831 entries, 0 prefix entries copied into idx.recovered; about 71 records lost
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
		unknown := false
		for _, f := range rep.Files {
			if (f.Kind == "manifest" || f.Kind == "synced mark") && f.Problem == "" {
				continue
			}
			what := "records"
			if f.Kind == "key file" {
				what = "keys"
			}
			fmt.Fprintf(out, "%s (%s)", f.Name, f.Kind)
			if f.Kind != "manifest" && f.Kind != "synced mark" && f.Kind != "acknowledged records" {
				fmt.Fprintf(out, ": %d %s", f.Records, what)
			}
			if f.Blocks > 0 {
				fmt.Fprintf(out, ", %d of %d blocks read", f.Blocks-f.BadBlocks, f.Blocks)
			}
			if f.Problem != "" {
				fmt.Fprintf(out, ": %s", f.Problem)
			}
			out.WriteByte('\n')
			unknown = unknown || f.LostUnknown
		}
		fmt.Fprintf(out, "%d entries, %d prefix entries copied into %s", rep.Entries, rep.PrefixEntries, o.to)
		if rep.ValuesLost > 0 {
			fmt.Fprintf(out, "; %d values unreadable (their keys kept)", rep.ValuesLost)
		}
		fmt.Fprintf(out, "; about %d records lost", rep.LostEstimate)
		if unknown {
			out.WriteString(", and an unknown number in the files above that were missing or unreadable")
		}
		out.WriteByte('\n')
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if rep.Lost {
		fmt.Fprintf(e.stderr, "urlhash: recover: something was lost (see above): %s holds what could be read; keep %s until you have decided\n", o.to, o.dir)
		return errNotFound // exit 1
	}
	return nil
}
