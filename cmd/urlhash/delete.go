package main

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

func deleteCommand() *command {
	return &command{
		name:      "delete",
		usageLine: "delete --db DIR [flags] [URL|HASH...]\ndelete --db DIR --prefix HEX [--json]",
		short:     "remove URLs (or hashes and prefixes) from an index",
		long: `Removes each URL's identity (or, with --hashes, each full hash or prefix
entry) from the index. With --prefix HEX it removes instead every entry
(full and prefix entries) whose key starts with HEX (1..64 digits; an odd
count is a half byte). Durable when the command exits. The last line on
stderr is the summary "N deleted, M not stored". Exit status: 0 if every
input was stored (and is now removed), or --prefix removed any; 1 if any
input was not stored, or --prefix matched nothing; 2 on an error. Delete
never creates an index.
`,
		example: `$ urlhash delete --db idx https://example.com/
$ urlhash delete --db idx --from gone.txt
$ urlhash delete --db idx --prefix 0f11
urlhash: delete: 3 deleted (3 entries, 0 prefix entries)
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(deleteOptions)
			o.addFlags(fs, "inputs are hex: 64 digits or an even 8..62 digits",
				"one object per input: input, hash, present (was stored); with --prefix one summary object: deleted, full, prefixes")
			o.db.addCompression(fs)
			o.db.addKeyTable(fs)
			fs.StringVar(&o.prefix, "prefix", "", "delete every entry whose key starts with `HEX`")
			o.db.mustExist = true // deleting from a misspelt --db must not create it
			o.fs = fs
			return o.run
		},
	}
}

type deleteOptions struct {
	writeFlags
	prefix string
	fs     *flagSet
}

func (o *deleteOptions) run(e *env, args []string) error {
	byPrefix := o.fs.Changed("prefix")
	if byPrefix && (len(args) > 0 || len(o.in.from) > 0) {
		return usagef("--prefix takes no other inputs")
	}
	ix, err := o.db.open(e, access{write: true})
	if err != nil {
		return err
	}
	defer ix.Close()
	if byPrefix {
		err := deletePrefix(e, ix.Store(), o.prefix, o.json)
		if cerr := ix.Close(); err == nil || errors.Is(err, errNotFound) && cerr != nil {
			err = cerr
		}
		return err
	}
	a := newAnswers(e, o.json)
	var deleted int64
	err = writeEach(e, ix, &o.writeFlags, args, a, func(entries []store.Entry) ([]bool, error) {
		wasStored := make([]bool, len(entries))
		for i, en := range entries {
			switch err := ix.Store().Delete(e.ctx, en); {
			case errors.Is(err, store.ErrNotFound):
				a.missed++
			case err != nil:
				return nil, err
			default:
				wasStored[i] = true
				deleted++
			}
		}
		return wasStored, nil
	}, func(r input, en *store.Entry, wasStored bool) {
		if a.json != nil {
			a.json.Encode(memberOutput{Input: r.text, Hash: hexKey(en), Present: &wasStored})
		}
	})
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintf(e.stderr, "urlhash: delete: %d deleted, %d not stored\n", deleted, a.missed)
	return a.status(o.in.status(err))
}

// deletePrefix is delete --prefix: every entry under a hex prefix.
func deletePrefix(e *env, st store.Backend, prefix string, asJSON bool) error {
	p, bits, err := hashkey.ParsePrefix(prefix)
	if err != nil {
		return usagef("--prefix %q: %v", prefix, err)
	}
	full, prefixes, err := st.DeletePrefix(e.ctx, p, bits)
	if err != nil {
		return err
	}
	if err := syncWrites(e.ctx, st); err != nil {
		return err
	}
	if asJSON {
		out := bufio.NewWriter(e.stdout)
		newJSONWriter(out).Encode(deleteSummary{Deleted: full + prefixes, Full: &full, Prefixes: &prefixes})
		if err := out.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "urlhash: delete: %d deleted (%d entries, %d prefix entries)\n", full+prefixes, full, prefixes)
	if full+prefixes == 0 {
		return errNotFound
	}
	return nil
}

// deleteSummary is delete's --json summary: one object, on stdout.
type deleteSummary struct {
	Deleted  int64  `json:"deleted"`
	Full     *int64 `json:"full,omitempty"`
	Prefixes *int64 `json:"prefixes,omitempty"`
}
