package xmlscan

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/scanbuf"
)

// Fixed limits. Going over one is an Error of kind Limit that ends the
// scan.
const (
	MaxName       = 1024 // bytes of an element, attribute or PI target name
	MaxNamespaces = 256  // namespace declarations in scope
	MaxXMLDecl    = 1024 // bytes of an <?xml ...?> declaration
)

// XMLNamespace is the namespace the prefix "xml" is bound to.
const XMLNamespace = "http://www.w3.org/XML/1998/namespace"

// bufSize is the size of the scanner's read buffer.
const bufSize = 64 << 10

// A Handler takes a document's structure from a Scanner, as the scanner
// meets it. An error a handler returns ends the scan and is Run's, as it
// is.
type Handler interface {
	// StartElement is called after each start tag, the element open
	// (Depth counts it; Local, Space and StartElement describe it).
	StartElement(s *Scanner) error
	// EndElement is called at the end of each element (its end tag, or
	// the end of an empty-element tag), the element still open.
	EndElement(s *Scanner) error
	// CharData is called with the decoded character data of the text
	// and CDATA sections met while SetText(true) holds, in pieces, each
	// valid for the call only.
	CharData(b []byte)
	// TextEnd is called at the end of each run of text or CDATA section
	// met while SetText(true) holds.
	TextEnd(s *Scanner) error
}

// Options configures a Scanner.
type Options struct {
	// MaxDepth bounds the element nesting, the root being 1.
	MaxDepth int
	// SkipSpace leaves out the white space (space, tab, CR, LF) that
	// starts a run of text: a run of nothing else reaches the Handler not
	// at all, neither CharData nor TextEnd. For a document whose white
	// space between elements means nothing.
	SkipSpace bool
	// MaxValue, when positive, keeps every attribute's value, up to
	// MaxValue bytes (a longer one is an Error of kind TooLong), for
	// StartElement. When 0, attribute values are checked and dropped, and
	// of a namespace declaration only what an error message shows is
	// kept (Space says whether that is all of it).
	MaxValue int
}

// Kind is the class of an Error.
type Kind uint8

const (
	// Syntax: the document is not well-formed XML.
	Syntax Kind = iota
	// Limit: the document goes over a fixed limit or Options.MaxDepth.
	Limit
	// TooLong: an attribute value is longer than Options.MaxValue.
	TooLong
	// Read: reading the input failed (Err).
	Read
)

// Error is what ends a scan that its Handler did not end: the class, the
// 1-based line it was met on, what is wrong, and for Read the reader's
// error.
type Error struct {
	Kind Kind
	Line int
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Kind == Read {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the read error of a Read error.
func (e *Error) Unwrap() error { return e.Err }

// Scanner scans one document. Its methods that describe the element at
// hand are for the Handler's calls.
type Scanner struct {
	scanbuf.Window
	line int // 1-based line of the next byte
	h    Handler
	o    Options

	// Open elements: their names, back to back in names, and a frame each.
	names  []byte
	frames []frame
	binds  []binding // namespace declarations in scope, innermost last

	text    bool   // character data goes to the handler
	started bool   // with SkipSpace: the run of text at hand is past its leading white space
	sink    int    // where character data goes: sinkNone, sinkText, sinkNS or sinkValue
	ns      nsText // a namespace declaration being read (MaxValue 0)
	val     []byte // an attribute value being read (MaxValue > 0)
	valLong bool   // val went over MaxValue
	attrs   []rawAttr
	qname   []byte  // the name being read
	scratch []byte  // a reference being read (for its error message), or an XML declaration
	one     [4]byte // the bytes of one decoded character
	elem    xml.StartElement
}

// rawAttr is an attribute as read, before its prefix is resolved.
type rawAttr struct {
	qname string
	colon int // -1 when unprefixed
	value string
}

// frame is an open element.
type frame struct {
	start, colon, end int // its name is names[start:end]; colon is -1 when unprefixed
	binds             int // len(binds) before its declarations
}

// binding is a namespace declaration: xmlns:prefix="space" or xmlns="space".
type binding struct {
	prefix string
	space  string // with MaxValue 0, at most maxQuote+1 bytes of it
	whole  bool   // space is all of it
}

// Character data sinks.
const (
	sinkNone  = iota
	sinkText  // the handler's CharData
	sinkNS    // a namespace declaration's value, its first bytes
	sinkValue // an attribute value, whole up to MaxValue
)

// New returns a scanner of r that drives h.
func New(r io.Reader, h Handler, o Options) *Scanner {
	return &Scanner{Window: scanbuf.New(r, bufSize), line: 1, h: h, o: o}
}

// Line returns the 1-based line of the next byte to scan.
func (s *Scanner) Line() int { return s.line }

// Depth returns how many elements are open.
func (s *Scanner) Depth() int { return len(s.frames) }

// SetText sets whether the character data that follows goes to the
// Handler (CharData, TextEnd) until the next call.
func (s *Scanner) SetText(on bool) { s.text = on }

// Local returns the local name of the innermost open element, valid until
// the scanner goes on.
func (s *Scanner) Local() []byte {
	f := s.frames[len(s.frames)-1]
	return s.names[max(f.start, f.colon+1):f.end]
}

// Space returns the namespace of the innermost open element, as
// encoding/xml resolves it (the prefix itself when no declaration binds
// it, "" for an unprefixed element out of any default namespace), and
// whether that is all of it (with Options.MaxValue 0, only the first
// bytes of a long declared one are kept).
func (s *Scanner) Space() (space string, whole bool) {
	f := s.frames[len(s.frames)-1]
	var prefix []byte
	if f.colon >= 0 {
		prefix = s.names[f.start:f.colon]
	}
	switch string(prefix) {
	case "xmlns":
		return "xmlns", true
	case "xml":
		return XMLNamespace, true
	}
	for i := len(s.binds) - 1; i >= 0; i-- {
		if s.binds[i].prefix == string(prefix) {
			return s.binds[i].space, s.binds[i].whole
		}
	}
	return string(prefix), true
}

// StartElement returns the innermost open element with its names
// resolved as encoding/xml resolves them, and its attributes (with
// Options.MaxValue positive), valid until the scanner goes on. A prefix no
// declaration binds, which encoding/xml takes for a namespace, is an
// Error of kind Syntax here.
func (s *Scanner) StartElement() (*xml.StartElement, error) {
	space, _ := s.Space()
	f := s.frames[len(s.frames)-1]
	if f.colon >= 0 && space == string(s.names[f.start:f.colon]) {
		if _, ok := s.lookup(space); !ok {
			return nil, s.syntaxError("unbound namespace prefix " + quote(space))
		}
	}
	e := &s.elem
	e.Name = xml.Name{Space: space, Local: string(s.Local())}
	e.Attr = e.Attr[:0]
	for _, a := range s.attrs {
		n := xml.Name{Local: a.qname}
		if a.colon >= 0 {
			prefix := a.qname[:a.colon]
			n.Local = a.qname[a.colon+1:]
			space, ok := s.lookup(prefix)
			if !ok {
				return nil, s.syntaxError("unbound namespace prefix " + quote(prefix))
			}
			n.Space = space
		}
		e.Attr = append(e.Attr, xml.Attr{Name: n, Value: a.value})
	}
	return e, nil
}

// lookup returns the namespace bound to prefix, as encoding/xml names
// the predeclared xml and xmlns ones, and whether a declaration in scope
// binds it.
func (s *Scanner) lookup(prefix string) (string, bool) {
	switch prefix {
	case "xml":
		return XMLNamespace, true
	case "xmlns":
		return "xmlns", true
	}
	for i := len(s.binds) - 1; i >= 0; i-- {
		if s.binds[i].prefix == prefix {
			return s.binds[i].space, true
		}
	}
	return "", false
}

// ensure tries to have n bytes in Buf[R:W]; fewer mean the end of the input.
func (s *Scanner) ensure(n int) {
	for s.W-s.R < n && s.Fill() {
	}
}

// getc consumes a byte; ok is false at the end of the input or on an error.
func (s *Scanner) getc() (c byte, ok bool) {
	if s.R == s.W && !s.Fill() {
		return 0, false
	}
	c = s.Buf[s.R]
	s.R++
	if c == '\n' {
		s.line++
	}
	return c, true
}

// unget gives back the byte getc returned last.
func (s *Scanner) unget() {
	s.R--
	if s.Buf[s.R] == '\n' {
		s.line--
	}
}

// mustgetc is getc where the end of the input is an error.
func (s *Scanner) mustgetc() (byte, error) {
	c, ok := s.getc()
	if !ok {
		return 0, s.eofError()
	}
	return c, nil
}

// eofError returns the error for input that ended too soon: a syntax error
// at its end, or the read error that ended it.
func (s *Scanner) eofError() error {
	if errors.Is(s.Err, io.EOF) {
		return s.syntaxError("unexpected EOF")
	}
	return &Error{Kind: Read, Line: s.line, Err: s.Err}
}

func (s *Scanner) syntaxError(msg string) error {
	return &Error{Kind: Syntax, Line: s.line, Msg: msg}
}

func (s *Scanner) limitError(format string, args ...any) error {
	return &Error{Kind: Limit, Line: s.line, Msg: fmt.Sprintf(format, args...)}
}

// Run scans the whole document. It returns nil at its end, all its
// elements closed: whether there was a root element is the Handler's to
// say.
func (s *Scanner) Run() error {
	for {
		c, ok := s.getc()
		if !ok {
			switch {
			case !errors.Is(s.Err, io.EOF):
				return &Error{Kind: Read, Line: s.line, Err: s.Err}
			case len(s.frames) > 0:
				return s.syntaxError("unexpected EOF")
			}
			return nil
		}
		if c != '<' {
			s.unget()
			if err := s.charData(false); err != nil {
				return err
			}
			continue
		}
		if c, ok = s.getc(); !ok {
			return s.eofError()
		}
		var err error
		switch c {
		case '/':
			err = s.endTag()
		case '?':
			err = s.procInst()
		case '!':
			err = s.bang()
		default:
			s.unget()
			err = s.startTag()
		}
		if err != nil {
			return err
		}
	}
}

// charData reads a run of text, or a CDATA section with cdata set (the
// "<![CDATA[" read), for the handler when it asks.
func (s *Scanner) charData(cdata bool) error {
	s.sink = sinkNone
	if s.text {
		s.sink = sinkText
	}
	s.started = !s.o.SkipSpace
	if err := s.chars(0, cdata); err != nil {
		return err
	}
	if s.sink == sinkText && s.started {
		return s.h.TextEnd(s)
	}
	return nil
}

// textByte holds the bytes that character data takes as they are, with
// nothing to check or decode: tab, and printable ASCII but <&>]"'.
var textByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = true
	}
	for _, c := range "<&>]\"'" {
		t[c] = false
	}
	t['\t'] = true
	return t
}()

// cdataByte is textByte for a CDATA section, where only "]]>" is special.
var cdataByte = func() (t [256]bool) {
	t = textByte
	for _, c := range "<&\"'" {
		t[c] = true
	}
	return t
}()

// chars reads character data, decoding references and turning CR and CRLF
// into LF, into s.sink: text up to the next '<' (quote and cdata unset), an
// attribute value up to its closing quote, consumed (quote set, the opening
// one read), or a CDATA section up to its "]]>", consumed (cdata set, the
// "<![CDATA[" read).
func (s *Scanner) chars(quote byte, cdata bool) error {
	var b0, b1 byte // the last two bytes read, raw, for "]]>" and CRLF
	held := 0       // ']' bytes of a CDATA section held back: they may end it
	plain := &textByte
	if cdata {
		plain = &cdataByte
	}
	for {
		if s.R == s.W && !s.Fill() {
			switch {
			case !errors.Is(s.Err, io.EOF):
				return &Error{Kind: Read, Line: s.line, Err: s.Err}
			case cdata:
				return s.syntaxError("unexpected EOF in CDATA section")
			case quote != 0:
				return s.syntaxError("unexpected EOF")
			}
			return nil
		}
		if i := s.R; plain[s.Buf[i]] {
			for i < s.W && plain[s.Buf[i]] {
				i++
			}
			if s.sink != sinkNone {
				if held > 0 {
					s.emit(brackets[:held])
					held = 0
				}
				s.emit(s.Buf[s.R:i])
			}
			if i-s.R >= 2 {
				b0 = s.Buf[i-2]
			} else {
				b0 = b1
			}
			b1 = s.Buf[i-1]
			s.R = i
			continue
		}
		c := s.Buf[s.R]
		if quote == 0 && c == '>' && b0 == ']' && b1 == ']' {
			if cdata {
				s.R++
				return nil
			}
			return s.syntaxError("unescaped ]]> not in CDATA section")
		}
		if cdata && c == ']' {
			s.R++
			if held == 2 {
				s.emit(brackets[:1])
			} else {
				held++
			}
			b0, b1 = b1, c
			continue
		}
		if held > 0 {
			s.emit(brackets[:held])
			held = 0
		}
		switch {
		case c == '<' && !cdata:
			if quote != 0 {
				return s.syntaxError("unescaped < inside quoted string")
			}
			return nil
		case quote != 0 && c == quote:
			s.R++
			return nil
		case c == '&' && !cdata:
			s.R++
			b, err := s.reference()
			if err != nil {
				return err
			}
			s.emit(b)
			b0, b1 = 0, 0
			continue
		case c == '\r':
			s.R++
			s.emit(newline)
		case c == '\n':
			s.R++
			s.line++
			if b1 != '\r' {
				s.emit(newline)
			}
		case c < utf8.RuneSelf:
			s.R++
			if c < 0x20 {
				return s.syntaxError(fmt.Sprintf("illegal character code %U", rune(c)))
			}
			s.emit(s.Buf[s.R-1 : s.R])
		default:
			s.ensure(utf8.UTFMax)
			r, size := utf8.DecodeRune(s.Buf[s.R:s.W])
			if r == utf8.RuneError && size == 1 {
				return s.syntaxError("invalid UTF-8")
			}
			if !isInCharacterRange(r) {
				return s.syntaxError(fmt.Sprintf("illegal character code %U", r))
			}
			s.emit(s.Buf[s.R : s.R+size])
			s.R += size
			c = 0x80 // a byte of no meaning here
		}
		b0, b1 = b1, c
	}
}

var (
	brackets = []byte("]]")
	newline  = []byte("\n")
)

// emit passes decoded character data to the sink.
func (s *Scanner) emit(b []byte) {
	switch s.sink {
	case sinkText:
		if !s.started {
			for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
				b = b[1:]
			}
			if len(b) == 0 {
				return
			}
			s.started = true
		}
		s.h.CharData(b)
	case sinkNS:
		s.ns.add(b)
	case sinkValue:
		if len(s.val)+len(b) > s.o.MaxValue {
			s.valLong = true
			return
		}
		s.val = append(s.val, b...)
	}
}

// isInCharacterRange reports whether r is a Char of XML 1.0.
func isInCharacterRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// predefined holds the characters of the predefined entities lt, gt, amp,
// apos and quot.
var predefined = []byte(`<>&'"`)

// maxRefQuote is the most bytes of a bad reference quoted in an error.
const maxRefQuote = 32

// reference decodes a character or entity reference, the '&' read, and
// returns its UTF-8 bytes, valid until the next call. Only character
// references and the five predefined entities are known.
func (s *Scanner) reference() ([]byte, error) {
	s.scratch = append(s.scratch[:0], '&')
	c, err := s.mustgetc()
	if err != nil {
		return nil, err
	}
	if c == '#' {
		s.scratch = append(s.scratch, c)
		if c, err = s.mustgetc(); err != nil {
			return nil, err
		}
		base := rune(10)
		if c == 'x' {
			base = 16
			s.scratch = append(s.scratch, c)
			if c, err = s.mustgetc(); err != nil {
				return nil, err
			}
		}
		var r rune
		digits := 0
		for {
			d := rune(-1)
			switch {
			case '0' <= c && c <= '9':
				d = rune(c - '0')
			case base == 16 && 'a' <= c && c <= 'f':
				d = rune(c-'a') + 10
			case base == 16 && 'A' <= c && c <= 'F':
				d = rune(c-'A') + 10
			}
			if d < 0 {
				break
			}
			if r = r*base + d; r > utf8.MaxRune {
				r = utf8.MaxRune + 1 // too large, whatever follows
			}
			if digits++; digits <= maxRefQuote {
				s.scratch = append(s.scratch, c)
			}
			if c, err = s.mustgetc(); err != nil {
				return nil, err
			}
		}
		if digits > maxRefQuote {
			s.scratch = append(s.scratch, "..."...)
		}
		if c != ';' {
			s.unget()
			return nil, s.syntaxError("invalid character entity " + string(s.scratch) + " (no semicolon)")
		}
		s.scratch = append(s.scratch, ';')
		if digits == 0 || r > utf8.MaxRune {
			return nil, s.syntaxError("invalid character entity " + string(s.scratch))
		}
		if !utf8.ValidRune(r) {
			r = utf8.RuneError // what encoding/xml makes of a surrogate
		}
		if !isInCharacterRange(r) {
			return nil, s.syntaxError(fmt.Sprintf("illegal character code %U", r))
		}
		return utf8.AppendRune(s.one[:0], r), nil
	}
	// A name: name bytes and any non-ASCII byte, as encoding/xml reads it.
	for c >= utf8.RuneSelf || isNameByte(c) {
		if len(s.scratch) > maxRefQuote {
			return nil, s.syntaxError("invalid character entity " + string(s.scratch) + "...")
		}
		s.scratch = append(s.scratch, c)
		if c, err = s.mustgetc(); err != nil {
			return nil, err
		}
	}
	if c != ';' {
		s.unget()
		return nil, s.syntaxError("invalid character entity " + string(s.scratch) + " (no semicolon)")
	}
	switch string(s.scratch[1:]) {
	case "lt":
		return predefined[0:1], nil
	case "gt":
		return predefined[1:2], nil
	case "amp":
		return predefined[2:3], nil
	case "apos":
		return predefined[3:4], nil
	case "quot":
		return predefined[4:5], nil
	}
	s.scratch = append(s.scratch, ';')
	return nil, s.syntaxError("invalid character entity " + string(s.scratch))
}

// nameByte holds the bytes that encoding/xml reads as part of a name: ASCII
// name characters and every non-ASCII byte (checked afterwards).
var nameByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= utf8.RuneSelf || isNameByte(byte(c))
	}
	return t
}()

func isNameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '_' || c == ':' || c == '.' || c == '-'
}

// readName reads a name into s.qname. It returns false, having consumed
// nothing, when the next byte cannot be part of a name, and an error when
// the input ends, the name is longer than MaxName or it is not an XML name.
func (s *Scanner) readName() (bool, error) {
	s.qname = s.qname[:0]
	for {
		if s.R == s.W && !s.Fill() {
			return false, s.eofError()
		}
		i := s.R
		for i < s.W && nameByte[s.Buf[i]] {
			i++
		}
		if len(s.qname)+i-s.R > MaxName {
			return false, s.limitError("name longer than %d bytes", MaxName)
		}
		s.qname = append(s.qname, s.Buf[s.R:i]...)
		s.R = i
		if i < s.W {
			break
		}
	}
	if len(s.qname) == 0 {
		return false, nil
	}
	if !isName(s.qname) {
		return false, s.syntaxError("invalid XML name: " + string(s.qname))
	}
	return true, nil
}

// readQName reads a qualified name into s.qname and returns the index of its
// colon, or -1. A missing name, or one of more than one colon, is a syntax
// error saying what, else.
func (s *Scanner) readQName(what string) (int, error) {
	ok, err := s.readName()
	if err != nil {
		return 0, err
	}
	colon := -1
	if ok {
		colon = bytes.IndexByte(s.qname, ':')
	}
	if !ok || colon >= 0 && bytes.IndexByte(s.qname[colon+1:], ':') >= 0 {
		return 0, s.syntaxError(what)
	}
	if colon == 0 || colon == len(s.qname)-1 {
		colon = -1 // ":a" and "a:" are local names, to encoding/xml
	}
	return colon, nil
}

// space skips white space.
func (s *Scanner) space() {
	for {
		c, ok := s.getc()
		if !ok {
			return
		}
		if c != ' ' && c != '\r' && c != '\n' && c != '\t' {
			s.unget()
			return
		}
	}
}

// startTag reads a start tag, the '<' read, and hands it to the handler.
func (s *Scanner) startTag() error {
	colon, err := s.readQName("expected element name after <")
	if err != nil {
		return err
	}
	f := frame{start: len(s.names), binds: len(s.binds)}
	s.names = append(s.names, s.qname...)
	f.end = len(s.names)
	f.colon = f.start + colon
	if colon < 0 {
		f.colon = -1
	}
	s.frames = append(s.frames, f)
	if len(s.frames) > s.o.MaxDepth {
		return s.limitError("elements nested deeper than %d", s.o.MaxDepth)
	}
	s.attrs = s.attrs[:0]
	empty := false
	for {
		s.space()
		c, err := s.mustgetc()
		if err != nil {
			return err
		}
		if c == '/' {
			if c, err = s.mustgetc(); err != nil {
				return err
			}
			if c != '>' {
				return s.syntaxError("expected /> in element")
			}
			empty = true
			break
		}
		if c == '>' {
			break
		}
		s.unget()
		if err := s.attribute(); err != nil {
			return err
		}
	}
	if err := s.h.StartElement(s); err != nil {
		return err
	}
	if empty {
		return s.end()
	}
	return nil
}

// attribute reads an attribute: a namespace declaration is kept for the
// names in its scope, and with Options.MaxValue positive every attribute
// for StartElement.
func (s *Scanner) attribute() error {
	colon, err := s.readQName("expected attribute name in element")
	if err != nil {
		return err
	}
	var prefix string
	decl := false
	switch {
	case colon < 0 && string(s.qname) == "xmlns":
		decl = true
	case colon >= 0 && string(s.qname[:colon]) == "xmlns":
		decl, prefix = true, string(s.qname[colon+1:])
	}
	s.space()
	c, err := s.mustgetc()
	if err != nil {
		return err
	}
	if c != '=' {
		return s.syntaxError("attribute name without = in element")
	}
	s.space()
	if c, err = s.mustgetc(); err != nil {
		return err
	}
	if c != '"' && c != '\'' {
		return s.syntaxError("unquoted or missing attribute value in element")
	}
	if s.o.MaxValue > 0 {
		return s.attributeValue(c, decl, prefix, colon)
	}
	s.sink = sinkNone
	if decl {
		s.sink = sinkNS
		s.ns.reset()
	}
	if err := s.chars(c, false); err != nil {
		return err
	}
	if decl {
		if len(s.binds) == MaxNamespaces {
			return s.limitError("more than %d namespace declarations in scope", MaxNamespaces)
		}
		s.binds = append(s.binds, binding{prefix: prefix, space: string(s.ns.buf), whole: s.ns.n == len(s.ns.buf)})
	}
	return nil
}

// attributeValue reads an attribute value, its opening quote q read,
// whole (up to MaxValue), a namespace declaration's too.
func (s *Scanner) attributeValue(q byte, decl bool, prefix string, colon int) error {
	qname := string(s.qname)
	s.sink, s.val, s.valLong = sinkValue, s.val[:0], false
	if err := s.chars(q, false); err != nil {
		return err
	}
	if s.valLong {
		return &Error{Kind: TooLong, Line: s.line, Msg: fmt.Sprintf("an attribute value of more than %d bytes", s.o.MaxValue)}
	}
	if decl {
		if len(s.binds) == MaxNamespaces {
			return s.limitError("more than %d namespace declarations in scope", MaxNamespaces)
		}
		s.binds = append(s.binds, binding{prefix: prefix, space: string(s.val), whole: true})
		return nil
	}
	s.attrs = append(s.attrs, rawAttr{qname: qname, colon: colon, value: string(s.val)})
	return nil
}

// endTag reads an end tag, the "</" read, and applies it.
func (s *Scanner) endTag() error {
	colon, err := s.readQName("expected element name after </")
	if err != nil {
		return err
	}
	local := s.qname[colon+1:]
	s.space()
	c, err := s.mustgetc()
	if err != nil {
		return err
	}
	if c != '>' {
		return s.syntaxError("invalid characters between </" + string(local) + " and >")
	}
	if len(s.frames) == 0 {
		return s.syntaxError("unexpected end element </" + string(local) + ">")
	}
	open := s.Local()
	if !bytes.Equal(open, local) {
		return s.syntaxError("element <" + string(open) + "> closed by </" + string(local) + ">")
	}
	f := s.frames[len(s.frames)-1]
	var openPrefix, prefix []byte
	if f.colon >= 0 {
		openPrefix = s.names[f.start:f.colon]
	}
	if colon >= 0 {
		prefix = s.qname[:colon]
	}
	if !bytes.Equal(openPrefix, prefix) {
		p := string(prefix)
		if p == "" {
			p = `""`
		}
		return s.syntaxError("element <" + string(open) + "> in space " + string(openPrefix) +
			" closed by </" + string(local) + "> in space " + p)
	}
	return s.end()
}

// end hands the end of the innermost open element to the handler and
// closes it: its name and its namespace declarations go out of scope.
func (s *Scanner) end() error {
	if err := s.h.EndElement(s); err != nil {
		return err
	}
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	s.names = s.names[:f.start]
	s.binds = s.binds[:f.binds]
	return nil
}

// procInst reads a processing instruction, the "<?" read. An XML
// declaration must say version 1.0, if any, and encoding UTF-8, if any.
func (s *Scanner) procInst() error {
	ok, err := s.readName()
	if err != nil {
		return err
	}
	if !ok {
		return s.syntaxError("expected target name after <?")
	}
	decl := string(s.qname) == "xml"
	s.space()
	s.scratch = s.scratch[:0]
	var b0 byte
	for {
		c, err := s.mustgetc()
		if err != nil {
			return err
		}
		if b0 == '?' && c == '>' {
			break
		}
		if decl {
			if len(s.scratch) == MaxXMLDecl {
				return s.limitError("XML declaration longer than %d bytes", MaxXMLDecl)
			}
			s.scratch = append(s.scratch, c)
		}
		b0 = c
	}
	if !decl {
		return nil
	}
	content := string(s.scratch[:max(len(s.scratch)-1, 0)]) // without the '?'
	if v := procInst("version", content); v != "" && v != "1.0" {
		return s.syntaxError(fmt.Sprintf("unsupported version %q; only version 1.0 is supported", v))
	}
	if enc := procInst("encoding", content); enc != "" && !strings.EqualFold(enc, "utf-8") {
		return s.syntaxError(fmt.Sprintf("encoding %q declared; only UTF-8 is read", enc))
	}
	return nil
}

// procInst returns the value of param in the content of an XML declaration,
// or "", parsed as encoding/xml parses it.
func procInst(param, s string) string {
	param += "="
	i := 0
	var sep byte
	for i < len(s) {
		sub := s[i:]
		k := strings.Index(sub, param)
		if k < 0 || len(param)+k >= len(sub) {
			return ""
		}
		i += len(param) + k + 1
		if c := sub[len(param)+k]; c == '\'' || c == '"' {
			sep = c
			break
		}
	}
	if sep == 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], sep)
	if j < 0 {
		return ""
	}
	return s[i : i+j]
}

// bang reads what starts with "<!": a comment, a CDATA section or a
// declaration (<!DOCTYPE ...>), skipped with any internal subset.
func (s *Scanner) bang() error {
	c, err := s.mustgetc()
	if err != nil {
		return err
	}
	switch c {
	case '-':
		if c, err = s.mustgetc(); err != nil {
			return err
		}
		if c != '-' {
			return s.syntaxError("invalid sequence <!- not part of <!--")
		}
		var b0, b1 byte
		for {
			if c, err = s.mustgetc(); err != nil {
				return err
			}
			if b0 == '-' && b1 == '-' {
				if c != '>' {
					return s.syntaxError(`invalid sequence "--" not allowed in comments`)
				}
				return nil
			}
			b0, b1 = b1, c
		}
	case '[':
		for i := range len("CDATA[") {
			if c, err = s.mustgetc(); err != nil {
				return err
			}
			if c != "CDATA["[i] {
				return s.syntaxError("invalid <![ sequence")
			}
		}
		return s.charData(true)
	}
	// A declaration, its first byte c read: skip to the '>' that ends it,
	// outside quotes and nested <...>, skipping comments, as encoding/xml
	// does.
	var quote byte
	depth := 0
	for {
		if c, err = s.mustgetc(); err != nil {
			return err
		}
		if quote == 0 && c == '>' && depth == 0 {
			return nil
		}
	handle:
		switch {
		case c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '>':
			depth--
		case c == '<':
			for i := range len("!--") {
				if c, err = s.mustgetc(); err != nil {
					return err
				}
				if c != "!--"[i] {
					depth++
					goto handle
				}
			}
			var b0, b1 byte
			for {
				if c, err = s.mustgetc(); err != nil {
					return err
				}
				if b0 == '-' && b1 == '-' && c == '>' {
					break
				}
				b0, b1 = b1, c
			}
		}
	}
}

// maxQuote is the most bytes of an input an error message quotes.
const maxQuote = 64

// quote returns a Go-quoted, shortened form of s for an error message.
func quote(s string) string {
	if len(s) > maxQuote {
		return strconv.Quote(s[:maxQuote]) + "..."
	}
	return strconv.Quote(s)
}

// nsText collects the first maxQuote+1 bytes of a namespace name (all
// that an error message shows, and more than a namespace a handler
// compares with needs) and counts the rest.
type nsText struct {
	buf []byte
	n   int // bytes in all
}

func (a *nsText) reset() { a.buf, a.n = a.buf[:0], 0 }

func (a *nsText) add(b []byte) {
	a.n += len(b)
	if k := maxQuote + 1 - len(a.buf); k > 0 {
		a.buf = append(a.buf, b[:min(k, len(b))]...)
	}
}
