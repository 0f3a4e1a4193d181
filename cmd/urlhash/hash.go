package main

import (
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/urlhash/urlhash/hashkey"
)

// hashOutput is the --json object of hash and canon.
type hashOutput struct {
	Input     string   `json:"input"`
	Canonical string   `json:"canonical,omitempty"`
	Hashed    string   `json:"hashed,omitempty"` // the string hashed, when not the canonical form
	Hash      string   `json:"hash,omitempty"`
	Short     string   `json:"short,omitempty"`
	VeryShort string   `json:"very_short,omitempty"`
	Words     []string `json:"words,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func newHashOutput(input string, canonical []byte, h hashkey.Hash, profile string) hashOutput {
	w := h.Words()
	return hashOutput{
		Input:     input,
		Canonical: string(canonical),
		Hash:      h.String(),
		Short:     h.Short().String(),
		VeryShort: h.VeryShort().String(),
		Words: []string{
			strconv.FormatUint(w[0], 10), strconv.FormatUint(w[1], 10),
			strconv.FormatUint(w[2], 10), strconv.FormatUint(w[3], 10),
		},
		Profile: profile,
	}
}

func writeJSON(c *chunk, v any) {
	enc := json.NewEncoder(&c.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only plain structs of strings are encoded here
	}
}

// failLine records a failed input of a one-line-per-input command: a
// diagnostic on stderr and, so that output lines stay aligned with inputs,
// an error object (--json) or an empty line on stdout.
func failLine(c *chunk, r record, err error, asJSON bool) {
	c.fail(r, err)
	if asJSON {
		writeJSON(c, hashOutput{Input: r.text, Error: err.Error()})
	} else {
		c.out.WriteByte('\n')
	}
}

func hashCommand() *command {
	return &command{
		name:    "hash",
		summary: "print the identity (SHA-256) of each URL",
		usage: `Usage: urlhash hash [flags] [URL...]

Prints the identity of each URL under a profile, the hash an index keys it
by: the SHA-256 of its canonical form (urlhash), of its exact Safe
Browsing expression (webrisk, safebrowsing-v5: host, path and query, no
scheme) or of the IRI as written (iri), as 64 lowercase hex digits (or, with --format decimal, the url-hash crate's four
little-endian words joined by '-'). URLs come from the arguments or, when
there are none, from standard input one per line. Output is one line per
input, in input order; a URL that fails is reported on stderr and the
command exits 2 after processing every input.

Flags:
      --profile NAME     urlhash (default: the URL Standard serialisation),
                         webrisk or safebrowsing-v5 (the exact Safe
                         Browsing expression), iri (RDF: as written)
      --digest NAME      sha256 (default) or url-hash-0.1.0 (the first 32
                         bytes of SHA-384, as the published url-hash 0.1.0
                         crate computes)
      --drop-fragment    remove the #fragment before hashing
      --format FORMAT    hex (default) or decimal
      --json             one JSON object per input: input, canonical, hashed
                         (Safe Browsing: the expression hashed), hash,
                         short, very_short, words, profile
` + inputUsage + `
Example:
  $ urlhash hash 'HTTPS://Example.COM:443/a/../b'
  d7fe568b31ae0fb9ee8a1311409b521aeb6a1b50f459bdf15c6f4a3f29dde53b
  $ urlhash hash --format decimal https://example.com/
  15978973112404087055-11952159289928715011-16949433277703541955-15558110937471207048
`,
		run: runHash,
	}
}

func runHash(e *env, args []string) error {
	fs := newFlags("hash")
	var id identityFlags
	id.addFlags(fs, "urlhash, webrisk, safebrowsing-v5 or iri")
	format := fs.String("format", "hex", "hex or decimal")
	asJSON := fs.Bool("json", false, "JSON output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	if *format != "hex" && *format != "decimal" {
		return usagef("unknown --format %q (want hex or decimal)", *format)
	}
	cz, err := id.canonicaliser(false)
	if err != nil {
		return err
	}
	decimal := *format == "decimal"
	return in.status(processOrdered(e, &in, fs.Args(), func(r record, c *chunk) {
		hashed, err := cz.appendHashed(c.scratch[:0], r.text)
		if err != nil {
			failLine(c, r, err, *asJSON)
			return
		}
		c.scratch = hashed
		h := cz.sum(hashed)
		switch {
		case *asJSON && cz.hashed != nil:
			canon, _ := cz.canonical(nil, r.text) // it succeeded for hashed
			o := newHashOutput(r.text, canon, h, cz.name)
			o.Hashed = string(hashed)
			writeJSON(c, o)
		case *asJSON:
			writeJSON(c, newHashOutput(r.text, hashed, h, cz.name))
		case decimal:
			c.out.Write(append(h.AppendDecimal(c.out.AvailableBuffer()), '\n'))
		default:
			c.out.Write(append(hex.AppendEncode(c.out.AvailableBuffer(), h[:]), '\n'))
		}
	}))
}

func canonCommand() *command {
	return &command{
		name:    "canon",
		summary: "print the canonical form of each URL",
		usage: `Usage: urlhash canon [flags] [URL...]

Prints the canonical form of each URL under a profile: the string whose
digest is the URL's identity. URLs come from the arguments or, when there
are none, from standard input one per line; output is one line per input,
in input order; failures are reported on stderr and exit 2.

Flags:
      --profile NAME     urlhash (default; the URL Standard serialisation),
                         webrisk, safebrowsing-v5 (Safe Browsing canonical
                         URL), iri (RDF: the IRI as written, checked), or
                         hashed-n, hashed-p (draft-feather Appendix A)
      --drop-fragment    remove the #fragment (urlhash profile)
      --json             one JSON object per input: input, canonical, hash,
                         short, very_short, words
` + inputUsage + `
Example:
  $ urlhash canon 'hTTpS://exâmple.com/foo/../bar baz'
  https://xn--exmple-xta.com/bar%20baz
`,
		run: runCanon,
	}
}

func runCanon(e *env, args []string) error {
	fs := newFlags("canon")
	var id identityFlags
	id.addFlags(fs, "urlhash, webrisk, safebrowsing-v5, iri, hashed-n or hashed-p")
	asJSON := fs.Bool("json", false, "JSON output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	cz, err := id.canonicaliser(true)
	if err != nil {
		return err
	}
	return in.status(processOrdered(e, &in, fs.Args(), func(r record, c *chunk) {
		canon, err := cz.canonical(c.scratch[:0], r.text)
		if err != nil {
			failLine(c, r, err, *asJSON)
			return
		}
		c.scratch = canon
		if *asJSON {
			if cz.sum == nil {
				writeJSON(c, hashOutput{Input: r.text, Canonical: string(canon), Profile: cz.name})
				return
			}
			hashed, _ := cz.appendHashed(nil, r.text) // it succeeded for canon
			o := newHashOutput(r.text, canon, cz.sum(hashed), cz.name)
			if cz.hashed != nil {
				o.Hashed = string(hashed)
			}
			writeJSON(c, o)
			return
		}
		c.out.Write(canon)
		c.out.WriteByte('\n')
	}))
}
