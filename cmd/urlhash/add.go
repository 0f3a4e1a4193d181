package main

import (
	"fmt"

	"github.com/urlhash/urlhash/store"
)

func addCommand() *command {
	return &command{
		name:      "add",
		usageLine: "add --db DIR [flags] [URL|HASH...]",
		short:     "add URLs (or hashes and prefixes) to an index",
		long: `Adds each URL's identity (or, with --hashes, each full hash or 4..31-byte
hex prefix entry) to the index, creating the index if needed. Add only
adds: an entry already stored (and not expired) keeps its text, data and
expiry, is reported present (with --json) and counted in a note on
stderr; put replaces it. Everything is durable when the command exits 0.
Prints nothing unless --json.
`,
		example: `$ urlhash add --db idx --store-url https://example.com/ https://example.org/
$ urlhash add --db list --profile webrisk --hashes 0a1b2c3d
$ urlhash add --db blocked --ttl 72h https://spam.example/
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(storeFlags)
			o.addFlags(fs, "one object per input: input, hash, new, present")
			return o.add
		},
	}
}

func (o *storeFlags) add(e *env, args []string) error {
	a := newAnswers(e, o.json)
	var kept int64
	err := o.storeEach(e, args, a, func(st store.Backend, entries []store.Entry) ([]bool, error) {
		return st.AddBatch(e.ctx, entries)
	}, func(r input, en *store.Entry, isNew bool) {
		if !isNew {
			kept++
		}
		if a.json != nil {
			present := !isNew
			a.json.Encode(memberOutput{Input: r.text, Hash: hexKey(en), New: &isNew, Present: &present})
		}
	})
	if kept > 0 && (o.storeURL || o.vf.isSet()) {
		fmt.Fprintf(e.stderr, "urlhash: note: add: %d already stored, kept as they were (put replaces)\n", kept)
	}
	return a.status(o.in.status(err))
}
