package hashkey

import (
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
)

// Sizes of the three identity forms, in bytes.
const (
	Size   = 32 // a full Hash: the whole SHA-256 digest
	Size16 = 16 // a Short hash: the first two little-endian words
	Size8  = 8  // a VeryShort hash: the first little-endian word
)

// Hash is a URL's full identity: the 32 digest bytes in digest order.
// Its zero value is the all-zero digest, which no URL produces in practice.
type Hash [Size]byte

// Short is the first 16 bytes of a Hash (url-hash's UrlShortHash).
type Short [Size16]byte

// VeryShort is the first 8 bytes of a Hash (url-hash's UrlVeryShortHash).
type VeryShort [Size8]byte

var (
	_ encoding.TextMarshaler     = Hash{}
	_ encoding.TextUnmarshaler   = (*Hash)(nil)
	_ encoding.TextAppender      = Hash{}
	_ encoding.BinaryMarshaler   = Hash{}
	_ encoding.BinaryUnmarshaler = (*Hash)(nil)
	_ encoding.BinaryAppender    = Hash{}
	_ encoding.TextMarshaler     = Short{}
	_ encoding.TextUnmarshaler   = (*Short)(nil)
	_ encoding.TextMarshaler     = VeryShort{}
	_ encoding.TextUnmarshaler   = (*VeryShort)(nil)
)

// Sum returns the SHA-256 digest of data as a Hash.
// It is the digest the url-hash specification names; see package
// hashkey/urlhash for the canonical string a URL is reduced to first.
func Sum(data []byte) Hash { return sha256.Sum256(data) }

// Short returns the first 16 bytes of h.
func (h Hash) Short() Short { return Short(h[:Size16]) }

// VeryShort returns the first 8 bytes of h.
func (h Hash) VeryShort() VeryShort { return VeryShort(h[:Size8]) }

// Words returns h as four unsigned 64-bit integers, each read little-endian
// from bytes 0..8, 8..16, 16..24 and 24..32: the url-hash portable numeric view.
func (h Hash) Words() [4]uint64 {
	return [4]uint64{
		binary.LittleEndian.Uint64(h[0:]),
		binary.LittleEndian.Uint64(h[8:]),
		binary.LittleEndian.Uint64(h[16:]),
		binary.LittleEndian.Uint64(h[24:]),
	}
}

// Words returns s as two little-endian unsigned 64-bit integers.
func (s Short) Words() [2]uint64 {
	return [2]uint64{binary.LittleEndian.Uint64(s[0:]), binary.LittleEndian.Uint64(s[8:])}
}

// VeryShort returns the first 8 bytes of s.
func (s Short) VeryShort() VeryShort { return VeryShort(s[:Size8]) }

// Word returns v as one little-endian unsigned 64-bit integer.
func (v VeryShort) Word() uint64 { return binary.LittleEndian.Uint64(v[:]) }

// HashFromWords is the inverse of Hash.Words.
func HashFromWords(w [4]uint64) Hash {
	var h Hash
	for i, x := range w {
		binary.LittleEndian.PutUint64(h[8*i:], x)
	}
	return h
}

// StartsWith reports whether h begins with the short hash s
// (url-hash's starts_with).
func (h Hash) StartsWith(s Short) bool { return Short(h[:Size16]) == s }

// StartsWithJust reports whether h begins with the very-short hash v
// (url-hash's starts_with_just).
func (h Hash) StartsWithJust(v VeryShort) bool { return VeryShort(h[:Size8]) == v }

// StartsWith reports whether s begins with the very-short hash v.
func (s Short) StartsWith(v VeryShort) bool { return VeryShort(s[:Size8]) == v }

// HasPrefix reports whether h begins with the bytes of p. An empty p is a
// prefix of every hash; a p longer than Size is a prefix of none.
func (h Hash) HasPrefix(p []byte) bool {
	return len(p) <= Size && string(h[:len(p)]) == string(p)
}

// String returns h as 64 lowercase hexadecimal digits.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// String returns s as 32 lowercase hexadecimal digits.
func (s Short) String() string { return hex.EncodeToString(s[:]) }

// String returns v as 16 lowercase hexadecimal digits.
func (v VeryShort) String() string { return hex.EncodeToString(v[:]) }

// Decimal returns h in the url-hash crate's display form: its four words in
// decimal, joined by '-'.
func (h Hash) Decimal() string { return string(appendDecimal(nil, h[:])) }

// Decimal returns s in the url-hash crate's display form, "w0-w1".
func (s Short) Decimal() string { return string(appendDecimal(nil, s[:])) }

// Decimal returns v in the url-hash crate's display form, "w0".
func (v VeryShort) Decimal() string { return string(appendDecimal(nil, v[:])) }

// AppendDecimal appends the decimal display form of h to b.
func (h Hash) AppendDecimal(b []byte) []byte { return appendDecimal(b, h[:]) }

func appendDecimal(b, digest []byte) []byte {
	for i := 0; i < len(digest); i += 8 {
		if i > 0 {
			b = append(b, '-')
		}
		b = strconv.AppendUint(b, binary.LittleEndian.Uint64(digest[i:]), 10)
	}
	return b
}

// AppendText implements encoding.TextAppender: lowercase hex.
func (h Hash) AppendText(b []byte) ([]byte, error) { return hex.AppendEncode(b, h[:]), nil }

// MarshalText implements encoding.TextMarshaler: lowercase hex.
func (h Hash) MarshalText() ([]byte, error) { return h.AppendText(nil) }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts every form
// ParseHash accepts.
func (h *Hash) UnmarshalText(text []byte) error {
	v, err := ParseHash(string(text))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// AppendBinary implements encoding.BinaryAppender: the 32 digest bytes.
// A digest is its own portable encoding, so no version prefix is added.
func (h Hash) AppendBinary(b []byte) ([]byte, error) { return append(b, h[:]...), nil }

// MarshalBinary implements encoding.BinaryMarshaler.
func (h Hash) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }

// UnmarshalBinary implements encoding.BinaryUnmarshaler; data must be exactly
// Size bytes.
func (h *Hash) UnmarshalBinary(data []byte) error {
	if len(data) != Size {
		return &TextError{Kind: "hash", Input: hex.EncodeToString(data), Reason: "binary form must be " + strconv.Itoa(Size) + " bytes, got " + strconv.Itoa(len(data))}
	}
	copy(h[:], data)
	return nil
}

// MarshalText implements encoding.TextMarshaler: lowercase hex.
func (s Short) MarshalText() ([]byte, error) { return hex.AppendEncode(nil, s[:]), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts every form
// ParseShort accepts.
func (s *Short) UnmarshalText(text []byte) error {
	v, err := ParseShort(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalText implements encoding.TextMarshaler: lowercase hex.
func (v VeryShort) MarshalText() ([]byte, error) { return hex.AppendEncode(nil, v[:]), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts every form
// ParseVeryShort accepts.
func (v *VeryShort) UnmarshalText(text []byte) error {
	p, err := ParseVeryShort(string(text))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// ParseHash parses a full hash from 64 hexadecimal digits (either case) or
// from the decimal display form "w0-w1-w2-w3".
func ParseHash(s string) (Hash, error) {
	var h Hash
	return h, parseDigest(h[:], "hash", s)
}

// ParseShort parses a short hash from 32 hexadecimal digits or "w0-w1".
func ParseShort(s string) (Short, error) {
	var v Short
	return v, parseDigest(v[:], "short hash", s)
}

// ParseVeryShort parses a very-short hash from 16 hexadecimal digits or "w0".
func ParseVeryShort(s string) (VeryShort, error) {
	var v VeryShort
	return v, parseDigest(v[:], "very-short hash", s)
}

// MustParseHash is ParseHash that panics on error. It is for tests and
// package-level literals only.
func MustParseHash(s string) Hash {
	h, err := ParseHash(s)
	if err != nil {
		panic(err)
	}
	return h
}

// parseDigest fills dst from hex or from decimal words. A string of exactly
// 2*len(dst) hex digits is read as hex, anything else as len(dst)/8 decimal
// words. Only a very-short hash can be ambiguous: a 16-digit decimal word is
// also 16 hex digits, and is read as hex (roughly 1 value in 2000 has 16
// decimal digits; callers that know they hold decimal use strconv.ParseUint).
func parseDigest(dst []byte, kind, s string) error {
	if len(s) == 2*len(dst) && decodeHex(dst, s) {
		return nil
	}
	words := len(dst) / 8
	if strings.Count(s, "-") != words-1 || !isDecimalWords(s) {
		return &TextError{Kind: kind, Input: s, Reason: "want " + strconv.Itoa(2*len(dst)) + " hex digits or " + strconv.Itoa(words) + " decimal words joined by '-'"}
	}
	rest := s
	for i := range words {
		var part string
		part, rest, _ = strings.Cut(rest, "-") // (Split would allocate)
		w, err := strconv.ParseUint(part, 10, 64)
		if err != nil {
			return &TextError{Kind: kind, Input: s, Reason: "word " + strconv.Itoa(i) + " is not an unsigned 64-bit decimal"}
		}
		binary.LittleEndian.PutUint64(dst[8*i:], w)
	}
	return nil
}

func isDecimalWords(s string) bool {
	if s == "" {
		return false
	}
	prev := byte('-')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' {
			if prev == '-' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
		prev = c
	}
	return prev != '-'
}
