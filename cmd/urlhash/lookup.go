package main

import (
	"context"
	"fmt"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/query"
)

func lookupCommand() *command {
	return &command{
		name:      "lookup",
		usageLine: "lookup --db DIR [--profile webrisk|safebrowsing-v5] [flags] [URL...]\nlookup --db DIR --hashes [flags] [HASH...]",
		short:     "check URLs against a Safe Browsing style list index",
		long: `Expands each URL into its Safe Browsing host-suffix/path-prefix
expressions and checks each expression's SHA-256 against the index: a
stored full hash, or a stored prefix entry (4..31 bytes, such as a list's
4-byte prefixes) that the hash starts with. URLs expand as the profile the
index records says (webrisk or safebrowsing-v5), or as --profile says (the
other of the two). An index of another profile (urlhash, iri) holds URL
identities, which no expression matches: lookup refuses it (has is the
command for it). Prints each matching input with the expression and
matched length in bytes, tab-separated. Exit status: 0 if any URL matched,
1 if none did, 2 on an error.
`,
		example: `$ urlhash expressions --json evil.example/ | jq -r '.expressions[0].prefix'
f001957c
$ urlhash add --db list --profile webrisk --hashes f001957c   # a 4-byte prefix
$ urlhash lookup --db list 'http://www.evil.example/login?x=1'
http://www.evil.example/login?x=1	evil.example/	4
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(lookupOptions)
			o.db.addFlags(fs)
			fs.StringVar(&o.profile, "profile", "", "how URLs expand: `NAME` webrisk or safebrowsing-v5 (default: the profile the index records)")
			fs.enum("profile", listProfiles...)
			o.in.addHashes(fs, "inputs are expression hashes (64 hex digits)")
			fs.BoolVar(&o.json, "json", false, "one object per input: input, matched, hits [{expression, hash, length, full}]")
			o.in.addFlags(fs)
			return o.run
		},
	}
}

type lookupOptions struct {
	db      dbFlags
	profile string
	json    bool
	in      inputFlags
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

func (o *lookupOptions) run(e *env, args []string) error {
	var p *safebrowsing.Profile
	if o.profile != "" {
		var err error
		if p, err = safebrowsing.ParseProfile(o.profile); err != nil {
			return usageError{err}
		}
	}
	if err := refusePending(o.db.dir); err != nil {
		return err
	}
	// The index is read whatever profile it records: its entries are
	// expression hashes either way.
	ix, err := o.db.open(e, access{})
	if err != nil {
		return err
	}
	defer ix.Close()
	if !o.in.hashes() {
		// Either Safe Browsing profile's expressions hash the same way,
		// so a list of one answers URLs expanded by the other; an index
		// of URL identities (urlhash, iri) holds no expression hash, and
		// no URL could ever match it.
		recorded, ok := ix.Profile().(*safebrowsing.Profile)
		if !ok {
			return fmt.Errorf("lookup --db %s: the index records the %s profile: its entries are the identities of URLs, not the hashes of Safe Browsing expressions, so no URL can match them\n"+
				"urlhash: hint: urlhash has --db %s asks whether URLs are stored; lookup reads lists made with --profile webrisk or safebrowsing-v5 (urlhash add --profile webrisk --hashes, urlhash sync)",
				backend.Display(o.db.dir), ix.Profile().Name(), backend.Display(o.db.dir))
		}
		if p == nil {
			p = recorded
		}
	}
	a := newAnswers(e, o.json)
	matched := 0
	err = streamBatches(e, &o.in, args, storeBatch, func(batch []input) error {
		for _, r := range batch {
			hits, err := lookupOne(e.ctx, ix, p, r.text, o.in.kind())
			if r.err != nil {
				err = r.err // refused as read
			}
			if err != nil {
				a.fail(r, err)
				continue
			}
			if len(hits) > 0 {
				matched++
			}
			if a.json != nil {
				out := lookupOutput{Input: r.text, Matched: len(hits) > 0}
				for _, h := range hits {
					out.Hits = append(out.Hits, hitOutput{Expression: h.Expression, Hash: h.Hash.String(), Length: h.Len, Full: h.IsFull()})
				}
				a.json.Encode(out)
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
	return a.status(o.in.status(err))
}

// lookupOne looks up a URL's expressions or, for query.Hashes, one
// expression hash.
func lookupOne(ctx context.Context, ix *query.Index, p *safebrowsing.Profile, input string, kind query.Input) ([]query.Hit, error) {
	if kind != query.Hashes {
		return ix.Lookup(ctx, input, p)
	}
	h, err := hashkey.ParseHash(input)
	if err != nil {
		return nil, err
	}
	m, ok, err := ix.Store().Match(ctx, h)
	if err != nil || !ok {
		return nil, err
	}
	return []query.Hit{{Expression: "", Hash: h, Len: m.Len, Value: m.Value}}, nil
}
