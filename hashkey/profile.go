package hashkey

import (
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"strings"
)

// Digest names the function that turns a canonical URL string into a Hash.
type Digest uint8

const (
	// SHA256 is SHA-256 of the canonical string: the url-hash
	// specification's digest and the default.
	SHA256 Digest = iota
	// URLHash010 is the first 32 bytes of SHA-384 of the canonical string.
	// The published url-hash crate 0.1.0 computes this while documenting
	// SHA-256; use it only to read identities written by that crate.
	URLHash010
)

// String returns the digest's name as the CLI spells it.
func (d Digest) String() string {
	switch d {
	case SHA256:
		return "sha256"
	case URLHash010:
		return "url-hash-0.1.0"
	}
	return fmt.Sprintf("Digest(%d)", uint8(d))
}

// ParseDigest returns the Digest named s ("sha256" or "url-hash-0.1.0").
func ParseDigest(s string) (Digest, error) {
	switch s {
	case "sha256":
		return SHA256, nil
	case "url-hash-0.1.0":
		return URLHash010, nil
	}
	return 0, fmt.Errorf("hashkey: unknown digest %q (want sha256 or url-hash-0.1.0)", s)
}

// Sum returns the digest of the canonical string s.
func (d Digest) Sum(s []byte) Hash {
	if d == URLHash010 {
		full := sha512.Sum384(s)
		return Hash(full[:Size])
	}
	return sha256.Sum256(s)
}

// Profile is the url-hash identity: how a URL string becomes the canonical
// string that is hashed, and which digest hashes it. A Profile is immutable
// and safe for concurrent use.
type Profile struct {
	digest       Digest
	dropFragment bool
}

// An Option configures a Profile made by New.
type Option func(*Profile)

// WithDigest selects the digest; the default is SHA256.
func WithDigest(d Digest) Option { return func(p *Profile) { p.digest = d } }

// DropFragment makes the profile remove the fragment before hashing, so that
// "page#a" and "page#b" share one identity. The url-hash specification keeps
// the fragment, and so does the default profile.
func DropFragment() Option { return func(p *Profile) { p.dropFragment = true } }

// New returns a url-hash profile with the given options applied.
func New(opts ...Option) *Profile {
	p := &Profile{}
	for _, o := range opts {
		o(p)
	}
	return p
}

// URLHash is the default identity: the URL Standard serialisation hashed with
// SHA-256, fragment kept.
var URLHash = New()

// Digest returns the profile's digest.
func (p *Profile) Digest() Digest { return p.digest }

// DropsFragment reports whether the profile removes fragments before hashing.
func (p *Profile) DropsFragment() bool { return p.dropFragment }

// Name returns a stable description of the profile, such as
// "urlhash+sha256" or "urlhash-nofragment+url-hash-0.1.0", suitable for
// recording in an index to refuse mixing identities.
func (p *Profile) Name() string {
	name := "urlhash"
	if p.dropFragment {
		name += "-nofragment"
	}
	return name + "+" + p.digest.String()
}

// Canonical returns the canonical string of rawURL: its URL Standard
// serialisation, parsed with no base (and without its fragment when the
// profile drops fragments). A URL the standard rejects is a *URLError.
func (p *Profile) Canonical(rawURL string) (string, error) {
	b, err := p.AppendCanonical(nil, rawURL)
	return string(b), err
}

// AppendCanonical appends the canonical string of rawURL to dst. On error dst
// is returned unchanged.
func (p *Profile) AppendCanonical(dst []byte, rawURL string) ([]byte, error) {
	out, err := appendWHATWG(dst, rawURL, p.dropFragment)
	if err != nil {
		return dst, &URLError{Profile: "urlhash", Input: rawURL, Err: err}
	}
	return out, nil
}

// Hash returns the identity of rawURL.
func (p *Profile) Hash(rawURL string) (Hash, error) {
	var buf [256]byte
	c, err := p.AppendCanonical(buf[:0], rawURL)
	if err != nil {
		return Hash{}, err
	}
	return p.digest.Sum(c), nil
}

// ParseProfile returns the profile whose Name is name, such as
// "urlhash+sha256" or "urlhash-nofragment+url-hash-0.1.0".
func ParseProfile(name string) (*Profile, error) {
	base, digest, ok := strings.Cut(name, "+")
	if !ok {
		return nil, fmt.Errorf("hashkey: unknown profile %q (want urlhash[-nofragment]+DIGEST)", name)
	}
	d, err := ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	switch base {
	case "urlhash":
		return New(WithDigest(d)), nil
	case "urlhash-nofragment":
		return New(WithDigest(d), DropFragment()), nil
	}
	return nil, fmt.Errorf("hashkey: unknown profile %q (want urlhash[-nofragment]+DIGEST)", name)
}
