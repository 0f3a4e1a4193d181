package main

import (
	"github.com/urlhash/urlhash/hashkey/hasheduri"
)

func hashedURICommand() *command {
	return &command{
		name:      "hashed-uri",
		usageLine: "hashed-uri [flags] [URL...]",
		short:     "print the hashed: URI (draft-feather) of each URL",
		long: `Prints the hashed URI of each URL (draft-feather-hashed-uri-03): the URL
without its fragment and query (unless kept), canonicalised per Appendix A,
hashed, as hashed:ALG=HEX[+frag][+query]. Publish such a list to let
clients test URLs against it without revealing the URLs.
`,
		example: `$ urlhash hashed-uri --alg sha1 http://www.thus.net
hashed:sha1=87ed28009f511ed7ef630180a229ba257180a481
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(hashedURIOptions)
			fs.StringVar(&o.alg, "alg", "md5", "the digest `ALG`: md5 (default), sha1 or sha256 (written x-sha256)")
			fs.enum("alg", "md5", "sha1", "sha256")
			fs.StringVar(&o.keep, "keep", "none", "`WHAT` of the URL to keep and hash: none (default), frag, query or both")
			fs.enum("keep", "none", "frag", "query", "both")
			fs.StringVar(&o.variant, "variant", "n", "Appendix A's variant `V`: n (default) or p")
			fs.enum("variant", "n", "p")
			fs.BoolVar(&o.json, "json", false, "one object per input: input, canonical, hashed_uri")
			o.in.addFlags(fs)
			return o.run
		},
	}
}

type hashedURIOptions struct {
	alg, keep, variant string
	json               bool
	in                 inputFlags
}

type hashedOutput struct {
	Input     string `json:"input"`
	Canonical string `json:"canonical,omitempty"`
	HashedURI string `json:"hashed_uri,omitempty"`
	Error     string `json:"error,omitempty"`
}

func (o *hashedURIOptions) run(e *env, args []string) error {
	alg, err := hasheduri.ParseAlg(o.alg)
	if err != nil {
		return usageError{err}
	}
	keep, err := hasheduri.ParseKeep(o.keep)
	if err != nil {
		return usageError{err}
	}
	v, err := hasheduri.ParseVariant(o.variant)
	if err != nil {
		return usageError{err}
	}
	return o.in.status(processOrdered(e, &o.in, args, func(r input, c *chunk) {
		u, err := hasheduri.Generate(r.text, alg, keep, v)
		if r.err != nil {
			err = r.err // refused as read
		}
		if err != nil {
			failLine(c, r, err, o.json)
			return
		}
		if o.json {
			canon, _ := hasheduri.CanonicalKeep(r.text, keep, v)
			writeJSON(c, hashedOutput{Input: r.text, Canonical: canon, HashedURI: u.String()})
			return
		}
		c.out.WriteString(u.String())
		c.out.WriteByte('\n')
	}))
}
