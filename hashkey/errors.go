package hashkey

import (
	"errors"
	"strconv"
)

// ErrUnsupportedURL is returned, wrapped in a *URLError, when a URL is valid
// but outside what a profile hashes (for example a URL with no host where
// one is required). Use errors.Is.
var ErrUnsupportedURL = errors.New("hashkey: unsupported url")

// TextError reports a malformed text form of a hash.
type TextError struct {
	Kind   string // "hash", "short hash" or "very-short hash"
	Input  string // the text that failed to parse
	Reason string // why, in lowercase words
}

func (e *TextError) Error() string {
	return "hashkey: invalid " + e.Kind + " " + quote(e.Input) + ": " + e.Reason
}

// URLError reports a URL that a profile could not canonicalise. Every
// profile in the subpackages returns it.
// Err carries the cause and may be a sentinel such as ErrUnsupportedURL.
type URLError struct {
	Profile string // the profile's name, e.g. "urlhash"
	Input   string // the URL as given
	Err     error  // the reason
}

func (e *URLError) Error() string {
	return "hashkey: " + e.Profile + ": invalid url " + quote(e.Input) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *URLError) Unwrap() error { return e.Err }

// quote shortens very long inputs so that an error message stays readable,
// and escapes control bytes so that it stays on one line.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}
