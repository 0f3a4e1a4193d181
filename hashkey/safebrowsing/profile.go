package safebrowsing

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/internal/uts46"
)

// hostRule selects how host suffixes are chosen for expressions.
type hostRule uint8

const (
	lastFive hostRule = iota // Web Risk and Safe Browsing v4: the last five components
	fromETLD                 // Safe Browsing v5: from the eTLD+1 of the Public Suffix List
)

// A Profile is one set of Safe Browsing rules: how a URL is canonicalised and
// which host-suffix/path-prefix expressions it expands to. The two profiles
// are the ready-made values WebRisk and V5. A Profile is immutable and safe
// for concurrent use.
type Profile struct {
	name string
	rule hostRule
	ipv6 bool // normalise bracketed IPv6 literals; IPv4-mapped and NAT64 become IPv4
}

var (
	// WebRisk is the profile of Google Web Risk and Safe Browsing v4:
	// canonicalisation as in "URLs and Hashing", hosts from the last five
	// host components. Its name is "webrisk".
	WebRisk = &Profile{name: "webrisk", rule: lastFive}

	// V5 is the profile of Safe Browsing v5: canonicalisation as WebRisk
	// plus IPv6 normalisation (IPv4-mapped and NAT64 64:ff9b::/96 addresses
	// become IPv4), hosts from the eTLD+1 of the Public Suffix List. Its name
	// is "safebrowsing-v5".
	V5 = &Profile{name: "safebrowsing-v5", rule: fromETLD, ipv6: true}
)

// ParseProfile returns the profile named name: "webrisk" or
// "safebrowsing-v5". Any other name is an error wrapping ErrUnknownProfile.
func ParseProfile(name string) (*Profile, error) {
	switch name {
	case WebRisk.name:
		return WebRisk, nil
	case V5.name:
		return V5, nil
	}
	return nil, fmt.Errorf("%w %q (want webrisk or safebrowsing-v5)", ErrUnknownProfile, name)
}

// Name returns the profile's name as the CLI spells it: "webrisk" or
// "safebrowsing-v5".
func (p *Profile) Name() string { return p.name }

// UnicodeVersion returns the Unicode version of the IDNA tables the
// profile converts internationalised hosts with: part of what an index
// records.
func (p *Profile) UnicodeVersion() string { return uts46.UnicodeVersion }

// Canonical returns the canonical form of the URL raw. raw may hold any
// bytes, not necessarily UTF-8. A URL that is not a web URL is a
// *hashkey.URLError wrapping ErrNoHost or ErrNotWeb (and through them
// hashkey.ErrUnsupportedURL).
func (p *Profile) Canonical(raw string) (string, error) {
	var buf [256]byte
	b, err := p.AppendCanonical(buf[:0], raw)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AppendCanonical appends the canonical form of raw to dst and returns the
// extended buffer. The spare capacity of dst is used as scratch: with room
// for the unescaped input plus the canonical URL (5 times the length of raw
// plus 32 bytes always suffices) it allocates nothing, except for hosts that
// need IDN or IPv6 processing. On error dst is returned unchanged.
func (p *Profile) AppendCanonical(dst []byte, raw string) ([]byte, error) {
	out, _, err := p.appendCanonical(dst, raw)
	if err != nil {
		return dst, p.urlError(raw, err)
	}
	return out, nil
}

// AppendHashed appends the string whose SHA-256 is raw's identity under
// this profile: its exact expression, the canonical host, path and query
// without scheme (what a Safe Browsing list entry for exactly this URL
// holds). On error dst is returned unchanged.
func (p *Profile) AppendHashed(dst []byte, raw string) ([]byte, error) {
	var b Buffer
	if err := p.Expand(&b, raw); err != nil {
		return dst, err
	}
	return append(dst, b.Expression(0)...), nil
}

// Hash returns raw's identity under this profile: the SHA-256 of its exact
// expression (see AppendHashed), the hash a list stores for exactly this
// URL. Hashes returns the hashes of all its expressions.
func (p *Profile) Hash(raw string) (hashkey.Hash, error) {
	var scratch [512]byte
	b := Buffer{buf: scratch[:0]}
	if err := p.Expand(&b, raw); err != nil {
		return hashkey.Hash{}, err
	}
	return b.Hash(0), nil
}

// Expressions returns the canonical form of raw and its host-suffix/
// path-prefix expressions, at most MaxExpressions of them, in the order of
// the documents' examples: for each host from the exact host to the
// shortest suffix, the exact path with query, the exact path, then the
// path prefixes from the root. Every expression is distinct.
func (p *Profile) Expressions(raw string) (canonical string, exprs []string, err error) {
	var b Buffer
	if err := p.Expand(&b, raw); err != nil {
		return "", nil, err
	}
	canonical = string(b.Canonical())
	exprs = make([]string, b.n)
	for i := range exprs {
		s := b.spans[i]
		exprs[i] = canonical[s.lo:s.hi]
	}
	return canonical, exprs, nil
}

// An Expression is one host-suffix/path-prefix expression of a URL and its
// SHA-256 hash.
type Expression struct {
	Expr string       // the expression, such as "b.c/1/"
	Hash hashkey.Hash // SHA-256 of Expr
}

// Hashes returns the expressions of raw, in the order of Expressions, each
// with its SHA-256 hash.
func (p *Profile) Hashes(raw string) ([]Expression, error) {
	var b Buffer
	if err := p.Expand(&b, raw); err != nil {
		return nil, err
	}
	canonical := string(b.Canonical())
	out := make([]Expression, b.n)
	for i := range out {
		s := b.spans[i]
		out[i] = Expression{Expr: canonical[s.lo:s.hi], Hash: b.Hash(i)}
	}
	return out, nil
}

func (p *Profile) urlError(raw string, err error) error {
	return &hashkey.URLError{Profile: p.name, Input: raw, Err: err}
}
