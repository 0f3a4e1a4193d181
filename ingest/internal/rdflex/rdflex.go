package rdflex

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/xmlscan"
)

// Kind is the class of an Error: which of ingest's sentinel errors the
// reader wraps it in.
type Kind uint8

const (
	// Syntax: the input breaks the grammar (ingest.ErrSyntax).
	Syntax Kind = iota
	// InvalidIRI: an IRI holds a character IRIREF forbids, written or
	// escaped, or bytes that are not UTF-8 (ingest.ErrInvalidIRI).
	InvalidIRI
	// TooLong: the IRI is longer than the caller allows
	// (ingest.ErrLineTooLong).
	TooLong
)

// Error is a lexical error: its class, the offset in the bytes scanned
// where the offending character or escape starts, and what is wrong.
type Error struct {
	Kind Kind
	Off  int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// ForbiddenInIRI reports whether the ASCII byte c may not appear in an
// IRIREF: [^#x00-#x20<>"{}|^`\].
func ForbiddenInIRI(c byte) bool {
	switch c {
	case '<', '>', '"', '{', '}', '|', '^', '`', '\\':
		return true
	}
	return c <= 0x20
}

// iriPlain holds the bytes an IRIREF takes as they are: ASCII that
// ForbiddenInIRI allows.
var iriPlain = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = !ForbiddenInIRI(byte(c))
	}
	return t
}()

// IRIRef scans the body of an IRIREF, ([^#x00-#x20<>"{}|^`\] | UCHAR)*
// '>', from the start of src (the '<' already read), and appends it to dst
// with its escapes decoded. It returns dst, the bytes of src consumed and
// whether the closing '>' was (consumed too). When src ends first and
// more input may follow (atEOF unset), it stops before a character or an
// escape that src holds only in part: call it again with what follows,
// more of it read. An IRI that would make dst longer than max bytes is an
// Error of kind TooLong, noticed where the scan of its piece stood.
func IRIRef(dst, src []byte, atEOF bool, max int) (out []byte, n int, done bool, err *Error) {
	i := 0
	for {
		start := i
		for i < len(src) && iriPlain[src[i]] {
			i++
		}
		if len(dst)+i-start > max {
			return dst, start, false, &Error{Kind: TooLong, Off: start, Msg: fmt.Sprintf("an IRI of more than %d bytes", max)}
		}
		dst = append(dst, src[start:i]...)
		if i == len(src) {
			if atEOF {
				return dst, i, false, &Error{Kind: Syntax, Off: i, Msg: "unterminated IRI"}
			}
			return dst, i, false, nil
		}
		switch c := src[i]; {
		case c == '>':
			return dst, i + 1, true, nil
		case c == '\\':
			r, size, err := UCHAR(src[i:], atEOF)
			if err != nil {
				err.Off += i
				return dst, i, false, err
			}
			if size == 0 {
				return dst, i, false, nil // the escape is cut: more input
			}
			if r < utf8.RuneSelf && ForbiddenInIRI(byte(r)) {
				return dst, i, false, &Error{Kind: InvalidIRI, Off: i, Msg: fmt.Sprintf("escape of forbidden character %q", r)}
			}
			if len(dst)+utf8.RuneLen(r) > max {
				return dst, i, false, &Error{Kind: TooLong, Off: i, Msg: fmt.Sprintf("an IRI of more than %d bytes", max)}
			}
			dst = utf8.AppendRune(dst, r)
			i += size
		case c == '\n':
			return dst, i, false, &Error{Kind: InvalidIRI, Off: i, Msg: "newline in an IRI"}
		case c < utf8.RuneSelf:
			return dst, i, false, &Error{Kind: InvalidIRI, Off: i, Msg: fmt.Sprintf("forbidden character %q", c)}
		default:
			if !atEOF && !utf8.FullRune(src[i:]) {
				return dst, i, false, nil
			}
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return dst, i, false, &Error{Kind: InvalidIRI, Off: i, Msg: "invalid UTF-8"}
			}
			if len(dst)+size > max {
				return dst, i, false, &Error{Kind: TooLong, Off: i, Msg: fmt.Sprintf("an IRI of more than %d bytes", max)}
			}
			dst = append(dst, src[i:i+size]...)
			i += size
		}
	}
}

// UCHAR decodes the escape \uXXXX or \UXXXXXXXX at the start of src (on
// its backslash), which must name a Unicode scalar value, and returns it
// with its length. When src holds the escape only in part and more input
// may follow (atEOF unset), it returns size 0 and no error.
func UCHAR(src []byte, atEOF bool) (r rune, size int, err *Error) {
	if len(src) < 2 {
		if !atEOF {
			return 0, 0, nil
		}
		return 0, 0, &Error{Kind: Syntax, Msg: "incomplete escape " + quote(src)}
	}
	n := 0
	switch src[1] {
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return 0, 0, &Error{Kind: Syntax, Msg: "invalid escape " + quote(src[:2])}
	}
	for k := 2; k < 2+n; k++ {
		if k == len(src) {
			if !atEOF {
				return 0, 0, nil
			}
			return 0, 0, &Error{Kind: Syntax, Msg: "incomplete escape " + quote(src)}
		}
		d, ok := HexDigit(int(src[k]))
		if !ok {
			return 0, 0, &Error{Kind: Syntax, Msg: "invalid escape " + quote(src[:k+1])}
		}
		r = r<<4 | rune(d)
	}
	if !utf8.ValidRune(r) {
		return 0, 0, &Error{Kind: Syntax, Msg: "escape " + quote(src[:2+n]) + " is not a Unicode scalar value"}
	}
	return r, 2 + n, nil
}

// IsECHAR reports whether c may follow a backslash as an ECHAR of a
// string: t b n r f " ' \.
func IsECHAR(c byte) bool {
	switch c {
	case 't', 'b', 'n', 'r', 'f', '"', '\'', '\\':
		return true
	}
	return false
}

// HexDigit returns the value of the hex digit c, a byte or a negative
// end-of-input mark, and whether it is one.
func HexDigit(c int) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return byte(c - '0'), true
	case 'a' <= c && c <= 'f':
		return byte(c - 'a' + 10), true
	case 'A' <= c && c <= 'F':
		return byte(c - 'A' + 10), true
	}
	return 0, false
}

// IsPNCharsBase reports whether r is in PN_CHARS_BASE: XML 1.0's
// NameStartChar but ':' and '_' (Turtle's grammar takes its name classes
// from XML's).
func IsPNCharsBase(r rune) bool { return r != ':' && r != '_' && xmlscan.IsNameStartChar(r) }

// IsPNCharsU reports whether r is in PN_CHARS_U: PN_CHARS_BASE | '_'. (The
// N-Triples 1.1 grammar added ':', which its erratum and the W3C tests take
// back: "_::a" and "_:abc:def" are not blank node labels, in any syntax.)
func IsPNCharsU(r rune) bool { return r != ':' && xmlscan.IsNameStartChar(r) }

// IsPNChars reports whether r is in PN_CHARS: PN_CHARS_U | '-' | [0-9] |
// #xB7 | [#x300-#x36F] | [#x203F-#x2040], which is XML's NameChar but ':'
// and '.'.
func IsPNChars(r rune) bool { return r != ':' && r != '.' && xmlscan.IsNameChar(r) }

// maxQuote is the most bytes of an input an error message quotes.
const maxQuote = 64

// quote returns a Go-quoted, shortened form of b for an error message.
func quote(b []byte) string {
	if len(b) > maxQuote {
		return strconv.Quote(string(b[:maxQuote])) + "..."
	}
	return strconv.Quote(string(b))
}
