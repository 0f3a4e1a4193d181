package main

import "github.com/urlhash/urlhash/store"

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
			o := new(storeFlags)
			o.addFlags(fs, "one object per input: input, hash")
			return o.put
		},
	}
}

func (o *storeFlags) put(e *env, args []string) error {
	a := newAnswers(e, o.json)
	err := o.storeEach(e, args, a, func(st store.Backend, entries []store.Entry) ([]bool, error) {
		return nil, st.PutBatch(e.ctx, entries)
	}, func(r input, en *store.Entry, _ bool) {
		if a.json != nil {
			a.json.Encode(memberOutput{Input: r.text, Hash: hexKey(en)})
		}
	})
	return a.status(o.in.status(err))
}
