package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/rdflex"
)

// readNTriples yields the IRIs of every N-Triples or N-Quads statement, line
// by line. A malformed line yields one *LineError and none of its IRIs.
func readNTriples(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool) {
	lr := newLineReader(br, '\n', o.MaxLineBytes)
	var p ntParser
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
		} else {
			err = p.parseLine(line)
		}
		if err != nil {
			if !yield(Record{Line: lr.line}, &LineError{File: name, Line: lr.line, Err: err}) {
				return
			}
			continue
		}
		for _, iri := range p.iris {
			if !yield(Record{Text: iri, Line: lr.line}, nil) {
				return
			}
		}
	}
}

// ntParser parses one line of N-Triples 1.1 or N-Quads 1.1
// (https://www.w3.org/TR/n-triples/#n-triples-grammar,
// https://www.w3.org/TR/n-quads/#sec-grammar). It keeps its buffers from line
// to line.
type ntParser struct {
	s    []byte   // the statement being parsed
	i    int      // the position in s
	col  int      // column of s[0] in the line, 0-based
	iris []string // the IRIs of the line, in order
	buf  []byte   // the IRI being decoded
}

// term kinds
const (
	termIRI = iota
	termBlank
	termLiteral
)

// parseLine parses a line, which the grammar's EOL ([#xD#xA]+) may split
// further at carriage returns, and leaves its IRIs in p.iris.
func (p *ntParser) parseLine(line []byte) error {
	p.iris = p.iris[:0]
	col := 0
	for {
		seg := line
		cr := bytes.IndexByte(line, '\r')
		if cr >= 0 {
			seg = line[:cr]
		}
		p.s, p.i, p.col = seg, 0, col
		if err := p.statement(); err != nil {
			p.iris = p.iris[:0]
			return err
		}
		if cr < 0 {
			return nil
		}
		line = line[cr+1:]
		col += cr + 1
	}
}

// errorf returns an ErrSyntax error at the current column.
func (p *ntParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at column %d: %s", ErrSyntax, p.col+p.i+1, fmt.Sprintf(format, args...))
}

func (p *ntParser) eof() bool { return p.i >= len(p.s) }

// skipWS skips spaces and tabs (the grammar's WS).
func (p *ntParser) skipWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// statement parses subject predicate object graphLabel? '.' followed by
// white space and an optional comment, or a line of only those.
func (p *ntParser) statement() error {
	p.skipWS()
	if p.eof() || p.s[p.i] == '#' {
		return nil
	}
	n := 0
	for {
		p.skipWS()
		if p.eof() {
			return p.errorf("missing final '.'")
		}
		start := p.i
		var kind int
		switch c := p.s[p.i]; c {
		case '.':
			if n < 3 {
				return p.errorf("want 3 or 4 terms before '.', got %d", n)
			}
			p.i++
			p.skipWS()
			if !p.eof() && p.s[p.i] != '#' {
				return p.errorf("unexpected %s after final '.'", quoteRune(p.s[p.i:]))
			}
			return nil
		case '#':
			return p.errorf("missing final '.' before comment")
		case '<':
			if err := p.iriRef(); err != nil {
				return err
			}
			kind = termIRI
		case '_':
			if err := p.blankNode(); err != nil {
				return err
			}
			kind = termBlank
		case '"':
			if err := p.literal(); err != nil {
				return err
			}
			kind = termLiteral
		default:
			return p.errorf("unexpected %s", quoteRune(p.s[p.i:]))
		}
		if n == 4 {
			p.i = start
			return p.errorf("too many terms (want 3 or 4)")
		}
		var ok bool
		switch n {
		case 0, 3: // subject, graph label
			ok = kind != termLiteral
		case 1: // predicate
			ok = kind == termIRI
		case 2: // object
			ok = true
		}
		if !ok {
			p.i = start
			what := [...]string{"subject", "predicate", "object", "graph label"}[n]
			return p.errorf("%s cannot be a %s", what, [...]string{"IRI", "blank node", "literal"}[kind])
		}
		n++
	}
}

// quoteRune quotes the rune starting s, for an error message.
func quoteRune(s []byte) string {
	r, size := utf8.DecodeRune(s)
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte %#02x", s[0])
	}
	return fmt.Sprintf("%q", r)
}

// iriRef parses IRIREF at p.i (on '<'), decodes its UCHAR escapes and appends
// it to p.iris.
func (p *ntParser) iriRef() error {
	start := p.i
	var n int
	var lexErr *rdflex.Error
	p.buf, n, _, lexErr = rdflex.IRIRef(p.buf[:0], p.s[p.i+1:], true, len(p.s))
	if lexErr != nil {
		p.i += 1 + lexErr.Off
		return p.lexError(lexErr)
	}
	p.i += 1 + n
	if !isAbsoluteIRI(p.buf) {
		return fmt.Errorf("%w <%s> at column %d: N-Triples and N-Quads allow only absolute IRIs", ErrRelativeIRI, p.buf, p.col+start+1)
	}
	p.iris = append(p.iris, string(p.buf))
	return nil
}

// lexError returns the error of the lexical core at the current column,
// wrapping ErrSyntax or ErrInvalidIRI.
func (p *ntParser) lexError(e *rdflex.Error) error {
	if e.Kind == rdflex.InvalidIRI {
		return fmt.Errorf("%w at column %d: %s", ErrInvalidIRI, p.col+p.i+1, e.Msg)
	}
	return p.errorf("%s", e.Msg)
}

// literal skips STRING_LITERAL_QUOTE at p.i (on '"') and an optional LANGTAG
// or '^^' IRIREF; the datatype IRI is appended to p.iris.
func (p *ntParser) literal() error {
	p.i++ // '"'
	for {
		if p.eof() {
			return p.errorf("unterminated literal")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return p.literalSuffix()
		case c == '\\':
			if p.i+1 < len(p.s) && rdflex.IsECHAR(p.s[p.i+1]) {
				p.i += 2
				continue
			}
			_, size, err := rdflex.UCHAR(p.s[p.i:], true)
			if err != nil {
				return p.lexError(err)
			}
			p.i += size
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				return p.errorf("invalid UTF-8 in literal")
			}
			p.i += size
		}
	}
}

// literalSuffix parses the optional LANGTAG or '^^' IRIREF after a literal's
// closing quote. White space may come before either, as between any two
// terminals.
func (p *ntParser) literalSuffix() error {
	save := p.i
	p.skipWS()
	switch {
	case p.i < len(p.s) && p.s[p.i] == '@':
		p.i++
		// LANGTAG ::= '@' [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*
		if p.skipWhile(isAlpha) == 0 {
			return p.errorf("invalid language tag")
		}
		for p.i < len(p.s) && p.s[p.i] == '-' {
			p.i++
			if p.skipWhile(isAlnum) == 0 {
				return p.errorf("invalid language tag")
			}
		}
		return nil
	case p.i+1 < len(p.s) && p.s[p.i] == '^' && p.s[p.i+1] == '^':
		p.i += 2
		p.skipWS()
		if p.eof() || p.s[p.i] != '<' {
			return p.errorf("datatype is not an IRI")
		}
		return p.iriRef()
	}
	p.i = save
	return nil
}

// skipWhile skips ASCII bytes for which ok holds and returns how many.
func (p *ntParser) skipWhile(ok func(byte) bool) int {
	start := p.i
	for p.i < len(p.s) && ok(p.s[p.i]) {
		p.i++
	}
	return p.i - start
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || '0' <= c && c <= '9' }

// blankNode skips BLANK_NODE_LABEL at p.i (on '_'):
// '_:' (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?
func (p *ntParser) blankNode() error {
	if p.i+1 >= len(p.s) || p.s[p.i+1] != ':' {
		return p.errorf("blank node without '_:'")
	}
	p.i += 2
	r, size := utf8.DecodeRune(p.s[p.i:])
	if size == 0 || !(rdflex.IsPNCharsU(r) || '0' <= r && r <= '9') || r == utf8.RuneError && size == 1 {
		return p.errorf("invalid blank node label")
	}
	p.i += size
	lastDot := -1 // position of a run of trailing dots, or -1
	for p.i < len(p.s) {
		r, size := utf8.DecodeRune(p.s[p.i:])
		if r == '.' {
			if lastDot < 0 {
				lastDot = p.i
			}
		} else if !(r == utf8.RuneError && size == 1) && size > 0 && rdflex.IsPNChars(r) {
			lastDot = -1
		} else {
			break
		}
		p.i += size
	}
	if lastDot >= 0 {
		p.i = lastDot // a label does not end with '.': the dots follow it
	}
	return nil
}
