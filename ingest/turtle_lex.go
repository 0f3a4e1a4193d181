package ingest

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/rdflex"
	"github.com/urlhash/urlhash/ingest/internal/scanbuf"
)

// Token kinds of the Turtle and TriG lexer.
const (
	tEOF      = iota
	tIRI      // IRIREF: text is the decoded IRI reference
	tPName    // PNAME_NS or PNAME_LN: prefix, then text, the decoded local name
	tBlank    // BLANK_NODE_LABEL (the label is not kept)
	tString   // any of the four string forms (the text is not kept)
	tLangTag  // '@' then letters: a LANGTAG, or the directives @prefix and @base
	tInteger  // INTEGER
	tDecimal  // DECIMAL
	tDouble   // DOUBLE
	tPunct    // one of . ; , [ ] ( ) { }: c
	tDatatype // ^^
	tWord     // a bare name: a, true, false, PREFIX, BASE, GRAPH (text)
)

// token is one token of Turtle or TriG. Its text and prefix are valid until
// the next token is read.
type token struct {
	kind   int
	c      byte   // tPunct
	text   []byte // tIRI, tPName (local part), tLangTag, tWord
	prefix []byte // tPName
	line   int    // the line the token starts on
	col    int    // the byte column it starts at, 1-based
}

// ttlLexer splits Turtle and TriG into tokens (the terminals of the two
// grammars are the same). It holds a read buffer and the text of one term,
// never more: string literals are checked as they stream by and not kept.
type ttlLexer struct {
	scanbuf.Window
	line int // 1-based line of the next byte
	max  int // the longest IRI, name or language tag, in bytes
	// lineOff is the input offset of the first byte of the current line:
	// columns for errors.
	lineOff int

	dots int   // '.' tokens owed: dots that ended a name but are not part of it
	tok  token // the token being read
}

const eofByte = -1

func newTTLLexer(r io.Reader, max int) *ttlLexer {
	return &ttlLexer{Window: scanbuf.New(r, readBufSize), line: 1, max: max}
}

// peek returns the next byte, or eofByte.
func (lx *ttlLexer) peek() int {
	if lx.R < lx.W || lx.Fill() {
		return int(lx.Buf[lx.R])
	}
	return eofByte
}

// peekAt returns the byte k (< 8) bytes ahead, or eofByte.
func (lx *ttlLexer) peekAt(k int) int {
	for lx.R+k >= lx.W {
		if !lx.Fill() {
			return eofByte
		}
	}
	return int(lx.Buf[lx.R+k])
}

// peekRune decodes the next rune; size 0 at the end of input. An invalid
// byte is (utf8.RuneError, 1).
func (lx *ttlLexer) peekRune() (rune, int) {
	c := lx.peek()
	if c < 0 {
		return 0, 0
	}
	if c < utf8.RuneSelf {
		return rune(c), 1
	}
	if !utf8.FullRune(lx.Buf[lx.R:lx.W]) {
		lx.peekAt(utf8.UTFMax - 1)
	}
	return utf8.DecodeRune(lx.Buf[lx.R:lx.W])
}

// readErr is the error for an input that ended inside a token: a read
// error, or a syntax error at the end of input.
func (lx *ttlLexer) readErr(what string) error {
	if lx.Err != nil && !errors.Is(lx.Err, io.EOF) {
		return lx.Err
	}
	return syntaxf("end of input in %s", what)
}

// grow appends c to the token's text, refusing a term longer than max.
func (lx *ttlLexer) add(b []byte) error {
	if len(lx.tok.text)+len(b) > lx.max {
		return fmt.Errorf("%w (a term of more than %d bytes)", ErrLineTooLong, lx.max)
	}
	lx.tok.text = append(lx.tok.text, b...)
	return nil
}

// col returns the 1-based byte column of the next byte.
func (lx *ttlLexer) col() int { return lx.Off + lx.R - lx.lineOff + 1 }

// newline counts a line feed just consumed.
func (lx *ttlLexer) newline() {
	lx.line++
	lx.lineOff = lx.Off + lx.R
}

// posError is a lexer error with the position it was met at.
type posError struct {
	line, col int
	err       error
}

func (e *posError) Error() string { return e.err.Error() }
func (e *posError) Unwrap() error { return e.err }

// columnError adds a column to a reader's error.
type columnError struct {
	col int
	err error
}

func (e *columnError) Error() string { return fmt.Sprintf("%v (column %d)", e.err, e.col) }
func (e *columnError) Unwrap() error { return e.err }

// next reads the next token into lx.tok; an error carries the position
// (*posError) where the lexer met it.
func (lx *ttlLexer) next() error {
	if err := lx.scan(); err != nil {
		if errors.Is(err, ErrLineTooLong) {
			// The term's start: where the lexer notices depends on how
			// the input arrived.
			return &posError{line: lx.tok.line, col: lx.tok.col, err: err}
		}
		return &posError{line: lx.line, col: lx.col(), err: err}
	}
	return nil
}

func (lx *ttlLexer) scan() error {
	t := &lx.tok
	t.text, t.prefix = t.text[:0], t.prefix[:0]
	if lx.dots > 0 {
		lx.dots--
		t.kind, t.c = tPunct, '.'
		t.line, t.col = lx.line, lx.col()-lx.dots-1
		return nil
	}
	if err := lx.skipSpace(); err != nil {
		return err
	}
	t.line, t.col = lx.line, lx.col()
	c := lx.peek()
	switch {
	case c == eofByte:
		if lx.Err != nil && !errors.Is(lx.Err, io.EOF) {
			return lx.Err
		}
		t.kind = tEOF
		return nil
	case c == '<':
		t.kind = tIRI
		return lx.iriRef()
	case c == '"' || c == '\'':
		t.kind = tString
		return lx.stringLit(byte(c))
	case c == '_':
		t.kind = tBlank
		return lx.blankLabel()
	case c == '@':
		t.kind = tLangTag
		return lx.langTag()
	case c == '^':
		if lx.peekAt(1) != '^' {
			return syntaxf("'^' not followed by '^'")
		}
		lx.R += 2
		t.kind = tDatatype
		return nil
	case '0' <= c && c <= '9' || c == '+' || c == '-':
		return lx.number()
	case c == '.':
		if d := lx.peekAt(1); '0' <= d && d <= '9' {
			return lx.number()
		}
		lx.R++
		t.kind, t.c = tPunct, '.'
		return nil
	case c == ';' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')' || c == '{' || c == '}':
		lx.R++
		t.kind, t.c = tPunct, byte(c)
		return nil
	}
	return lx.name()
}

// skipSpace skips white space and comments, counting lines.
func (lx *ttlLexer) skipSpace() error {
	for {
		for lx.R < lx.W {
			switch lx.Buf[lx.R] {
			case '\n':
				lx.R++
				lx.newline()
				continue
			case ' ', '\t', '\r':
			case '#':
				lx.R++
				if err := lx.skipComment(); err != nil {
					return err
				}
				continue
			default:
				return nil
			}
			lx.R++
		}
		if !lx.Fill() {
			return nil
		}
	}
}

// skipComment skips to the end of the line (the newline stays).
func (lx *ttlLexer) skipComment() error {
	for {
		for lx.R < lx.W {
			c := lx.Buf[lx.R]
			if c == '\n' || c == '\r' {
				return nil
			}
			lx.R++
		}
		if !lx.Fill() {
			return nil
		}
	}
}

// iriRef reads IRIREF ('<' ([^#x00-#x20<>"{}|^`\] | UCHAR)* '>') and
// decodes its escapes into lx.tok.text.
func (lx *ttlLexer) iriRef() error {
	lx.R++ // '<'
	for {
		atEOF := lx.Err != nil
		text, n, done, err := rdflex.IRIRef(lx.tok.text, lx.Buf[lx.R:lx.W], atEOF, lx.max)
		lx.tok.text = text
		if err != nil {
			lx.R += err.Off
			return lx.lexError(err)
		}
		lx.R += n
		if done {
			return nil
		}
		if !lx.Fill() && lx.Err != nil && !errors.Is(lx.Err, io.EOF) {
			return lx.Err
		}
	}
}

// lexError returns an error of the lexical core, met at lx.R, as the
// lexer's: a syntax error, an invalid IRI or a term too long, or the read
// error that ended the input there.
func (lx *ttlLexer) lexError(e *rdflex.Error) error {
	if lx.R == lx.W && lx.Err != nil && !errors.Is(lx.Err, io.EOF) {
		return lx.Err // the input ended there, not by its end: a read error
	}
	switch e.Kind {
	case rdflex.InvalidIRI:
		return fmt.Errorf("%w: %s", ErrInvalidIRI, e.Msg)
	case rdflex.TooLong:
		return fmt.Errorf("%w (a term of more than %d bytes)", ErrLineTooLong, lx.max)
	}
	return syntaxf("%s", e.Msg)
}

// uchar reads UCHAR at a backslash: \uXXXX or \UXXXXXXXX naming a Unicode
// scalar value.
func (lx *ttlLexer) uchar() (rune, error) {
	lx.peekAt(9) // the longest escape, or to the end of the input
	r, size, err := rdflex.UCHAR(lx.Buf[lx.R:lx.W], true)
	if err != nil {
		return 0, lx.lexError(err)
	}
	lx.R += size
	return r, nil
}

// stringLit checks a string literal in any of its four forms and skips it:
// its text is no record, so it is never held, whatever its length.
func (lx *ttlLexer) stringLit(q byte) error {
	long := lx.peekAt(1) == int(q) && lx.peekAt(2) == int(q)
	if long {
		lx.R += 3
	} else {
		lx.R++
	}
	for {
		// The plain run.
		for lx.R < lx.W {
			c := lx.Buf[lx.R]
			if c == q || c == '\\' || c == '\n' || c == '\r' || c >= utf8.RuneSelf {
				break
			}
			lx.R++
		}
		c := lx.peek()
		switch {
		case c == eofByte:
			return lx.readErr("a string")
		case c == int(q):
			if !long {
				lx.R++
				return nil
			}
			if lx.peekAt(1) == int(q) && lx.peekAt(2) == int(q) {
				// The first three quotes end a long string: one or two
				// quotes in its text are followed by another character.
				lx.R += 3
				return nil
			}
			lx.R++
		case c == '\\':
			if e := lx.peekAt(1); e >= 0 && rdflex.IsECHAR(byte(e)) {
				lx.R += 2
			} else if _, err := lx.uchar(); err != nil {
				return err
			}
		case c == '\n' || c == '\r':
			if !long {
				return syntaxf("line break in a string (use a long string or \\n)")
			}
			lx.R++
			if c == '\n' {
				lx.newline()
			}
		default:
			r, size := lx.peekRune()
			if r == utf8.RuneError && size == 1 {
				return syntaxf("invalid UTF-8 in a string")
			}
			lx.R += size
		}
	}
}

// blankLabel reads BLANK_NODE_LABEL:
// '_:' (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?
func (lx *ttlLexer) blankLabel() error {
	if lx.peekAt(1) != ':' {
		return syntaxf("'_' not followed by ':'")
	}
	lx.R += 2
	r, size := lx.peekRune()
	if size == 0 || r == utf8.RuneError && size == 1 || !(rdflex.IsPNCharsU(r) || '0' <= r && r <= '9') {
		return syntaxf("invalid blank node label")
	}
	lx.R += size
	n := size
	dots := 0
	for {
		r, size := lx.peekRune()
		switch {
		case r == '.' && size == 1:
			dots++
		case size > 0 && !(r == utf8.RuneError && size == 1) && rdflex.IsPNChars(r):
			dots = 0
		default:
			lx.dots = dots
			return nil
		}
		lx.R += size
		if n += size; n > lx.max {
			return fmt.Errorf("%w (a blank node label of more than %d bytes)", ErrLineTooLong, lx.max)
		}
	}
}

// langTag reads '@' [a-zA-Z]+ ('-' [a-zA-Z0-9]+)* into lx.tok.text.
func (lx *ttlLexer) langTag() error {
	lx.R++ // '@'
	if !lx.letters(isAlpha) {
		return syntaxf("invalid language tag")
	}
	for lx.peek() == '-' {
		lx.R++
		lx.tok.text = append(lx.tok.text, '-')
		if !lx.letters(isAlnum) {
			return syntaxf("invalid language tag")
		}
	}
	if len(lx.tok.text) > lx.max {
		return fmt.Errorf("%w (a language tag of more than %d bytes)", ErrLineTooLong, lx.max)
	}
	return nil
}

// letters appends a run of bytes for which ok holds and reports whether
// there was one.
func (lx *ttlLexer) letters(ok func(byte) bool) bool {
	n := 0
	for c := lx.peek(); c >= 0 && ok(byte(c)); c = lx.peek() {
		if len(lx.tok.text) <= lx.max {
			lx.tok.text = append(lx.tok.text, byte(c))
		}
		lx.R++
		n++
	}
	return n > 0
}

// number reads INTEGER, DECIMAL or DOUBLE. Its text is not kept.
func (lx *ttlLexer) number() error {
	t := &lx.tok
	if c := lx.peek(); c == '+' || c == '-' {
		lx.R++
	}
	intDigits := lx.digits()
	t.kind = tInteger
	if lx.peek() == '.' {
		d := lx.peekAt(1)
		switch {
		case '0' <= d && d <= '9':
			lx.R++
			lx.digits()
			t.kind = tDecimal
		case intDigits > 0 && lx.exponentAt(1):
			lx.R++
			t.kind = tDecimal
		}
	}
	if t.kind == tInteger && intDigits == 0 {
		return syntaxf("sign not followed by a number")
	}
	if lx.exponentAt(0) {
		lx.R++ // e or E
		if c := lx.peek(); c == '+' || c == '-' {
			lx.R++
		}
		lx.digits()
		t.kind = tDouble
	}
	return nil
}

// exponentAt reports whether an EXPONENT starts k bytes ahead.
func (lx *ttlLexer) exponentAt(k int) bool {
	if c := lx.peekAt(k); c != 'e' && c != 'E' {
		return false
	}
	c := lx.peekAt(k + 1)
	if c == '+' || c == '-' {
		c = lx.peekAt(k + 2)
	}
	return '0' <= c && c <= '9'
}

// digits skips [0-9]* and returns how many.
func (lx *ttlLexer) digits() int {
	n := 0
	for c := lx.peek(); '0' <= c && c <= '9'; c = lx.peek() {
		lx.R++
		n++
	}
	return n
}

// name reads a prefixed name (PNAME_NS, PNAME_LN) or a bare word (the
// keywords a, true, false, PREFIX, BASE, GRAPH).
func (lx *ttlLexer) name() error {
	t := &lx.tok
	// PN_PREFIX ::= PN_CHARS_BASE ((PN_CHARS | '.')* PN_CHARS)?
	r, size := lx.peekRune()
	if r != ':' {
		if size == 0 || r == utf8.RuneError && size == 1 || !rdflex.IsPNCharsBase(r) {
			if r == utf8.RuneError && size == 1 {
				return syntaxf("invalid UTF-8")
			}
			return syntaxf("unexpected %q", r)
		}
		dots := 0
		for {
			// The ASCII run, at once.
			start := lx.R
			for lx.R < lx.W && pnameByte[lx.Buf[lx.R]] == nameAny {
				lx.R++
			}
			if lx.R > start {
				if err := lx.add(lx.Buf[start:lx.R]); err != nil {
					return err
				}
				dots = 0
			}
			r, size = lx.peekRune()
			if r == '.' && size == 1 {
				dots++
			} else if size > 0 && !(r == utf8.RuneError && size == 1) && rdflex.IsPNChars(r) {
				dots = 0
			} else {
				break
			}
			if err := lx.add(lx.Buf[lx.R : lx.R+size]); err != nil {
				return err
			}
			lx.R += size
		}
		if r != ':' {
			t.kind = tWord
			t.text = t.text[:len(t.text)-dots]
			lx.dots = dots
			return nil
		}
		if dots > 0 {
			return syntaxf("prefix ends with '.'")
		}
	}
	lx.R++ // ':'
	t.kind = tPName
	t.prefix = append(t.prefix, t.text...)
	t.text = t.text[:0]
	return lx.localName()
}

// localName reads PN_LOCAL, decoding its backslash escapes (percent
// encodings are kept as they are):
// (PN_CHARS_U | ':' | [0-9] | PLX) ((PN_CHARS | '.' | ':' | PLX)* (PN_CHARS | ':' | PLX))?
func (lx *ttlLexer) localName() error {
	dots := 0
	for first := true; ; first = false {
		// The ASCII run, at once (a '-' or ':' may not come first).
		start := lx.R
		for lx.R < lx.W {
			k := pnameByte[lx.Buf[lx.R]]
			if k == 0 || first && k == nameNotFirst {
				break
			}
			lx.R++
			first = false
		}
		if lx.R > start {
			if err := lx.add(lx.Buf[start:lx.R]); err != nil {
				return err
			}
			dots = 0
		}
		r, size := lx.peekRune()
		switch {
		case size == 0:
		case r == '.' && size == 1:
			if first {
				return nil // a '.' after a PNAME_NS is a token of its own
			}
			dots++
			if err := lx.add([]byte{'.'}); err != nil {
				return err
			}
			lx.R++
			continue
		case r == '%':
			_, ok1 := rdflex.HexDigit(lx.peekAt(1))
			_, ok2 := rdflex.HexDigit(lx.peekAt(2))
			if !ok1 || !ok2 {
				return syntaxf("'%%' not followed by two hex digits in a local name")
			}
			if err := lx.add(lx.Buf[lx.R : lx.R+3]); err != nil {
				return err
			}
			lx.R += 3
			dots = 0
			continue
		case r == '\\':
			e := lx.peekAt(1)
			if e < 0 || !isLocalEscape(byte(e)) {
				return syntaxf("invalid escape in a local name")
			}
			if err := lx.add([]byte{byte(e)}); err != nil {
				return err
			}
			lx.R += 2
			dots = 0
			continue
		case r == utf8.RuneError && size == 1:
		case rdflex.IsPNCharsU(r) || r == ':' || '0' <= r && r <= '9' || !first && rdflex.IsPNChars(r):
			if err := lx.add(lx.Buf[lx.R : lx.R+size]); err != nil {
				return err
			}
			lx.R += size
			dots = 0
			continue
		}
		// The end of the name: trailing dots are tokens of their own.
		lx.tok.text = lx.tok.text[:len(lx.tok.text)-dots]
		lx.dots = dots
		return nil
	}
}

// isLocalEscape reports whether c may follow a backslash in a local name
// (PN_LOCAL_ESC).
func isLocalEscape(c byte) bool {
	switch c {
	case '_', '~', '.', '-', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', '/', '?', '#', '@', '%':
		return true
	}
	return false
}

// Classes of pnameByte.
const (
	nameAny      = 1 // may appear anywhere in a prefix or a local name: [A-Za-z0-9_]
	nameNotFirst = 2 // '-': anywhere but first
	nameLocal    = 3 // ':': in a local name, not in a prefix
)

// pnameByte classifies the ASCII bytes of prefixed names, for the fast path
// of the lexer (the slow path checks every rune against the grammar).
var pnameByte = func() (t [256]byte) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = nameAny, nameAny
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = nameAny
	}
	t['_'], t['-'], t[':'] = nameAny, nameNotFirst, nameLocal
	return t
}()
