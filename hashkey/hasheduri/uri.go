package hasheduri

import (
	"bytes"
	"crypto/subtle"
	"encoding"
	"encoding/hex"
	"fmt"
	"strings"
)

// URI is a hashed URI, hashed:ALG=HEX[+frag][+query]. A URI returned by
// Parse or Generate is valid: Alg is an algorithm and Digest has its size.
type URI struct {
	Alg    Alg    // the hash algorithm
	Digest []byte // the digest, Alg.Size() bytes
	Frag   bool   // "+frag": the fragment was kept before hashing
	Query  bool   // "+query": the query was kept before hashing
}

var (
	_ encoding.TextAppender    = URI{}
	_ encoding.TextMarshaler   = URI{}
	_ encoding.TextUnmarshaler = (*URI)(nil)
)

const scheme = "hashed:"

// Keep returns the Keep that u's flags stand for.
func (u URI) Keep() Keep {
	var k Keep
	if u.Frag {
		k |= KeepFrag
	}
	if u.Query {
		k |= KeepQuery
	}
	return k
}

// IsValid reports whether u's algorithm is known and its digest has that
// algorithm's size.
func (u URI) IsValid() bool { return u.Alg.IsValid() && len(u.Digest) == u.Alg.Size() }

// Equal reports whether u and v have the same algorithm, digest and flags.
func (u URI) Equal(v URI) bool {
	return u.Alg == v.Alg && bytes.Equal(u.Digest, v.Digest) && u.Frag == v.Frag && u.Query == v.Query
}

// String returns u as hashed:ALG=HEX[+frag][+query] with the algorithm's
// generating identifier (md5, sha1, x-sha256) and lowercase hex.
func (u URI) String() string {
	b, _ := u.AppendText(make([]byte, 0, len(scheme)+len("x-sha256=")+2*len(u.Digest)+len("+frag+query")))
	return string(b)
}

// AppendText appends u.String() to b. It never fails; it implements
// encoding.TextAppender.
func (u URI) AppendText(b []byte) ([]byte, error) {
	b = append(b, scheme...)
	b = append(b, u.Alg.String()...)
	b = append(b, '=')
	b = hex.AppendEncode(b, u.Digest)
	if u.Frag {
		b = append(b, "+frag"...)
	}
	if u.Query {
		b = append(b, "+query"...)
	}
	return b, nil
}

// MarshalText implements encoding.TextMarshaler. It fails for a URI that
// is not valid.
func (u URI) MarshalText() ([]byte, error) {
	if err := u.check(); err != nil {
		return nil, err
	}
	return u.AppendText(nil)
}

// UnmarshalText implements encoding.TextUnmarshaler with Parse.
func (u *URI) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// check returns an error wrapping ErrUnknownAlgorithm or ErrDigestLength
// if u is not valid.
func (u URI) check() error {
	if !u.Alg.IsValid() {
		return fmt.Errorf("%w: %v", ErrUnknownAlgorithm, u.Alg)
	}
	if len(u.Digest) != u.Alg.Size() {
		return fmt.Errorf("%w: %d bytes for %v, want %d", ErrDigestLength, len(u.Digest), u.Alg, u.Alg.Size())
	}
	return nil
}

// Parse parses a hashed URI (draft §4.1), ignoring case throughout:
//
//	hashed-uri = "hashed" ":" hash-algorithm "=" 1*HEXDIG *( "+frag" / "+query" )
//
// The algorithm must be md5, sha1, x-sha256 or sha256 and the hex value
// must have exactly that algorithm's digest length. Each flag may appear
// once, in either order. Failures are a *ParseError wrapping ErrSyntax,
// ErrUnknownAlgorithm, ErrHex, ErrDigestLength, ErrUnknownFlag or
// ErrDuplicateFlag.
func Parse(s string) (URI, error) {
	u, err := parse(s)
	if err != nil {
		return URI{}, &ParseError{Kind: "hashed uri", Input: s, Err: err}
	}
	return u, nil
}

func parse(s string) (URI, error) {
	if len(s) < len(scheme) || !strings.EqualFold(s[:len(scheme)], scheme) {
		return URI{}, fmt.Errorf("%w: want the scheme %q", ErrSyntax, scheme)
	}
	rest := s[len(scheme):]
	id, rest, ok := strings.Cut(rest, "=")
	if !ok {
		return URI{}, fmt.Errorf("%w: no \"=\" after the algorithm", ErrSyntax)
	}
	if !isIdentifier(id) {
		return URI{}, fmt.Errorf("%w: algorithm identifier %q is not 1*(ALPHA / DIGIT / \".\" / \"-\")", ErrSyntax, id)
	}
	alg, ok := lookupAlg(id)
	if !ok {
		return URI{}, fmt.Errorf("%w %q (want md5, sha1 or x-sha256)", ErrUnknownAlgorithm, id)
	}
	value, flags, _ := strings.Cut(rest, "+")
	if value == "" {
		return URI{}, fmt.Errorf("%w: empty hash value", ErrHex)
	}
	for i := 0; i < len(value); i++ {
		if !isHex(value[i]) {
			return URI{}, fmt.Errorf("%w: %q at offset %d is not a hex digit", ErrHex, value[i:i+1], i)
		}
	}
	if len(value) != 2*alg.Size() {
		return URI{}, fmt.Errorf("%w: %d hex digits for %v, want %d", ErrDigestLength, len(value), alg, 2*alg.Size())
	}
	u := URI{Alg: alg, Digest: make([]byte, alg.Size())}
	if _, err := hex.Decode(u.Digest, []byte(value)); err != nil {
		// Unreachable: every byte was checked above.
		return URI{}, fmt.Errorf("%w: %v", ErrHex, err)
	}
	if len(value) == len(rest) {
		return u, nil
	}
	// flags is what follows the first "+": "frag", "query", "frag+query"...
	for _, f := range strings.Split(flags, "+") {
		var seen *bool
		switch {
		case strings.EqualFold(f, "frag"):
			seen = &u.Frag
		case strings.EqualFold(f, "query"):
			seen = &u.Query
		default:
			return URI{}, fmt.Errorf("%w %q (want +frag or +query)", ErrUnknownFlag, "+"+f)
		}
		if *seen {
			return URI{}, fmt.Errorf("%w %q", ErrDuplicateFlag, "+"+f)
		}
		*seen = true
	}
	return u, nil
}

// isIdentifier reports whether s matches identifier = 1*(ALPHA / DIGIT /
// "." / "-").
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !isDigit(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// Generate returns the hashed URI of rawURL (draft §4.3): step 1 drops the
// fragment and the query unless keep keeps them, step 2 canonicalises with
// Appendix A variant v (see Canonical), step 3 hashes with alg, and the
// flags record keep. The flags follow keep even when rawURL has no
// fragment or query, so that Match does not drop a component the
// publisher meant to hash.
//
// An invalid alg, keep or v is an error wrapping ErrUnknownAlgorithm,
// ErrUnknownKeep or ErrUnknownVariant; a URL that cannot be canonicalised
// is a *URLError.
func Generate(rawURL string, alg Alg, keep Keep, v Variant) (URI, error) {
	if !alg.IsValid() {
		return URI{}, fmt.Errorf("%w: %v", ErrUnknownAlgorithm, alg)
	}
	var sum [maxSize]byte
	n, err := hashURL(&sum, rawURL, alg, keep, v)
	if err != nil {
		return URI{}, err
	}
	return URI{
		Alg:    alg,
		Digest: append([]byte(nil), sum[:n]...),
		Frag:   keep&KeepFrag != 0,
		Query:  keep&KeepQuery != 0,
	}, nil
}

// Match reports whether rawURL matches u: rawURL keeps the components that
// u's flags name, is canonicalised with variant v and hashed with u's
// algorithm, and the digests are compared in constant time. The variant is
// not recorded in a hashed URI; use the one the publisher used.
//
// A URI that is not valid is an error wrapping ErrUnknownAlgorithm or
// ErrDigestLength; a URL that cannot be canonicalised is a *URLError.
func (u URI) Match(rawURL string, v Variant) (bool, error) {
	if err := u.check(); err != nil {
		return false, err
	}
	var sum [maxSize]byte
	n, err := hashURL(&sum, rawURL, u.Alg, u.Keep(), v)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(sum[:n], u.Digest) == 1, nil
}

// hashURL canonicalises rawURL and writes its digest under alg into sum,
// returning the digest's length.
func hashURL(sum *[maxSize]byte, rawURL string, alg Alg, keep Keep, v Variant) (int, error) {
	var buf [256]byte
	canon, err := appendCanonical(buf[:0], rawURL, keep, v)
	if err != nil {
		return 0, err
	}
	return alg.sum(sum, canon), nil
}
