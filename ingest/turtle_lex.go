package ingest

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
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
	window
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
	return &ttlLexer{window: newWindow(r), line: 1, max: max}
}

// peek returns the next byte, or eofByte.
func (lx *ttlLexer) peek() int {
	if lx.r < lx.w || lx.fill() {
		return int(lx.buf[lx.r])
	}
	return eofByte
}

// peekAt returns the byte k (< 8) bytes ahead, or eofByte.
func (lx *ttlLexer) peekAt(k int) int {
	for lx.r+k >= lx.w {
		if !lx.fill() {
			return eofByte
		}
	}
	return int(lx.buf[lx.r+k])
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
	if !utf8.FullRune(lx.buf[lx.r:lx.w]) {
		lx.peekAt(utf8.UTFMax - 1)
	}
	return utf8.DecodeRune(lx.buf[lx.r:lx.w])
}

// readErr is the error for an input that ended inside a token: a read
// error, or a syntax error at the end of input.
func (lx *ttlLexer) readErr(what string) error {
	if lx.err != nil && !errors.Is(lx.err, io.EOF) {
		return lx.err
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
func (lx *ttlLexer) col() int { return lx.off + lx.r - lx.lineOff + 1 }

// newline counts a line feed just consumed.
func (lx *ttlLexer) newline() {
	lx.line++
	lx.lineOff = lx.off + lx.r
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
		if lx.err != nil && !errors.Is(lx.err, io.EOF) {
			return lx.err
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
		lx.r += 2
		t.kind = tDatatype
		return nil
	case '0' <= c && c <= '9' || c == '+' || c == '-':
		return lx.number()
	case c == '.':
		if d := lx.peekAt(1); '0' <= d && d <= '9' {
			return lx.number()
		}
		lx.r++
		t.kind, t.c = tPunct, '.'
		return nil
	case c == ';' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')' || c == '{' || c == '}':
		lx.r++
		t.kind, t.c = tPunct, byte(c)
		return nil
	}
	return lx.name()
}

// skipSpace skips white space and comments, counting lines.
func (lx *ttlLexer) skipSpace() error {
	for {
		for lx.r < lx.w {
			switch lx.buf[lx.r] {
			case '\n':
				lx.r++
				lx.newline()
				continue
			case ' ', '\t', '\r':
			case '#':
				lx.r++
				if err := lx.skipComment(); err != nil {
					return err
				}
				continue
			default:
				return nil
			}
			lx.r++
		}
		if !lx.fill() {
			return nil
		}
	}
}

// skipComment skips to the end of the line (the newline stays).
func (lx *ttlLexer) skipComment() error {
	for {
		for lx.r < lx.w {
			c := lx.buf[lx.r]
			if c == '\n' || c == '\r' {
				return nil
			}
			lx.r++
		}
		if !lx.fill() {
			return nil
		}
	}
}

// iriRef reads IRIREF ('<' ([^#x00-#x20<>"{}|^`\] | UCHAR)* '>') and
// decodes its escapes into lx.tok.text.
func (lx *ttlLexer) iriRef() error {
	lx.r++ // '<'
	for {
		// The plain run, appended at once.
		start := lx.r
		for lx.r < lx.w {
			c := lx.buf[lx.r]
			if c >= utf8.RuneSelf || forbiddenInIRI(c) {
				break
			}
			lx.r++
		}
		if lx.r > start {
			if err := lx.add(lx.buf[start:lx.r]); err != nil {
				return err
			}
		}
		c := lx.peek()
		switch {
		case c == eofByte:
			return lx.readErr("an IRI")
		case c == '>':
			lx.r++
			return nil
		case c == '\\':
			r, err := lx.uchar()
			if err != nil {
				return err
			}
			if r < utf8.RuneSelf && forbiddenInIRI(byte(r)) {
				return fmt.Errorf("%w: escape of forbidden character %q", ErrInvalidIRI, r)
			}
			if err := lx.add(utf8.AppendRune(nil, r)); err != nil {
				return err
			}
		case c < utf8.RuneSelf && !forbiddenInIRI(byte(c)):
			continue // the plain run went on past the buffer
		case c < utf8.RuneSelf:
			if c == '\n' {
				return fmt.Errorf("%w: newline in an IRI", ErrInvalidIRI)
			}
			return fmt.Errorf("%w: forbidden character %q", ErrInvalidIRI, rune(c))
		default:
			r, size := lx.peekRune()
			if r == utf8.RuneError && size == 1 {
				return fmt.Errorf("%w: invalid UTF-8", ErrInvalidIRI)
			}
			if err := lx.add(lx.buf[lx.r : lx.r+size]); err != nil {
				return err
			}
			lx.r += size
		}
	}
}

// uchar reads UCHAR at a backslash: \uXXXX or \UXXXXXXXX naming a Unicode
// scalar value.
func (lx *ttlLexer) uchar() (rune, error) {
	var n int
	switch lx.peekAt(1) {
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return 0, syntaxf("invalid escape")
	}
	lx.r += 2
	var r rune
	for k := 0; k < n; k++ {
		c := lx.peek()
		d, ok := hexDigit(c)
		if !ok {
			return 0, syntaxf("invalid \\u or \\U escape")
		}
		r = r<<4 | rune(d)
		lx.r++
	}
	if !utf8.ValidRune(r) {
		return 0, syntaxf("escape U+%X is not a Unicode scalar value", r)
	}
	return r, nil
}

// hexDigit returns the value of the hex digit c, a byte or eofByte, and
// whether it is one.
func hexDigit(c int) (byte, bool) {
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

// stringLit checks a string literal in any of its four forms and skips it:
// its text is no record, so it is never held, whatever its length.
func (lx *ttlLexer) stringLit(q byte) error {
	long := lx.peekAt(1) == int(q) && lx.peekAt(2) == int(q)
	if long {
		lx.r += 3
	} else {
		lx.r++
	}
	for {
		// The plain run.
		for lx.r < lx.w {
			c := lx.buf[lx.r]
			if c == q || c == '\\' || c == '\n' || c == '\r' || c >= utf8.RuneSelf {
				break
			}
			lx.r++
		}
		c := lx.peek()
		switch {
		case c == eofByte:
			return lx.readErr("a string")
		case c == int(q):
			if !long {
				lx.r++
				return nil
			}
			if lx.peekAt(1) == int(q) && lx.peekAt(2) == int(q) {
				// The first three quotes end a long string: one or two
				// quotes in its text are followed by another character.
				lx.r += 3
				return nil
			}
			lx.r++
		case c == '\\':
			switch lx.peekAt(1) {
			case 't', 'b', 'n', 'r', 'f', '"', '\'', '\\':
				lx.r += 2
			default:
				if _, err := lx.uchar(); err != nil {
					return err
				}
			}
		case c == '\n' || c == '\r':
			if !long {
				return syntaxf("line break in a string (use a long string or \\n)")
			}
			lx.r++
			if c == '\n' {
				lx.newline()
			}
		default:
			r, size := lx.peekRune()
			if r == utf8.RuneError && size == 1 {
				return syntaxf("invalid UTF-8 in a string")
			}
			lx.r += size
		}
	}
}

// blankLabel reads BLANK_NODE_LABEL:
// '_:' (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?
func (lx *ttlLexer) blankLabel() error {
	if lx.peekAt(1) != ':' {
		return syntaxf("'_' not followed by ':'")
	}
	lx.r += 2
	r, size := lx.peekRune()
	if size == 0 || r == utf8.RuneError && size == 1 || !(isPNCharsU(r) || '0' <= r && r <= '9') {
		return syntaxf("invalid blank node label")
	}
	lx.r += size
	n := size
	dots := 0
	for {
		r, size := lx.peekRune()
		switch {
		case r == '.' && size == 1:
			dots++
		case size > 0 && !(r == utf8.RuneError && size == 1) && isPNChars(r):
			dots = 0
		default:
			lx.dots = dots
			return nil
		}
		lx.r += size
		if n += size; n > lx.max {
			return fmt.Errorf("%w (a blank node label of more than %d bytes)", ErrLineTooLong, lx.max)
		}
	}
}

// langTag reads '@' [a-zA-Z]+ ('-' [a-zA-Z0-9]+)* into lx.tok.text.
func (lx *ttlLexer) langTag() error {
	lx.r++ // '@'
	if !lx.letters(isAlpha) {
		return syntaxf("invalid language tag")
	}
	for lx.peek() == '-' {
		lx.r++
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
		lx.r++
		n++
	}
	return n > 0
}

// number reads INTEGER, DECIMAL or DOUBLE. Its text is not kept.
func (lx *ttlLexer) number() error {
	t := &lx.tok
	if c := lx.peek(); c == '+' || c == '-' {
		lx.r++
	}
	intDigits := lx.digits()
	t.kind = tInteger
	if lx.peek() == '.' {
		d := lx.peekAt(1)
		switch {
		case '0' <= d && d <= '9':
			lx.r++
			lx.digits()
			t.kind = tDecimal
		case intDigits > 0 && lx.exponentAt(1):
			lx.r++
			t.kind = tDecimal
		}
	}
	if t.kind == tInteger && intDigits == 0 {
		return syntaxf("sign not followed by a number")
	}
	if lx.exponentAt(0) {
		lx.r++ // e or E
		if c := lx.peek(); c == '+' || c == '-' {
			lx.r++
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
		lx.r++
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
		if size == 0 || r == utf8.RuneError && size == 1 || !isPNCharsBase(r) {
			if r == utf8.RuneError && size == 1 {
				return syntaxf("invalid UTF-8")
			}
			return syntaxf("unexpected %q", r)
		}
		dots := 0
		for {
			// The ASCII run, at once.
			start := lx.r
			for lx.r < lx.w && pnameByte[lx.buf[lx.r]] == nameAny {
				lx.r++
			}
			if lx.r > start {
				if err := lx.add(lx.buf[start:lx.r]); err != nil {
					return err
				}
				dots = 0
			}
			r, size = lx.peekRune()
			if r == '.' && size == 1 {
				dots++
			} else if size > 0 && !(r == utf8.RuneError && size == 1) && isPNChars(r) {
				dots = 0
			} else {
				break
			}
			if err := lx.add(lx.buf[lx.r : lx.r+size]); err != nil {
				return err
			}
			lx.r += size
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
	lx.r++ // ':'
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
		start := lx.r
		for lx.r < lx.w {
			k := pnameByte[lx.buf[lx.r]]
			if k == 0 || first && k == nameNotFirst {
				break
			}
			lx.r++
			first = false
		}
		if lx.r > start {
			if err := lx.add(lx.buf[start:lx.r]); err != nil {
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
			lx.r++
			continue
		case r == '%':
			_, ok1 := hexDigit(lx.peekAt(1))
			_, ok2 := hexDigit(lx.peekAt(2))
			if !ok1 || !ok2 {
				return syntaxf("'%%' not followed by two hex digits in a local name")
			}
			if err := lx.add(lx.buf[lx.r : lx.r+3]); err != nil {
				return err
			}
			lx.r += 3
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
			lx.r += 2
			dots = 0
			continue
		case r == utf8.RuneError && size == 1:
		case isPNCharsU(r) || r == ':' || '0' <= r && r <= '9' || !first && isPNChars(r):
			if err := lx.add(lx.buf[lx.r : lx.r+size]); err != nil {
				return err
			}
			lx.r += size
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
