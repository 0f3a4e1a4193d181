package hasheduri

import (
	"errors"
	"strconv"
	"strings"
)

// Errors about hashed URIs and the names of algorithms, keep settings and
// variants. They reach the caller wrapped in a *ParseError (or, from
// Generate and URI.Match, wrapped with fmt.Errorf); use errors.Is.
var (
	// ErrSyntax is returned when a hashed URI does not follow the ABNF of
	// draft-feather-hashed-uri-03 §4.1: a missing "hashed:" scheme or "=",
	// or a malformed algorithm identifier.
	ErrSyntax = errors.New("hasheduri: malformed hashed uri")

	// ErrUnknownAlgorithm is returned when an algorithm identifier is
	// well-formed but not one this package implements.
	ErrUnknownAlgorithm = errors.New("hasheduri: unknown hash algorithm")

	// ErrHex is returned when a hash value is empty or holds a character
	// that is not a hexadecimal digit.
	ErrHex = errors.New("hasheduri: invalid hex digest")

	// ErrDigestLength is returned when a digest does not have the length of
	// its algorithm's output (16 bytes for md5, 20 for sha1, 32 for
	// x-sha256).
	ErrDigestLength = errors.New("hasheduri: wrong digest length")

	// ErrUnknownFlag is returned when a flag is neither "+frag" nor
	// "+query".
	ErrUnknownFlag = errors.New("hasheduri: unknown flag")

	// ErrDuplicateFlag is returned when a flag appears twice.
	ErrDuplicateFlag = errors.New("hasheduri: duplicate flag")

	// ErrUnknownKeep is returned when a keep setting is not one of none,
	// frag, query or both.
	ErrUnknownKeep = errors.New("hasheduri: unknown keep setting")

	// ErrUnknownVariant is returned when a variant is neither N nor P.
	ErrUnknownVariant = errors.New("hasheduri: unknown variant")
)

// Errors about the URL being canonicalised. They reach the caller wrapped in
// a *URLError; use errors.Is.
var (
	// ErrRelative is returned when a URL has no scheme. A hashed URI needs
	// an absolute URI and this package resolves against no base.
	ErrRelative = errors.New("hasheduri: relative reference without a scheme")

	// ErrScheme is returned when the text before the first ":" is not a
	// scheme (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
	ErrScheme = errors.New("hasheduri: invalid scheme")

	// ErrHost is returned when a host holds an ASCII character that RFC 3986
	// does not allow in a host, a stray "%", or an IP literal that is
	// neither an IPv6 address nor an IPvFuture.
	ErrHost = errors.New("hasheduri: invalid host")

	// ErrPort is returned when a port holds anything but decimal digits.
	ErrPort = errors.New("hasheduri: invalid port")
)

// ParseError reports text that is not a valid hashed URI, algorithm name,
// keep setting or variant. Err is one of the sentinel errors above, possibly
// wrapped with detail; Unwrap returns it.
type ParseError struct {
	Kind  string // what was being parsed: "hashed uri", "algorithm", "keep setting" or "variant"
	Input string // the text as given
	Err   error  // why, wrapping a sentinel such as ErrUnknownAlgorithm
}

func (e *ParseError) Error() string {
	return "hasheduri: invalid " + e.Kind + " " + quote(e.Input) + ": " + reason(e.Err)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// URLError reports a URL that could not be canonicalised. Err wraps one of
// ErrRelative, ErrScheme, ErrHost or ErrPort; Unwrap returns it.
type URLError struct {
	Variant Variant // the Appendix A variant in use
	Input   string  // the URL as given
	Err     error   // why
}

func (e *URLError) Error() string {
	return "hasheduri: variant " + e.Variant.String() + ": invalid url " + quote(e.Input) + ": " + reason(e.Err)
}

// Unwrap returns the cause.
func (e *URLError) Unwrap() error { return e.Err }

// reason returns err's message without the package prefix, so that a
// wrapped sentinel does not repeat it.
func reason(err error) string {
	if err == nil {
		return "unknown error"
	}
	return strings.TrimPrefix(err.Error(), "hasheduri: ")
}

// quote shortens very long inputs so that an error message stays readable,
// and escapes control bytes so that it stays on one line.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}
