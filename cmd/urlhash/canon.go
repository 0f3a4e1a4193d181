package main

func canonCommand() *command {
	return &command{
		name:      "canon",
		usageLine: "canon [flags] [URL...]",
		short:     "print the canonical form of each URL",
		long: `Prints the canonical form of each URL under a profile: the string whose
digest is the URL's identity. Output is one line per input, in input
order; failures are reported on stderr and exit 2.
`,
		example: `$ urlhash canon 'hTTpS://exâmple.com/foo/../bar baz'
https://xn--exmple-xta.com/bar%20baz
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(canonOptions)
			o.id.addFlags(fs, canonProfiles)
			fs.BoolVar(&o.json, "json", false, "one JSON object per input: input, canonical, hash, short, very_short, words")
			o.in.addFlags(fs)
			return o.run
		},
	}
}

type canonOptions struct {
	id   identityFlags
	json bool
	in   inputFlags
}

func (o *canonOptions) run(e *env, args []string) error {
	cz, err := o.id.canonForm()
	if err != nil {
		return err
	}
	return o.in.status(processOrdered(e, &o.in, args, func(r input, c *chunk) {
		canon, err := cz.canonical(c.scratch[:0], r.text)
		if r.err != nil {
			err = r.err // refused as read
		}
		if err != nil {
			failLine(c, r, err, o.json)
			return
		}
		c.scratch = canon
		if o.json {
			if cz.sum == nil {
				writeJSON(c, hashOutput{Input: r.text, Canonical: string(canon), Profile: cz.name})
				return
			}
			hashed, _ := cz.appendHashed(nil, r.text) // it succeeded for canon
			out := newHashOutput(r.text, canon, cz.sum(hashed), cz.name)
			if cz.hashed != nil {
				out.Hashed = string(hashed)
			}
			writeJSON(c, out)
			return
		}
		c.out.Write(canon)
		c.out.WriteByte('\n')
	}))
}
