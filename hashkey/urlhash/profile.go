package urlhash

import (
	"fmt"
	"strings"

	"github.com/urlhash/urlhash/hashkey"
)

// Profile is the url-hash identity: how a URL string becomes the canonical
// string that is hashed, and which digest hashes it. A Profile is immutable
// and safe for concurrent use.
type Profile struct {
	digest       hashkey.Digest
	dropFragment bool
}

// An Option configures a Profile made by New.
type Option func(*Profile)

// WithDigest selects the digest; the default is hashkey.SHA256.
func WithDigest(d hashkey.Digest) Option { return func(p *Profile) { p.digest = d } }

// DropFragment makes the profile remove the fragment before hashing, so that
// "page#a" and "page#b" share one identity. The url-hash specification keeps
// the fragment, and so does the default profile.
func DropFragment() Option { return func(p *Profile) { p.dropFragment = true } }

// New returns a url-hash profile with the given options applied. An option
// outside what this package defines, such as an unknown digest, is an
// error: a profile that hashed with one digest and recorded another would
// write identities no reader could check.
func New(opts ...Option) (*Profile, error) {
	p := &Profile{}
	for _, o := range opts {
		o(p)
	}
	if !p.digest.IsValid() {
		return nil, fmt.Errorf("urlhash: unknown digest %v", p.digest)
	}
	return p, nil
}

// Default is the default identity: the URL Standard serialisation hashed
// with SHA-256, fragment kept.
var Default = &Profile{}

// UnicodeVersion returns the Unicode version of the IDNA tables the
// profile maps hosts with: part of what an index records.
func (p *Profile) UnicodeVersion() string { return UnicodeVersion }

// Digest returns the profile's digest.
func (p *Profile) Digest() hashkey.Digest { return p.digest }

// DropsFragment reports whether the profile removes fragments before hashing.
func (p *Profile) DropsFragment() bool { return p.dropFragment }

// Name returns a stable description of the profile, such as
// "urlhash+sha256" or "urlhash-nofragment+url-hash-0.1.0", suitable for
// recording in an index to refuse mixing identities. ParseProfile reads it.
func (p *Profile) Name() string {
	name := "urlhash"
	if p.dropFragment {
		name += "-nofragment"
	}
	return name + "+" + p.digest.String()
}

// Canonical returns the canonical string of rawURL: its URL Standard
// serialisation, parsed with no base (and without its fragment when the
// profile drops fragments). A URL the standard rejects is a
// *hashkey.URLError naming the profile.
func (p *Profile) Canonical(rawURL string) (string, error) {
	b, err := p.AppendCanonical(nil, rawURL)
	return string(b), err
}

// AppendCanonical appends the canonical string of rawURL to dst. On error dst
// is returned unchanged.
func (p *Profile) AppendCanonical(dst []byte, rawURL string) ([]byte, error) {
	out, err := appendWHATWG(dst, rawURL, p.dropFragment)
	if err != nil {
		return dst, &hashkey.URLError{Profile: p.Name(), Input: rawURL, Err: err}
	}
	return out, nil
}

// AppendHashed appends the string whose digest is rawURL's identity: for
// this profile, the canonical string.
func (p *Profile) AppendHashed(dst []byte, rawURL string) ([]byte, error) {
	return p.AppendCanonical(dst, rawURL)
}

// Hash returns the identity of rawURL.
func (p *Profile) Hash(rawURL string) (hashkey.Hash, error) {
	var buf [256]byte
	c, err := p.AppendCanonical(buf[:0], rawURL)
	if err != nil {
		return hashkey.Hash{}, err
	}
	return p.digest.Sum(c), nil
}

// ParseProfile returns the profile whose Name is name, such as
// "urlhash+sha256" or "urlhash-nofragment+url-hash-0.1.0".
func ParseProfile(name string) (*Profile, error) {
	base, digest, ok := strings.Cut(name, "+")
	if !ok || (base != "urlhash" && base != "urlhash-nofragment") {
		return nil, fmt.Errorf("urlhash: unknown profile %q (want urlhash[-nofragment]+DIGEST)", name)
	}
	d, err := hashkey.ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	return &Profile{digest: d, dropFragment: base == "urlhash-nofragment"}, nil
}
