package main

import (
	"encoding/hex"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/query"
)

func expressionsCommand() *command {
	return &command{
		name:    "expressions",
		summary: "print a URL's Safe Browsing host-suffix/path-prefix expressions",
		usage: `Usage: urlhash expressions --profile webrisk|safebrowsing-v5 [flags] [URL...]

Prints the host-suffix/path-prefix expressions of each URL that a Safe
Browsing or Web Risk client looks up, one per line, with a blank line
between inputs. The webrisk profile (Web Risk, Safe Browsing v4) takes
hosts from the last five host components, safebrowsing-v5 from the
registrable domain (eTLD+1) of the Public Suffix List.

Flags:
      --profile NAME     webrisk (default) or safebrowsing-v5
      --prefix-len N     bytes of hash prefix in --json output, 4..32 (default 4)
      --json             one object per input: input, canonical, expressions
                         [{expression, hash, prefix}]
` + inputUsage + `
Example:
  $ urlhash expressions 'http://a.b.c/1/2.html?param=1'
  a.b.c/1/2.html?param=1
  a.b.c/1/2.html
  a.b.c/
  a.b.c/1/
  b.c/1/2.html?param=1
  b.c/1/2.html
  b.c/
  b.c/1/
`,
		run: runExpressions,
	}
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

func runExpressions(e *env, args []string) error {
	fs := newFlags("expressions")
	profile := fs.String("profile", "webrisk", "webrisk or safebrowsing-v5")
	prefixLen := fs.Int("prefix-len", 4, "prefix bytes")
	asJSON := fs.Bool("json", false, "JSON output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	p, err := safebrowsing.ParseProfile(*profile)
	if err != nil {
		return usageError{err}
	}
	if *prefixLen < 4 || *prefixLen > 32 {
		return usagef("--prefix-len %d: want 4..32", *prefixLen)
	}
	return in.status(processOrdered(e, &in, fs.Args(), func(r record, c *chunk) {
		var b safebrowsing.Buffer
		if err := p.Expand(&b, r.text); err != nil {
			// A failed input's group of expressions is empty.
			c.fail(r, err)
			if *asJSON {
				writeJSON(c, expressionsOutput{Input: r.text, Error: err.Error()})
			}
			return
		}
		if *asJSON {
			o := expressionsOutput{Input: r.text, Canonical: string(b.Canonical())}
			for i := range b.Len() {
				h := b.Hash(i)
				o.Expressions = append(o.Expressions, expressionOutput{
					Expression: string(b.Expression(i)), Hash: h.String(), Prefix: hex.EncodeToString(h[:*prefixLen]),
				})
			}
			writeJSON(c, o)
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

func lookupCommand() *command {
	return &command{
		name:    "lookup",
		summary: "check URLs against a Safe Browsing style list index",
		usage: `Usage: urlhash lookup --db DIR --profile webrisk|safebrowsing-v5 [flags] [URL...]
       urlhash lookup --db DIR --hashes [flags] [HASH...]

Expands each URL into its Safe Browsing host-suffix/path-prefix
expressions and checks each expression's SHA-256 against the index: a
stored full hash, or a stored prefix entry (4..31 bytes, such as a list's
4-byte prefixes) that the hash starts with. Prints each matching input
with the expression and matched length in bytes, tab-separated. Exit
status: 0 if any URL matched, 1 if none did, 2 on an error.

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash") (fill it with "urlhash import
                         --format hashes" or "urlhash add --hashes")
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --profile NAME     webrisk or safebrowsing-v5: how URLs are expanded
                         (the index may have been built with either)
      --hashes           inputs are expression hashes (64 hex digits)
      --json             one object per input: input, matched, hits
                         [{expression, hash, length, full}]
` + inputUsage + `
Example:
  $ urlhash expressions --json evil.example/ | jq -r '.expressions[0].prefix'
  f001957c
  $ urlhash add --db list --profile webrisk --hashes f001957c   # a 4-byte prefix
  $ urlhash lookup --db list --profile webrisk 'http://www.evil.example/login?x=1'
  http://www.evil.example/login?x=1	evil.example/	4
`,
		run: runLookup,
	}
}

type hitOutput struct {
	Expression string `json:"expression"`
	Hash       string `json:"hash"`
	Length     int    `json:"length"`
	Full       bool   `json:"full"`
}

type lookupOutput struct {
	Input   string      `json:"input"`
	Matched bool        `json:"matched"`
	Hits    []hitOutput `json:"hits,omitempty"`
	Error   string      `json:"error,omitempty"`
}

func runLookup(e *env, args []string) error {
	fs := newFlags("lookup")
	var db dbFlags
	db.addFlags(fs)
	hashes := fs.Bool("hashes", false, "inputs are expression hashes")
	asJSON := fs.Bool("json", false, "JSON output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	*hashes = *hashes || in.format == "hashes"
	p, err := safebrowsing.ParseProfile(db.id.name)
	if err != nil && !*hashes {
		return usagef("--profile webrisk or --profile safebrowsing-v5 is required")
	}
	if err := refusePending(db.dir); err != nil {
		return err
	}
	// --profile says how URLs expand; the index is read whatever profile
	// it records: its entries are expression hashes either way.
	ix, err := db.open(e, false, false, false)
	if err != nil {
		return err
	}
	defer ix.Close()
	a := newAnswers(e, *asJSON)
	matched := 0
	err = streamBatches(e, &in, fs.Args(), storeBatch, func(batch []record) error {
		for _, r := range batch {
			hits, err := lookupOne(ix, p, r.text, *hashes)
			if err != nil {
				a.fail(r, err)
				continue
			}
			if len(hits) > 0 {
				matched++
			}
			if a.json != nil {
				o := lookupOutput{Input: r.text, Matched: len(hits) > 0}
				for _, h := range hits {
					o.Hits = append(o.Hits, hitOutput{Expression: h.Expression, Hash: h.Hash.String(), Length: h.Len, Full: h.IsFull()})
				}
				a.json.Encode(o)
				continue
			}
			for _, h := range hits {
				fmt.Fprintf(a.out, "%s\t%s\t%d\n", r.text, h.Expression, h.Len)
			}
		}
		return a.out.Flush()
	})
	if err == nil && a.failed == 0 && matched == 0 {
		a.missed++ // exit 1: no URL matched
	}
	return a.status(in.status(err))
}

// lookupOne looks up a URL's expressions or, with hashes, one expression
// hash.
func lookupOne(ix *query.Index, p *safebrowsing.Profile, input string, hashes bool) ([]query.Hit, error) {
	if !hashes {
		return ix.Lookup(input, p)
	}
	h, err := hashkey.ParseHash(input)
	if err != nil {
		return nil, err
	}
	m, ok, err := ix.Store().Match(h)
	if err != nil || !ok {
		return nil, err
	}
	return []query.Hit{{Expression: "", Hash: h, Len: m.Len, Value: m.Value}}, nil
}

func hashedURICommand() *command {
	return &command{
		name:    "hashed-uri",
		summary: "print the hashed: URI (draft-feather) of each URL",
		usage: `Usage: urlhash hashed-uri [flags] [URL...]

Prints the hashed URI of each URL (draft-feather-hashed-uri-03): the URL
without its fragment and query (unless kept), canonicalised per Appendix A,
hashed, as hashed:ALG=HEX[+frag][+query]. Publish such a list to let
clients test URLs against it without revealing the URLs.

Flags:
      --alg ALG          md5 (default), sha1 or sha256 (written x-sha256)
      --keep WHAT        none (default), frag, query or both
      --variant V        n (default) or p: Appendix A's variant
      --json             one object per input: input, canonical, hashed_uri
` + inputUsage + `
Example:
  $ urlhash hashed-uri --alg sha1 http://www.thus.net
`,
		run: runHashedURI,
	}
}

type hashedOutput struct {
	Input     string `json:"input"`
	Canonical string `json:"canonical,omitempty"`
	HashedURI string `json:"hashed_uri,omitempty"`
	Error     string `json:"error,omitempty"`
}

func runHashedURI(e *env, args []string) error {
	fs := newFlags("hashed-uri")
	algName := fs.String("alg", "md5", "md5, sha1 or sha256")
	keepName := fs.String("keep", "none", "none, frag, query or both")
	variantName := fs.String("variant", "n", "n or p")
	asJSON := fs.Bool("json", false, "JSON output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	alg, err := hasheduri.ParseAlg(*algName)
	if err != nil {
		return usageError{err}
	}
	keep, err := hasheduri.ParseKeep(*keepName)
	if err != nil {
		return usageError{err}
	}
	v, err := hasheduri.ParseVariant(*variantName)
	if err != nil {
		return usageError{err}
	}
	return in.status(processOrdered(e, &in, fs.Args(), func(r record, c *chunk) {
		u, err := hasheduri.Generate(r.text, alg, keep, v)
		if err != nil {
			failLine(c, r, err, *asJSON)
			return
		}
		if *asJSON {
			canon, _ := hasheduri.CanonicalKeep(r.text, keep, v)
			writeJSON(c, hashedOutput{Input: r.text, Canonical: canon, HashedURI: u.String()})
			return
		}
		c.out.WriteString(u.String())
		c.out.WriteByte('\n')
	}))
}

func matchCommand() *command {
	return &command{
		name:    "match",
		summary: "check whether URLs match a hashed: URI",
		usage: `Usage: urlhash match [flags] HASHED-URI [URL...]

Reports whether each URL (from the arguments or, when there are none, from
standard input) matches the hashed URI: the URL keeps the
components the URI's flags name, is canonicalised (Appendix A variant) and
hashed with the URI's algorithm, and the digests are compared in constant
time. Prints "match" or "no match", a tab and the URL, per URL. Exit
status: 0 if every URL matches, 1 if one does not, 2 on a malformed hashed
URI or URL.

Flags:
      --variant V        n (default) or p: the variant the publisher used
  -q, --quiet            print nothing
` + inputUsage + `
Example:
  $ urlhash match "$(urlhash hashed-uri http://example.com/a)" http://EXAMPLE.com:80/a
  match	http://EXAMPLE.com:80/a
`,
		run: runMatch,
	}
}

func runMatch(e *env, args []string) error {
	fs := newFlags("match")
	variantName := fs.String("variant", "n", "n or p")
	quiet := fs.BoolP("quiet", "q", false, "no output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	v, err := hasheduri.ParseVariant(*variantName)
	if err != nil {
		return usageError{err}
	}
	if fs.NArg() < 1 {
		return usagef("want a hashed URI, then URLs (or URLs on standard input)")
	}
	u, err := hasheduri.Parse(fs.Arg(0))
	if err != nil {
		return err
	}
	a := newAnswers(e, false)
	return a.status(in.status(streamBatches(e, &in, fs.Args()[1:], storeBatch, func(batch []record) error {
		for _, r := range batch {
			ok, err := u.Match(r.text, v)
			if err != nil {
				a.fail(r, err)
				continue
			}
			word := "match"
			if !ok {
				a.missed++
				word = "no match"
			}
			if !*quiet {
				fmt.Fprintf(a.out, "%s\t%s\n", word, r.text)
			}
		}
		return nil
	})))
}
