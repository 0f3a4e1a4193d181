// Package iri is the identity of an RDF term: the SHA-256 of an IRI exactly
// as written, after checking that it is an absolute IRI by RFC 3987.
//
// RDF 1.1 compares IRIs character by character (RDF 1.1 Concepts, 3.2):
// <HTTP://EXAMPLE.ORG:80/~bob/> and <http://example.org/~bob/> are two
// terms, so a graph store's IRI cache must not merge them as the URL
// profiles do. This profile hashes the UTF-8 bytes of the IRI unchanged; it
// only refuses text that is not an IRI, so that a malformed term is an
// error rather than an identity.
//
// # Validation
//
// The input must be valid UTF-8 and match RFC 3987's IRI production: a
// scheme, ':', a hierarchical part (an authority after "//", with userinfo,
// a host — reg-name, IPv4, a bracketed IPv6 address or IPvFuture — and a
// decimal port), an optional query and an optional fragment. Characters
// outside the grammar (spaces, controls, '<', '>', '"', '{', '}', '|', '\',
// '^', '`', a '%' not followed by two hex digits, or a code point outside
// ucschar and iprivate) are errors. Nothing is normalised: case, escapes
// and default ports are kept as written. A relative reference is refused;
// RDF requires absolute IRIs (a fragment is allowed).
package iri

import (
	"errors"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/urlhash/urlhash/hashkey"
)

// Profile is the iri identity. Its zero value is ready to use; IRI is the
// ready-made value. A Profile is immutable and safe for concurrent use.
type Profile struct{}

// IRI is the iri profile, named "iri".
var IRI = &Profile{}

var _ hashkey.Profile = IRI

// Name returns "iri".
func (*Profile) Name() string { return "iri" }

// Canonical returns raw unchanged when it is an absolute IRI, else a
// *hashkey.URLError naming the profile, the input and the reason.
func (p *Profile) Canonical(raw string) (string, error) {
	if err := Check(raw); err != nil {
		return "", &hashkey.URLError{Profile: p.Name(), Input: raw, Err: err}
	}
	return raw, nil
}

// AppendHashed appends raw to dst when it is an absolute IRI: the string
// whose SHA-256 is its identity. On error dst is returned unchanged.
func (p *Profile) AppendHashed(dst []byte, raw string) ([]byte, error) {
	if err := Check(raw); err != nil {
		return dst, &hashkey.URLError{Profile: p.Name(), Input: raw, Err: err}
	}
	return append(dst, raw...), nil
}

// Hash returns the SHA-256 of raw's UTF-8 bytes when it is an absolute IRI.
func (p *Profile) Hash(raw string) (hashkey.Hash, error) {
	if err := Check(raw); err != nil {
		return hashkey.Hash{}, &hashkey.URLError{Profile: p.Name(), Input: raw, Err: err}
	}
	return hashkey.Sum([]byte(raw)), nil
}

// Reasons an IRI is refused; Check wraps them with the position.
var (
	ErrNoScheme  = errors.New("no scheme: not an absolute IRI")
	ErrInvalid   = errors.New("character not allowed")
	ErrUTF8      = errors.New("invalid UTF-8")
	ErrEscape    = errors.New("'%' not followed by two hex digits")
	ErrHost      = errors.New("invalid host")
	ErrPort      = errors.New("invalid port")
	ErrAuthority = errors.New("invalid authority")
)

// Error is a reason with the byte offset where the IRI goes wrong.
type Error struct {
	At  int   // byte offset into the input
	Err error // one of the Err values of this package
}

func (e *Error) Error() string { return e.Err.Error() + " at byte " + itoa(e.At) }

// Unwrap returns the reason.
func (e *Error) Unwrap() error { return e.Err }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// Check reports whether s is an absolute IRI by RFC 3987 (fragment
// allowed), as an *Error giving the reason and position, or nil. It takes
// time linear in len(s).
func Check(s string) error {
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !isAlpha(s[0]) {
		return &Error{0, ErrNoScheme}
	}
	for i := 1; i < colon; i++ {
		c := s[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return &Error{i, ErrNoScheme}
		}
	}
	rest, at := s[colon+1:], colon+1
	// The fragment and the query end where the next delimiter starts.
	frag, hasFrag := "", false
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, frag, hasFrag = rest[:i], rest[i+1:], true
	}
	query, hasQuery := "", false
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query, hasQuery = rest[:i], rest[i+1:], true
	}
	if strings.HasPrefix(rest, "//") {
		auth := rest[2:]
		path := ""
		if i := strings.IndexByte(auth, '/'); i >= 0 {
			auth, path = auth[:i], auth[i:]
		}
		if err := checkAuthority(auth, at+2); err != nil {
			return err
		}
		at += 2 + len(auth)
		rest = path
	}
	// Every path form is a run of ipchar and '/' here: a rootless or
	// absolute path cannot start with "//" (that is an authority), and
	// isegment-nz holds any ipchar.
	if err := checkRun(rest, at, classPath); err != nil {
		return err
	}
	at += len(rest)
	if hasQuery {
		if err := checkRun(query, at+1, classQuery); err != nil {
			return err
		}
		at += 1 + len(query)
	}
	if hasFrag {
		if err := checkRun(frag, at+1, classFragment); err != nil {
			return err
		}
	}
	return nil
}

// Character classes of checkRun.
const (
	classUserinfo = iota // iunreserved / pct-encoded / sub-delims / ":"
	classRegName         // iunreserved / pct-encoded / sub-delims
	classPath            // ipchar / "/"
	classQuery           // ipchar / iprivate / "/" / "?"
	classFragment        // ipchar / "/" / "?"
)

// checkRun checks that s (which starts at byte offset at of the input) is
// made of the class's characters.
func checkRun(s string, at, class int) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				return &Error{at + i, ErrUTF8}
			}
			if !isUCSChar(r) && !(class == classQuery && isPrivate(r)) {
				return &Error{at + i, ErrInvalid}
			}
			i += n
			continue
		}
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return &Error{at + i, ErrEscape}
			}
			i += 3
			continue
		case isUnreserved(c) || isSubDelim(c):
		case c == ':':
			if class == classRegName {
				return &Error{at + i, ErrInvalid}
			}
		case c == '@':
			if class == classUserinfo || class == classRegName {
				return &Error{at + i, ErrInvalid}
			}
		case c == '/':
			if class < classPath {
				return &Error{at + i, ErrInvalid}
			}
		case c == '?':
			if class < classQuery {
				return &Error{at + i, ErrInvalid}
			}
		default:
			return &Error{at + i, ErrInvalid}
		}
		i++
	}
	return nil
}

// checkAuthority checks [ iuserinfo "@" ] ihost [ ":" port ], starting at
// byte offset at of the input.
func checkAuthority(auth string, at int) error {
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		if err := checkRun(auth[:i], at, classUserinfo); err != nil {
			return err
		}
		auth, at = auth[i+1:], at+i+1
	}
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return &Error{at, ErrHost}
		}
		host, port = auth[:end+1], auth[end+1:]
		if port != "" && port[0] != ':' {
			return &Error{at + end + 1, ErrAuthority}
		}
		if !isIPLiteral(host[1:end]) {
			return &Error{at, ErrHost}
		}
	} else {
		if i := strings.LastIndexByte(auth, ':'); i >= 0 {
			host, port = auth[:i], auth[i:]
		}
		if err := checkRun(host, at, classRegName); err != nil {
			return err
		}
	}
	for i := 1; i < len(port); i++ {
		if !isDigit(port[i]) {
			return &Error{at + len(host) + i, ErrPort}
		}
	}
	return nil
}

// isIPLiteral reports whether s (between the brackets) is an IPv6 address
// without a zone, or IPvFuture.
func isIPLiteral(s string) bool {
	if len(s) > 0 && (s[0] == 'v' || s[0] == 'V') {
		dot := strings.IndexByte(s, '.')
		if dot < 2 || dot == len(s)-1 {
			return false
		}
		for i := 1; i < dot; i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		for i := dot + 1; i < len(s); i++ {
			if c := s[i]; !isUnreserved(c) && !isSubDelim(c) && c != ':' {
				return false
			}
		}
		return true
	}
	if strings.IndexByte(s, '%') >= 0 {
		return false // a zone is not part of RFC 3986's IPv6address
	}
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool { return strings.IndexByte("!$&'()*+,;=", c) >= 0 }

// isUCSChar reports whether r is an RFC 3987 ucschar.
func isUCSChar(r rune) bool {
	switch {
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0x10000 && r <= 0xEFFFD:
		// %x10000-1FFFD / ... / %xE1000-EFFFD: every plane but its last
		// two code points (the noncharacters U+xFFFE and U+xFFFF).
		return r&0xFFFF <= 0xFFFD
	}
	return false
}

// isPrivate reports whether r is an RFC 3987 iprivate (query only).
func isPrivate(r rune) bool {
	return r >= 0xE000 && r <= 0xF8FF || r >= 0xF0000 && r <= 0xFFFFD || r >= 0x100000 && r <= 0x10FFFD
}
