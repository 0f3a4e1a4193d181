package main

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey/hasheduri"
)

func matchCommand() *command {
	return &command{
		name:      "match",
		usageLine: "match [flags] HASHED-URI [URL...]",
		short:     "check whether URLs match a hashed: URI",
		long: `Reports whether each URL matches the hashed URI: the URL keeps the
components the URI's flags name, is canonicalised (Appendix A variant) and
hashed with the URI's algorithm, and the digests are compared in constant
time. Prints "match" or "no match", a tab and the URL, per URL. Exit
status: 0 if every URL matches, 1 if one does not, 2 on a malformed hashed
URI or URL.
`,
		example: `$ urlhash match "$(urlhash hashed-uri http://example.com/a)" http://EXAMPLE.com:80/a
match	http://EXAMPLE.com:80/a
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(matchOptions)
			fs.StringVar(&o.variant, "variant", "n", "the Appendix A variant `V` the publisher used: n (default) or p")
			fs.enum("variant", "n", "p")
			fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing; only the exit status answers")
			o.in.addFlags(fs)
			return o.run
		},
	}
}

type matchOptions struct {
	variant string
	quiet   bool
	in      inputFlags
}

func (o *matchOptions) run(e *env, args []string) error {
	v, err := hasheduri.ParseVariant(o.variant)
	if err != nil {
		return usageError{err}
	}
	if len(args) < 1 {
		return usagef("want a hashed URI, then URLs (or URLs on standard input)")
	}
	u, err := hasheduri.Parse(args[0])
	if err != nil {
		return err
	}
	a := newAnswers(e, false)
	return a.status(o.in.status(streamBatches(e, &o.in, args[1:], storeBatch, func(batch []input) error {
		for _, r := range batch {
			ok, err := u.Match(r.text, v)
			if r.err != nil {
				err = r.err // refused as read
			}
			if err != nil {
				a.fail(r, err)
				continue
			}
			word := "match"
			if !ok {
				a.missed++
				word = "no match"
			}
			if !o.quiet {
				fmt.Fprintf(a.out, "%s\t%s\n", word, r.text)
			}
		}
		return nil
	})))
}
