package main

import (
	"time"

	"github.com/urlhash/urlhash/store"
)

func putCommand() *command {
	return &command{
		name:      "put",
		usageLine: "put --db DIR [flags] [URL|HASH...]",
		short:     "store URLs (or hashes and prefixes), replacing stored values",
		long: `Stores each URL's identity (or, with --hashes, each full hash or 4..31-byte
hex prefix entry) with the value the flags give, replacing what an entry
stored before: its text, data, seen times and expiry (add, by contrast,
keeps a stored entry as it is). Creates the index if needed. Everything
is durable when the command exits 0. Prints nothing unless --json.
`,
		example: `$ urlhash put --db idx --store-url --data 'etag "abc"' --ttl 24h https://example.com/
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(putOptions)
			o.addFlags(fs, "inputs are hex: 64 digits a full entry, an even 8..62 digits a prefix entry",
				"one object per input: input, hash")
			o.db.addCompression(fs)
			fs.BoolVar(&o.storeURL, "store-url", false, "keep each URL's text in its entry")
			o.vf.addFlags(fs)
			return o.run
		},
	}
}

type putOptions struct {
	writeFlags
	storeURL bool
	vf       valueFlags
}

func (o *putOptions) run(e *env, args []string) error {
	ix, err := o.db.open(e, access{write: true, storeURL: o.storeURL})
	if err != nil {
		return err
	}
	defer ix.Close()
	a := newAnswers(e, o.json)
	err = writeEach(e, ix, &o.writeFlags, args, a, func(entries []store.Entry) ([]bool, error) {
		o.vf.apply(entries, time.Now())
		return nil, ix.Store().PutBatch(entries)
	}, func(r record, en *store.Entry, _ bool) {
		if a.json != nil {
			a.json.Encode(memberOutput{Input: r.text, Hash: hexKey(en)})
		}
	})
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	return a.status(o.in.status(err))
}
