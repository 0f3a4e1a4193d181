package safebrowsing

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
)

// Lengths of a hash prefix, in bytes. Web Risk lists use 4 to 32 bytes;
// Safe Browsing v5 searches send 4 and its lists hold 4, 8, 16 or 32.
const (
	MinPrefixLen = 4
	MaxPrefixLen = hashkey.Size
)

// Prefix returns the first n bytes of h, the n-byte hash prefix of the
// expression h is the hash of. An n outside MinPrefixLen..MaxPrefixLen is
// an error wrapping ErrPrefixLength.
func Prefix(h hashkey.Hash, n int) ([]byte, error) {
	return AppendPrefix(nil, h, n)
}

// AppendPrefix appends the first n bytes of h to dst. An n outside
// MinPrefixLen..MaxPrefixLen is an error wrapping ErrPrefixLength, and dst
// is returned unchanged.
func AppendPrefix(dst []byte, h hashkey.Hash, n int) ([]byte, error) {
	if n < MinPrefixLen || n > MaxPrefixLen {
		return dst, fmt.Errorf("%w: got %d", ErrPrefixLength, n)
	}
	return append(dst, h[:n]...), nil
}
