package main

import (
	"encoding/hex"

	"github.com/urlhash/urlhash/hashkey/safebrowsing"
)

func expressionsCommand() *command {
	return &command{
		name:      "expressions",
		usageLine: "expressions [--profile webrisk|safebrowsing-v5] [flags] [URL...]",
		short:     "print a URL's Safe Browsing host-suffix/path-prefix expressions",
		long: `Prints the host-suffix/path-prefix expressions of each URL that a Safe
Browsing or Web Risk client looks up, one per line, with a blank line
between inputs. The webrisk profile (Web Risk, Safe Browsing v4) takes
hosts from the last five host components, safebrowsing-v5 from the
registrable domain (eTLD+1) of the Public Suffix List.
`,
		example: `$ urlhash expressions 'http://a.b.c/1/2.html?param=1'
a.b.c/1/2.html?param=1
a.b.c/1/2.html
a.b.c/
a.b.c/1/
b.c/1/2.html?param=1
b.c/1/2.html
b.c/
b.c/1/
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(expressionsOptions)
			fs.StringVar(&o.profile, "profile", "webrisk", "how URLs expand: `NAME` webrisk (default) or safebrowsing-v5")
			fs.enum("profile", listProfiles...)
			fs.IntVar(&o.prefixLen, "prefix-len", 4, "bytes of hash prefix in --json output, `N` in 4..32 (default 4)")
			fs.BoolVar(&o.json, "json", false, "one object per input: input, canonical, expressions [{expression, hash, prefix}]")
			o.in.addFlags(fs)
			return o.run
		},
	}
}

type expressionsOptions struct {
	profile   string
	prefixLen int
	json      bool
	in        inputFlags
}

type expressionOutput struct {
	Expression string `json:"expression"`
	Hash       string `json:"hash"`
	Prefix     string `json:"prefix"`
}

type expressionsOutput struct {
	Input       string             `json:"input"`
	Canonical   string             `json:"canonical,omitempty"`
	Expressions []expressionOutput `json:"expressions,omitempty"`
	Error       string             `json:"error,omitempty"`
}

func (o *expressionsOptions) run(e *env, args []string) error {
	p, err := safebrowsing.ParseProfile(o.profile)
	if err != nil {
		return usageError{err}
	}
	if o.prefixLen < 4 || o.prefixLen > 32 {
		return usagef("--prefix-len %d: want 4..32", o.prefixLen)
	}
	return o.in.status(processOrdered(e, &o.in, args, func(r input, c *chunk) {
		var b safebrowsing.Buffer
		err := p.Expand(&b, r.text)
		if r.err != nil {
			err = r.err // refused as read
		}
		if err != nil {
			// A failed input's group of expressions is empty.
			c.fail(r, err)
			if o.json {
				writeJSON(c, expressionsOutput{Input: r.text, Error: err.Error()})
			}
			return
		}
		if o.json {
			out := expressionsOutput{Input: r.text, Canonical: string(b.Canonical())}
			for i := range b.Len() {
				h := b.Hash(i)
				out.Expressions = append(out.Expressions, expressionOutput{
					Expression: string(b.Expression(i)), Hash: h.String(), Prefix: hex.EncodeToString(h[:o.prefixLen]),
				})
			}
			writeJSON(c, out)
			return
		}
		if r.seq > 0 {
			c.out.WriteByte('\n') // a blank line between inputs
		}
		for i := range b.Len() {
			c.out.Write(b.Expression(i))
			c.out.WriteByte('\n')
		}
	}))
}
