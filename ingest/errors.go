package ingest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnknownFormat is returned, wrapped, by ParseFormat and Read when a
// format name or value is not one this package reads. Use errors.Is.
var ErrUnknownFormat = errors.New("ingest: unknown format")

// ErrInvalidOptions is returned, wrapped, by Options.Validate and Read when
// the options are inconsistent, for example NUL with a format that has its
// own framing. Use errors.Is.
var ErrInvalidOptions = errors.New("ingest: invalid options")

// ErrLineTooLong is returned, wrapped in a *LineError, when a line, a
// NUL-separated record or a sitemap <loc> exceeds Options.MaxLineBytes.
var ErrLineTooLong = errors.New("ingest: line too long")

// ErrInvalidHash is returned, wrapped in a *LineError, when a line of a
// hashes file is not an even number of 8 to 64 hex digits.
var ErrInvalidHash = errors.New("ingest: invalid hash")

// ErrInvalidIRI is returned, wrapped in a *LineError, when an IRI in an
// N-Triples or N-Quads line holds a character the grammar forbids (space,
// controls, <>"{}|^` or a backslash that is not a \u or \U escape, also when
// it comes from such an escape) or is not valid UTF-8.
var ErrInvalidIRI = errors.New("ingest: invalid IRI")

// ErrRelativeIRI is returned, wrapped in a *LineError, when an N-Triples or
// N-Quads IRI is relative (the grammar allows only absolute ones), or when a
// Turtle, TriG or RDF/XML document holds a relative IRI reference and no
// base IRI is known to resolve it against (Options.Base).
var ErrRelativeIRI = errors.New("ingest: relative IRI")

// ErrSyntax is returned, wrapped in a *LineError, when an N-Triples or
// N-Quads line, or a Turtle, TriG or RDF/XML document, does not follow its
// grammar, or when a sitemap is not well-formed XML.
var ErrSyntax = errors.New("ingest: syntax error")

// syntaxf returns an error wrapping ErrSyntax with the reason format
// says; the reader puts the file and the line on it.
func syntaxf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSyntax}, args...)...)
}

// ErrNotSitemap is returned, wrapped in a *LineError, when an XML document's
// root element is not a sitemaps.org <urlset> or <sitemapindex>.
var ErrNotSitemap = errors.New("ingest: not a sitemap")

// ErrEmptyLoc is returned, wrapped in a *LineError, when a sitemap <loc>
// element holds nothing but white space.
var ErrEmptyLoc = errors.New("ingest: empty <loc>")

// ErrBinary is returned, wrapped with the file name, when an input does not
// look like text (see the package documentation for the rule). It is the
// only error Read yields for such an input. Use errors.Is.
var ErrBinary = errors.New("ingest: binary input")

// ErrLimit is returned, wrapped in a *LineError, when a sitemap goes over one
// of the fixed structural limits (element nesting, name length, namespace
// declarations in scope, length of the XML declaration). It ends the
// sequence.
var ErrLimit = errors.New("ingest: over a limit")

// ErrGzipBomb is returned, wrapped with the file name, when a gzipped
// input expands more than MaxGzipRatio times past its first
// MinGzipBombBytes: a decompression bomb, refused before it costs more
// than that ratio allows. It ends the sequence. Use errors.Is.
var ErrGzipBomb = errors.New("ingest: gzip expands too much")

// LineError reports a bad record: the file it came from, its 1-based line
// (the record number when records are NUL-separated) and the reason. Reading
// continues after a LineError; the caller decides whether to skip or stop.
type LineError struct {
	File string // the name given to Read; may be empty
	Line int    // 1-based line of the bad record
	Err  error  // the reason; wraps one of the Err* sentinels
}

// Error returns "FILE:LINE: reason". The reason is Err's message without the
// "ingest: " prefix, since FILE:LINE already says where it comes from.
func (e *LineError) Error() string {
	reason := "bad record"
	if e.Err != nil {
		reason = strings.TrimPrefix(e.Err.Error(), "ingest: ")
	}
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	b.WriteString(strconv.Itoa(e.Line))
	b.WriteString(": ")
	b.WriteString(reason)
	return b.String()
}

// Unwrap returns the reason.
func (e *LineError) Unwrap() error { return e.Err }

// maxQuote is the number of bytes of an input quoted in an error message.
const maxQuote = 64

// quote returns a Go-quoted, shortened form of s for an error message.
func quote(s string) string {
	if len(s) > maxQuote {
		return strconv.Quote(s[:maxQuote]) + "..."
	}
	return strconv.Quote(s)
}
