package safebrowsing

import (
	"errors"

	"github.com/urlhash/urlhash/hashkey"
)

// notWebError is a reason a URL is outside what Safe Browsing checks. It
// unwraps to hashkey.ErrUnsupportedURL, so that callers can treat every
// profile's unsupported URLs alike.
type notWebError struct{ msg string }

func (e *notWebError) Error() string { return "safebrowsing: " + e.msg }
func (e *notWebError) Unwrap() error { return hashkey.ErrUnsupportedURL }

var (
	// ErrNoHost is returned, wrapped in a *hashkey.URLError, when a URL has
	// no host once canonicalised: a relative reference such as "/a/b" or
	// "?q", "http:///path", "file:///etc", or a host made only of dots.
	// It wraps hashkey.ErrUnsupportedURL; use errors.Is.
	ErrNoHost error = &notWebError{"url has no host"}

	// ErrNotWeb is returned, wrapped in a *hashkey.URLError, when a URL
	// has a scheme but no authority ("mailto:a@b", "javascript:x",
	// "data:,x", "urn:isbn:1"), or a scheme that never names a network
	// host (about, blob, data, file, javascript, mailto). It wraps
	// hashkey.ErrUnsupportedURL; use errors.Is.
	ErrNotWeb error = &notWebError{"not a web url"}

	// ErrPort is returned, wrapped in a *hashkey.URLError, when a URL's port
	// is not a decimal number up to 65535: such a URL is invalid, and its
	// host must not be read as the text before the ':'.
	ErrPort = errors.New("safebrowsing: invalid port")

	// ErrPrefixLength is returned when a hash prefix length is outside
	// MinPrefixLen..MaxPrefixLen bytes. It may be wrapped; use errors.Is.
	ErrPrefixLength = errors.New("safebrowsing: hash prefix length must be 4 to 32 bytes")

	// ErrUnknownProfile is returned by ParseProfile for a name it does not
	// know. It may be wrapped; use errors.Is.
	ErrUnknownProfile = errors.New("safebrowsing: unknown profile")
)
