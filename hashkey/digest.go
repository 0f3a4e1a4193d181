package hashkey

import (
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
)

// Digest names the function that turns a canonical string into a Hash.
type Digest uint8

const (
	// SHA256 is SHA-256 of the canonical string: the url-hash
	// specification's digest and the default.
	SHA256 Digest = iota
	// TruncatedSHA384 is the first 32 bytes of SHA-384 of the canonical
	// string. The published url-hash crate 0.1.0 computes this while
	// documenting SHA-256; use it only to read identities written by that
	// crate. Its name in text is "url-hash-0.1.0".
	TruncatedSHA384
)

// String returns the digest's name as the CLI and index metadata spell it:
// "sha256" or "url-hash-0.1.0".
func (d Digest) String() string {
	switch d {
	case SHA256:
		return "sha256"
	case TruncatedSHA384:
		return "url-hash-0.1.0"
	}
	return fmt.Sprintf("Digest(%d)", uint8(d))
}

// IsValid reports whether d is one of the digests this package defines.
func (d Digest) IsValid() bool { return d == SHA256 || d == TruncatedSHA384 }

// ParseDigest returns the Digest named s ("sha256" or "url-hash-0.1.0").
func ParseDigest(s string) (Digest, error) {
	switch s {
	case "sha256":
		return SHA256, nil
	case "url-hash-0.1.0":
		return TruncatedSHA384, nil
	}
	return 0, fmt.Errorf("hashkey: unknown digest %q (want sha256 or url-hash-0.1.0)", s)
}

// Sum returns the digest of the canonical string s. An invalid Digest
// (see IsValid) is a caller's mistake that profiles refuse at construction;
// Sum treats it as SHA256.
func (d Digest) Sum(s []byte) Hash {
	if d == TruncatedSHA384 {
		full := sha512.Sum384(s)
		return Hash(full[:Size])
	}
	return sha256.Sum256(s)
}
