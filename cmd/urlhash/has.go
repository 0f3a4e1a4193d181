package main

import (
	"encoding/hex"
	"encoding/json"
)

func hasCommand() *command {
	return &command{
		name:      "has",
		usageLine: "has --db DIR [flags] [URL|HASH...]",
		short:     "report whether URLs (or hashes) are in an index",
		long: `Looks each URL (or, with --hashes, each hash) up in the index and prints
one line per input, in input order: "present" or "absent", a tab, and the
input. Exit status: 0 if every input is present, 1 if any is absent, 2 on
an error (a bad input is reported and the others are still answered).
`,
		example: `$ urlhash has --db idx https://example.com/ https://example.org/
present	https://example.com/
absent	https://example.org/
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(hasOptions)
			o.db.addFlags(fs)
			o.db.addIdentity(fs)
			o.in.addHashes(fs, "inputs are hashes: 64 hex digits or w0-w1-w2-w3")
			fs.BoolVar(&o.json, "json", false, "one object per input: input, hash, present")
			fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing; only the exit status answers")
			o.in.addFlags(fs)
			return o.run
		},
	}
}

type hasOptions struct {
	db          dbFlags
	in          inputFlags
	json, quiet bool
}

func (o *hasOptions) run(e *env, args []string) error {
	ix, err := o.db.open(e, access{})
	if err != nil {
		return err
	}
	defer ix.Close()
	// Batches are answered a core each, in input order.
	missed, err := processBatches(e, &o.in, args, lookupBatch, func(batch []input, c *chunk) {
		rs, err := ix.HasInputs(e.ctx, texts(batch), o.in.kind())
		if err != nil {
			c.err = err
			return
		}
		var enc *json.Encoder
		if o.json {
			enc = newJSONWriter(&c.out)
		}
		if !o.quiet {
			c.out.Grow(len(batch) * (len("present\t") + 66))
		}
		for i, r := range batch {
			if r.err != nil {
				rs[i].Err = r.err // refused as read
			}
			if err := rs[i].Err; err != nil {
				c.fail(r, err)
				switch {
				case o.quiet:
				case enc != nil:
					enc.Encode(memberOutput{Input: r.text, Error: err.Error()})
				default:
					c.out.WriteString("error\t" + r.text + "\n")
				}
				continue
			}
			found := rs[i].OK
			if !found {
				c.missed++
			}
			switch {
			case o.quiet:
			case enc != nil:
				enc.Encode(memberOutput{Input: r.text, Hash: hex.EncodeToString(rs[i].Hash[:]), Present: &found})
			case found:
				c.out.WriteString("present\t")
				c.out.WriteString(r.text)
				c.out.WriteByte('\n')
			default:
				c.out.WriteString("absent\t")
				c.out.WriteString(r.text)
				c.out.WriteByte('\n')
			}
		}
	})
	err = o.in.status(err)
	if err == nil && missed > 0 {
		return errNotFound
	}
	return err
}
