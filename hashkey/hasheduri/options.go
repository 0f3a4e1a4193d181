package hasheduri

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding"
	"fmt"
	"strings"
)

// Alg is a hash algorithm of the hashed URI scheme. The zero value is not
// an algorithm; Generate and URI.Match reject it.
type Alg uint8

const (
	// MD5 is "md5" in the draft's registry: 16-byte digests.
	MD5 Alg = iota + 1
	// SHA1 is "sha1" in the draft's registry: 20-byte digests. The draft
	// requires every interpreter to accept it.
	SHA1
	// SHA256 is SHA-256, outside the draft's registry, so generated under
	// the private-use identifier "x-sha256" (draft §4.2); "sha256" is
	// accepted when parsing. 32-byte digests.
	SHA256
)

// maxSize is the largest digest size of any Alg.
const maxSize = sha256.Size

var (
	_ encoding.TextMarshaler   = Alg(0)
	_ encoding.TextUnmarshaler = (*Alg)(nil)
)

// String returns the identifier that Generate writes: "md5", "sha1" or
// "x-sha256".
func (a Alg) String() string {
	switch a {
	case MD5:
		return "md5"
	case SHA1:
		return "sha1"
	case SHA256:
		return "x-sha256"
	}
	return fmt.Sprintf("Alg(%d)", uint8(a))
}

// Size returns the length in bytes of a's digests, or 0 if a is not an
// algorithm.
func (a Alg) Size() int {
	switch a {
	case MD5:
		return md5.Size
	case SHA1:
		return sha1.Size
	case SHA256:
		return sha256.Size
	}
	return 0
}

// IsValid reports whether a is one of MD5, SHA1 and SHA256.
func (a Alg) IsValid() bool { return a.Size() != 0 }

// sum writes the digest of data into out and returns its length. a must be
// valid.
func (a Alg) sum(out *[maxSize]byte, data []byte) int {
	switch a {
	case MD5:
		s := md5.Sum(data)
		return copy(out[:], s[:])
	case SHA1:
		s := sha1.Sum(data)
		return copy(out[:], s[:])
	case SHA256:
		*out = sha256.Sum256(data)
		return sha256.Size
	}
	return 0
}

// ParseAlg returns the algorithm named s, ignoring case: "md5", "sha1",
// "x-sha256" or "sha256". Any other name yields a *ParseError wrapping
// ErrUnknownAlgorithm.
func ParseAlg(s string) (Alg, error) {
	if a, ok := lookupAlg(s); ok {
		return a, nil
	}
	return 0, &ParseError{Kind: "algorithm", Input: s, Err: fmt.Errorf("%w (want md5, sha1 or x-sha256)", ErrUnknownAlgorithm)}
}

func lookupAlg(s string) (Alg, bool) {
	switch {
	case strings.EqualFold(s, "md5"):
		return MD5, true
	case strings.EqualFold(s, "sha1"):
		return SHA1, true
	case strings.EqualFold(s, "x-sha256"), strings.EqualFold(s, "sha256"):
		return SHA256, true
	}
	return 0, false
}

// MarshalText implements encoding.TextMarshaler with String. It fails for
// an invalid Alg.
func (a Alg) MarshalText() ([]byte, error) {
	if !a.IsValid() {
		return nil, fmt.Errorf("%w: %v", ErrUnknownAlgorithm, a)
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseAlg.
func (a *Alg) UnmarshalText(text []byte) error {
	v, err := ParseAlg(string(text))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// Keep says which of the fragment and the query step 1 of draft §4.3
// keeps. Its bits are KeepFrag and KeepQuery; the zero value, KeepNone,
// drops both.
type Keep uint8

const (
	// KeepNone drops both the fragment and the query.
	KeepNone Keep = 0
	// KeepFrag keeps the fragment; the hashed URI carries "+frag".
	KeepFrag Keep = 1 << 0
	// KeepQuery keeps the query; the hashed URI carries "+query".
	KeepQuery Keep = 1 << 1
	// KeepBoth keeps the fragment and the query.
	KeepBoth = KeepFrag | KeepQuery
)

// String returns "none", "frag", "query" or "both".
func (k Keep) String() string {
	switch k {
	case KeepNone:
		return "none"
	case KeepFrag:
		return "frag"
	case KeepQuery:
		return "query"
	case KeepBoth:
		return "both"
	}
	return fmt.Sprintf("Keep(%d)", uint8(k))
}

// IsValid reports whether k has no bits other than KeepFrag and KeepQuery.
func (k Keep) IsValid() bool { return k&^KeepBoth == 0 }

// ParseKeep returns the Keep named s, ignoring case: "none", "frag",
// "query" or "both". Any other name yields a *ParseError wrapping
// ErrUnknownKeep.
func ParseKeep(s string) (Keep, error) {
	switch {
	case strings.EqualFold(s, "none"):
		return KeepNone, nil
	case strings.EqualFold(s, "frag"):
		return KeepFrag, nil
	case strings.EqualFold(s, "query"):
		return KeepQuery, nil
	case strings.EqualFold(s, "both"):
		return KeepBoth, nil
	}
	return 0, &ParseError{Kind: "keep setting", Input: s, Err: fmt.Errorf("%w (want none, frag, query or both)", ErrUnknownKeep)}
}

// Variant is a variant of the canonicalisation of draft Appendix A. The
// zero value is N, the default.
type Variant uint8

const (
	// N tends towards false negatives: only the scheme and host are
	// lowercased and the path keeps its empty segments and extensions.
	N Variant = iota
	// P tends towards false positives: everything is lowercased, empty
	// path segments are dropped and .html, .jpeg, .text and .ram become
	// .htm, .jpg, .txt and .ra.
	P
)

// String returns "N" or "P".
func (v Variant) String() string {
	switch v {
	case N:
		return "N"
	case P:
		return "P"
	}
	return fmt.Sprintf("Variant(%d)", uint8(v))
}

// IsValid reports whether v is N or P.
func (v Variant) IsValid() bool { return v == N || v == P }

// ParseVariant returns the Variant named s, ignoring case: "n" or "p". Any
// other name yields a *ParseError wrapping ErrUnknownVariant.
func ParseVariant(s string) (Variant, error) {
	switch {
	case strings.EqualFold(s, "n"):
		return N, nil
	case strings.EqualFold(s, "p"):
		return P, nil
	}
	return 0, &ParseError{Kind: "variant", Input: s, Err: fmt.Errorf("%w (want n or p)", ErrUnknownVariant)}
}
