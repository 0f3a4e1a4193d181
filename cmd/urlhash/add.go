package main

import (
	"fmt"
	"time"

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
			o := new(addOptions)
			o.addFlags(fs, "inputs are hex: 64 digits a full entry, an even 8..62 digits a prefix entry",
				"one object per input: input, hash, new, present")
			o.db.addCompression(fs)
			fs.BoolVar(&o.storeURL, "store-url", false, "keep each URL's text in its entry")
			o.vf.addFlags(fs)
			return o.run
		},
	}
}

type addOptions struct {
	writeFlags
	storeURL bool
	vf       valueFlags
}

func (o *addOptions) run(e *env, args []string) error {
	ix, err := o.db.open(e, access{write: true, storeURL: o.storeURL})
	if err != nil {
		return err
	}
	defer ix.Close()
	a := newAnswers(e, o.json)
	var kept int64
	err = writeEach(e, ix, &o.writeFlags, args, a, func(entries []store.Entry) ([]bool, error) {
		o.vf.apply(entries, time.Now())
		return ix.Store().AddBatch(entries)
	}, func(r record, en *store.Entry, isNew bool) {
		if !isNew {
			kept++
		}
		if a.json != nil {
			present := !isNew
			a.json.Encode(memberOutput{Input: r.text, Hash: hexKey(en), New: &isNew, Present: &present})
		}
	})
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	if kept > 0 && (o.storeURL || o.vf.isSet()) {
		fmt.Fprintf(e.stderr, "urlhash: note: add: %d already stored, kept as they were (put replaces)\n", kept)
	}
	return a.status(o.in.status(err))
}
