package wire

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// HeaderIdempotencyKey is the request header that makes a write
// exactly-once.
const HeaderIdempotencyKey = "Idempotency-Key"

// MaxKeyLen is the longest idempotency key, in bytes.
const MaxKeyLen = 255

// ErrKey is returned, wrapped, for a malformed Idempotency-Key.
var ErrKey = errors.New("wire: bad idempotency key")

// ParseKey returns the key an Idempotency-Key header value carries: a
// Structured Field string ("..." with \" and \\ escapes, as the IETF draft
// writes it) or a bare token of visible ASCII. An empty, longer than
// MaxKeyLen or malformed value is an error wrapping ErrKey.
func ParseKey(v string) (string, error) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, `"`) {
		var b strings.Builder
		i := 1
		for ; i < len(v) && v[i] != '"'; i++ {
			c := v[i]
			if c == '\\' {
				if i++; i == len(v) || v[i] != '"' && v[i] != '\\' {
					return "", fmt.Errorf("%w: %q: bad escape", ErrKey, v)
				}
				c = v[i]
			}
			b.WriteByte(c)
		}
		if i != len(v)-1 {
			return "", fmt.Errorf("%w: %q: unterminated or trailing bytes", ErrKey, v)
		}
		v = b.String()
	}
	if v == "" || len(v) > MaxKeyLen {
		return "", fmt.Errorf("%w: %d bytes, want 1..%d", ErrKey, len(v), MaxKeyLen)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "", fmt.Errorf("%w: %q: byte %d is not printable ASCII", ErrKey, v, i)
		}
	}
	return v, nil
}

// FormatKey returns the header value for key: a Structured Field string.
func FormatKey(key string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(key) + `"`
}

// NewKey returns a fresh random key: 128 bits in hex.
func NewKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RequestDigest returns the fingerprint a repeat of a key must match: the
// SHA-256 of the method, path and raw query, each length-prefixed, then
// the body. In the query, revisit_after is written as its alias after
// (ParamRevisitAfterAlias): a repeat is the same request under either
// name, and matches the answers servers kept when /v1/visit read only
// after.
func RequestDigest(method, path, rawQuery string, body []byte) [sha256.Size]byte {
	return sum(NewRequestDigest(method, path, rawQuery), body)
}

// NewRequestDigest returns RequestDigest's hash with the method, path and
// query written: write the body to it, as it streams.
func NewRequestDigest(method, path, rawQuery string) hash.Hash {
	return newDigest(method, path, aliasRevisit(rawQuery))
}

// RequestDigestAsSent is RequestDigest of the query as sent, revisit_after
// not written as after: the fingerprint servers kept before the alias for
// /v1/urls/add?revisit_after=... (which then read only that name). A
// server matches a repeat against it too, so that an answer kept before
// an upgrade (for a day, by default) still answers its repeat.
func RequestDigestAsSent(method, path, rawQuery string, body []byte) [sha256.Size]byte {
	return sum(newDigest(method, path, rawQuery), body)
}

// sum returns h's SHA-256 with body written.
func sum(h hash.Hash, body []byte) [sha256.Size]byte {
	h.Write(body)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// newDigest returns a SHA-256 with method, path and query written, each
// length-prefixed.
func newDigest(method, path, query string) hash.Hash {
	h := sha256.New()
	var n [8]byte
	for _, part := range []string{method, path, query} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		io.WriteString(h, part)
	}
	return h
}

// aliasRevisit returns rawQuery with each revisit_after parameter named
// after, its alias; the rest as it is.
func aliasRevisit(rawQuery string) string {
	if !strings.Contains(rawQuery, ParamRevisitAfter+"=") {
		return rawQuery
	}
	parts := strings.Split(rawQuery, "&")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, ParamRevisitAfter+"="); ok {
			parts[i] = ParamRevisitAfterAlias + "=" + v
		}
	}
	return strings.Join(parts, "&")
}
