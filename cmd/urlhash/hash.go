package main

import (
	"encoding/hex"
)

func hashCommand() *command {
	return &command{
		name:      "hash",
		usageLine: "hash [flags] [URL...]",
		short:     "print the identity (SHA-256) of each URL",
		long: `Prints the identity of each URL under a profile, the hash an index keys it
by: the SHA-256 of its canonical form (urlhash), of its exact Safe
Browsing expression (webrisk, safebrowsing-v5: host, path and query, no
scheme) or of the IRI as written (iri), as 64 lowercase hex digits (or,
with --format decimal, the url-hash crate's four little-endian words
joined by '-'). Output is one line per input, in input order; a URL that
fails is reported on stderr and the command exits 2 after processing
every input.
`,
		example: `$ urlhash hash 'HTTPS://Example.COM:443/a/../b'
d7fe568b31ae0fb9ee8a1311409b521aeb6a1b50f459bdf15c6f4a3f29dde53b
$ urlhash hash --format decimal https://example.com/
15978973112404087055-11952159289928715011-16949433277703541955-15558110937471207048
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(hashOptions)
			o.id.addFlags(fs, indexProfiles)
			fs.StringVar(&o.format, "format", "hex", "`FORMAT` of the hash: hex (default) or decimal")
			fs.enum("format", "hex", "decimal")
			fs.BoolVar(&o.json, "json", false, "one JSON object per input: input, canonical, hashed (Safe Browsing: the expression hashed), hash, short, very_short, words, profile")
			o.in.addFlags(fs)
			return o.run
		},
	}
}

type hashOptions struct {
	id     identityFlags
	format string
	json   bool
	in     inputFlags
}

func (o *hashOptions) run(e *env, args []string) error {
	if o.format != "hex" && o.format != "decimal" {
		return usagef("unknown --format %q (want hex or decimal)", o.format)
	}
	cz, err := o.id.canonicaliser()
	if err != nil {
		return err
	}
	decimal := o.format == "decimal"
	return o.in.status(processOrdered(e, &o.in, args, func(r input, c *chunk) {
		hashed, err := cz.appendHashed(c.scratch[:0], r.text)
		if r.err != nil {
			err = r.err // refused as read
		}
		if err != nil {
			failLine(c, r, err, o.json)
			return
		}
		c.scratch = hashed
		h := cz.sum(hashed)
		switch {
		case o.json && cz.hashed != nil:
			canon, _ := cz.canonical(nil, r.text) // it succeeded for hashed
			out := newHashOutput(r.text, canon, h, cz.name)
			out.Hashed = string(hashed)
			writeJSON(c, out)
		case o.json:
			writeJSON(c, newHashOutput(r.text, hashed, h, cz.name))
		case decimal:
			c.out.Write(append(h.AppendDecimal(c.out.AvailableBuffer()), '\n'))
		default:
			c.out.Write(append(hex.AppendEncode(c.out.AvailableBuffer(), h[:]), '\n'))
		}
	}))
}
