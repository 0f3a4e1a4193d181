package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// lineReader splits its input on a delimiter, keeping memory bounded by max
// however long a line is.
type lineReader struct {
	br    *bufio.Reader
	delim byte
	max   int
	buf   []byte
	line  int // 1-based number of the line last returned
}

func newLineReader(br *bufio.Reader, delim byte, max int) *lineReader {
	return &lineReader{br: br, delim: delim, max: max}
}

// next returns the next line without its delimiter, valid until the next
// call. tooLong reports a line longer than max, whose bytes are dropped. err
// is io.EOF at the end of the input, or the reader's error.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	n := 0 // bytes of the line read so far, delimiter included
	for {
		frag, err := lr.br.ReadSlice(lr.delim)
		n += len(frag)
		if len(lr.buf) <= lr.max {
			lr.buf = append(lr.buf, frag...)
		}
		switch {
		case err == nil:
			lr.line++
			n--
			return lr.buf[:min(n, len(lr.buf))], n > lr.max, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if n == 0 {
				return nil, false, io.EOF
			}
			lr.line++
			return lr.buf, n > lr.max, nil
		default:
			return nil, false, err
		}
	}
}

// eachLine reads r line by line (NUL-separated with o.NUL) and yields what
// decode makes of each line: a record, nothing (skip), or a *LineError. An
// over-long line is a LineError; a read error ends the sequence.
func eachLine(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool,
	decode func(line []byte) (text string, skip bool, err error)) {
	delim := byte('\n')
	if o.NUL {
		delim = 0
	}
	lr := newLineReader(br, delim, o.MaxLineBytes)
	for {
		line, tooLong, err := lr.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				yield(Record{}, ioError(name, err))
			}
			return
		}
		if tooLong {
			err = lineTooLong(o.MaxLineBytes)
		}
		var text string
		if err == nil {
			var skip bool
			if text, skip, err = decode(line); skip {
				continue
			}
		}
		rec := Record{Text: text, Line: lr.line}
		if err != nil {
			rec, err = Record{Line: lr.line}, &LineError{File: name, Line: lr.line, Err: err}
		}
		if !yield(rec, err) {
			return
		}
	}
}

// invalidCost is what line costs against MaxLineBytes: its length, with
// each byte that is not part of valid UTF-8 counted three times. A URL
// parser makes such a byte U+FFFD, percent-encoded in nine bytes, where no
// valid character takes more than three times its bytes: so a line that
// is not UTF-8 never costs more than a valid one of the accepted length.
func invalidCost(line []byte) int {
	if utf8.Valid(line) {
		return len(line)
	}
	n := len(line)
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && size == 1 {
			n += 2
		}
		i += size
	}
	return n
}

// lineTooLong is the reason of a line longer than max bytes.
func lineTooLong(max int) error { return fmt.Errorf("%w (more than %d bytes)", ErrLineTooLong, max) }

// CheckLine returns the error Read gives a line (or NUL-separated record)
// of Lines that is over the limit, without its separator: longer than
// maxLineBytes (0 means DefaultMaxLineBytes), or costing more with each
// byte that is not UTF-8 counted three. The error wraps ErrLineTooLong.
// It is for a reader that splits lines itself and must refuse exactly the
// lines Read refuses.
func CheckLine(line []byte, maxLineBytes int) error {
	if maxLineBytes <= 0 {
		maxLineBytes = DefaultMaxLineBytes
	}
	if len(line) > maxLineBytes {
		return lineTooLong(maxLineBytes)
	}
	// A line of at most a third of the bound cannot cost more than it:
	// only a longer one is checked for UTF-8.
	if len(line) > maxLineBytes/3 {
		if n := invalidCost(line); n > maxLineBytes {
			return fmt.Errorf("%w (%d bytes, of which %d not UTF-8: more than %d bytes at three a byte)",
				ErrLineTooLong, len(line), (n-len(line))/2, maxLineBytes)
		}
	}
	return nil
}

// readLines yields every line that is neither blank nor a comment (see
// IsSkipped), as is but for a trailing carriage return. NUL-separated records
// are taken byte for byte, and only blank ones are skipped.
func readLines(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool) {
	eachLine(br, name, o, yield, func(line []byte) (string, bool, error) {
		if err := CheckLine(line, o.MaxLineBytes); err != nil {
			return "", false, err
		}
		if o.NUL {
			return string(line), len(trimSpace(line)) == 0, nil
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		return string(line), IsSkipped(line), nil
	})
}

// readHashes yields every hash line, trimmed and lowercased, skipping blank
// and comment lines (see IsSkipped), NUL-separated or not.
func readHashes(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool) {
	eachLine(br, name, o, yield, func(line []byte) (string, bool, error) {
		if IsSkipped(line) {
			return "", true, nil
		}
		text, err := parseHex(trimSpace(line))
		return text, false, err
	})
}

// IsSkipped reports whether a line is blank (nothing but ASCII white
// space) or a comment (its first other byte is '#'): the one rule every
// line format and the CLI's own line reader skip by. No URL, IRI or hash
// starts with '#', so a comment is never a record lost.
func IsSkipped[T string | []byte](line T) bool {
	for i := 0; i < len(line); i++ {
		if c := line[i]; !isSpace(c) {
			return c == '#'
		}
	}
	return true
}

// Hash text lengths, in hex digits: a full SHA-256 hash, and the shortest
// prefix entry (4 bytes).
const (
	fullHexLen   = 64
	minPrefixHex = 8
)

// parseHex returns b as lowercase hex, or an error naming it when it is not an
// even number of minPrefixHex..fullHexLen hex digits.
func parseHex(b []byte) (string, error) {
	upper := false
	for i, c := range b {
		switch hexClass[c] {
		case notHex:
			return "", fmt.Errorf("%w %s: non-hex character %q at column %d", ErrInvalidHash, quote(string(b)), c, i+1)
		case upperHex:
			upper = true
		}
	}
	switch {
	case len(b)%2 != 0:
		return "", fmt.Errorf("%w %s: odd number of hex digits (%d)", ErrInvalidHash, quote(string(b)), len(b))
	case len(b) < minPrefixHex || len(b) > fullHexLen:
		return "", fmt.Errorf("%w %s: %d hex digits, want %d to %d", ErrInvalidHash, quote(string(b)), len(b), minPrefixHex, fullHexLen)
	}
	if !upper {
		return string(b), nil // the common case: one copy
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if hexClass[c] == upperHex {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out), nil
}

// Byte classes of hexClass.
const (
	notHex   = 0
	lowerHex = 1 // 0-9, a-f
	upperHex = 2 // A-F
)

// hexClass classifies every byte with one load (an import of hashes
// spent a fifth of its time in a compare chain per byte). Read only.
var hexClass = func() (t [256]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = lowerHex
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = lowerHex
	}
	for c := 'A'; c <= 'F'; c++ {
		t[c] = upperHex
	}
	return t
}()

// isSpace reports whether c is ASCII white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// trimSpace returns b without leading and trailing ASCII white space.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
