package ingest

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// sitemapNS is the sitemaps.org namespace. Elements in it, or in no
// namespace, are read; others (image:loc, xhtml:link, ...) are ignored.
const sitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"

// xmlURL is the namespace the prefix "xml" is bound to.
const xmlURL = "http://www.w3.org/XML/1998/namespace"

// Fixed limits of the sitemap reader. A sitemap is 3 elements deep (5 with
// extensions) and uses short names; going over a limit is a *LineError
// wrapping ErrLimit that ends the sequence.
const (
	maxDepth      = 64   // element nesting, the root being 1
	maxName       = 1024 // bytes of an element, attribute or PI target name
	maxNamespaces = 256  // namespace declarations in scope
	maxXMLDecl    = 1024 // bytes of an <?xml ...?> declaration
)

// readSitemap streams a sitemaps.org <urlset> or <sitemapindex> and yields
// the trimmed text of every url/loc or sitemap/loc. A document that is not
// well-formed yields a *LineError and ends.
func readSitemap(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool) {
	s := newXMLScanner(br, name, yield, maxDepth)
	s.loc = locText{max: o.MaxLineBytes}
	s.scan()
}

// newXMLScanner returns a scanner of br that yields to yield and allows
// elements nested depthMax deep.
func newXMLScanner(br *bufio.Reader, name string, yield func(Record, error) bool, depthMax int) *xmlScanner {
	return &xmlScanner{
		window:   newWindow(br),
		line:     1,
		name:     name,
		yield:    yield,
		depthMax: depthMax,
	}
}

// scan reads the document and yields the error that ended it, if any.
func (s *xmlScanner) scan() {
	err := s.run()
	var le *LineError
	switch {
	case err == nil, err == errStopped:
	case errors.As(err, &le):
		s.yield(Record{Line: le.Line}, err)
	default:
		s.yield(Record{}, err)
	}
}

// errStopped is returned inside the scanner when the consumer stopped.
var errStopped = errors.New("ingest: stopped")

// xmlScanner is a streaming scanner for the subset of XML 1.0 that sitemaps
// use, checked for well-formedness the way encoding/xml's strict Decoder
// checks it (the model in sitemap_model_test.go), but holding no token in
// memory: only a <loc> text (up to MaxLineBytes), names (up to maxName) and
// the open elements and namespace declarations (up to maxDepth and
// maxNamespaces). Character references are decoded, the five predefined
// entities too; a document type declaration is skipped, and no entity it
// declares is ever expanded (a reference to one is a syntax error).
type xmlScanner struct {
	window
	line int // 1-based line of the next byte

	name  string // file name for errors
	yield func(Record, error) bool

	// Open elements: their names, back to back in names, and a frame each.
	names  []byte
	frames []frame
	binds  []binding // namespace declarations in scope, innermost last

	// The sitemap structure.
	entry   string // "url" or "sitemap" once the root is read
	inEntry bool   // inside an entry element at depth 2
	inLoc   bool   // inside its <loc> at depth 3
	locLine int    // line of the end of the <loc> start tag
	loc     locText

	sink    int      // where character data goes: sinkNone, sinkLoc or sinkAttr
	attr    attrText // an xmlns attribute value being read
	qname   []byte   // the name being read
	scratch []byte   // a reference being read (for its error message), or an XML declaration
	one     [4]byte  // the bytes of one decoded character

	// rdf, when set, is handed the document's elements in place of the
	// sitemap structure (readRDFXML); the fields below serve it.
	rdf      *xmlRDF
	depthMax int       // element nesting allowed: maxDepth, or maxRDFNesting
	valMax   int       // the longest attribute value kept, in bytes
	val      []byte    // an attribute value being read (sinkValue)
	valLong  bool      // val went over valMax
	attrs    []rawAttr // the attributes of the start tag being read
	elem     xml.StartElement
	nonSpace bool // sinkText met a character that is not XML white space
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
	space  string // at most maxQuote+1 bytes of it, for error messages
	ours   bool   // space is sitemapNS or empty
}

// Character data sinks.
const (
	sinkNone = iota
	sinkLoc
	sinkAttr
	sinkValue // rdf: an attribute value, kept whole up to valMax
	sinkText  // rdf: text, checked for characters other than white space
)

// ensure tries to have n bytes in buf[r:w]; fewer mean the end of the input.
func (s *xmlScanner) ensure(n int) {
	for s.w-s.r < n && s.fill() {
	}
}

// getc consumes a byte; ok is false at the end of the input or on an error.
func (s *xmlScanner) getc() (c byte, ok bool) {
	if s.r == s.w && !s.fill() {
		return 0, false
	}
	c = s.buf[s.r]
	s.r++
	if c == '\n' {
		s.line++
	}
	return c, true
}

// unget gives back the byte getc returned last.
func (s *xmlScanner) unget() {
	s.r--
	if s.buf[s.r] == '\n' {
		s.line--
	}
}

// mustgetc is getc where the end of the input is an error.
func (s *xmlScanner) mustgetc() (byte, error) {
	c, ok := s.getc()
	if !ok {
		return 0, s.eofError()
	}
	return c, nil
}

// eofError returns the error for input that ended too soon: a syntax error
// at its end, or the read error that ended it.
func (s *xmlScanner) eofError() error {
	if errors.Is(s.err, io.EOF) {
		return s.syntaxError("unexpected EOF")
	}
	return ioError(s.name, s.err)
}

func (s *xmlScanner) lineError(err error) error {
	return &LineError{File: s.name, Line: s.line, Err: err}
}

func (s *xmlScanner) syntaxError(msg string) error {
	return s.lineError(fmt.Errorf("%w: malformed XML: %s", ErrSyntax, msg))
}

func (s *xmlScanner) limitError(format string, args ...any) error {
	return s.lineError(fmt.Errorf("%w: "+format, append([]any{ErrLimit}, args...)...))
}

// run scans the whole input.
func (s *xmlScanner) run() error {
	for {
		c, ok := s.getc()
		if !ok {
			switch {
			case !errors.Is(s.err, io.EOF):
				return ioError(s.name, s.err)
			case len(s.frames) > 0:
				return s.syntaxError("unexpected EOF")
			case s.rdf != nil:
				if !s.rdf.rootSeen {
					return s.syntaxError("no root element")
				}
				return nil
			case s.entry == "":
				return s.lineError(fmt.Errorf("%w: no root element", ErrNotSitemap))
			}
			return nil
		}
		if c != '<' {
			s.unget()
			s.sink = sinkNone
			if s.inLoc && len(s.frames) == 3 {
				s.sink = sinkLoc
			}
			if err := s.text(false); err != nil {
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
func (s *xmlScanner) chars(quote byte, cdata bool) error {
	var b0, b1 byte // the last two bytes read, raw, for "]]>" and CRLF
	held := 0       // ']' bytes of a CDATA section held back: they may end it
	plain := &textByte
	if cdata {
		plain = &cdataByte
	}
	for {
		if s.r == s.w && !s.fill() {
			switch {
			case !errors.Is(s.err, io.EOF):
				return ioError(s.name, s.err)
			case cdata:
				return s.syntaxError("unexpected EOF in CDATA section")
			case quote != 0:
				return s.syntaxError("unexpected EOF")
			}
			return nil
		}
		if i := s.r; plain[s.buf[i]] {
			for i < s.w && plain[s.buf[i]] {
				i++
			}
			if s.sink != sinkNone {
				if held > 0 {
					s.emit(brackets[:held])
					held = 0
				}
				s.emit(s.buf[s.r:i])
			}
			if i-s.r >= 2 {
				b0 = s.buf[i-2]
			} else {
				b0 = b1
			}
			b1 = s.buf[i-1]
			s.r = i
			continue
		}
		c := s.buf[s.r]
		if quote == 0 && c == '>' && b0 == ']' && b1 == ']' {
			if cdata {
				s.r++
				return nil
			}
			return s.syntaxError("unescaped ]]> not in CDATA section")
		}
		if cdata && c == ']' {
			s.r++
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
			s.r++
			return nil
		case c == '&' && !cdata:
			s.r++
			b, err := s.reference()
			if err != nil {
				return err
			}
			s.emit(b)
			b0, b1 = 0, 0
			continue
		case c == '\r':
			s.r++
			s.emit(newline)
		case c == '\n':
			s.r++
			s.line++
			if b1 != '\r' {
				s.emit(newline)
			}
		case c < utf8.RuneSelf:
			s.r++
			if c < 0x20 {
				return s.syntaxError(fmt.Sprintf("illegal character code %U", rune(c)))
			}
			s.emit(s.buf[s.r-1 : s.r])
		default:
			s.ensure(utf8.UTFMax)
			r, size := utf8.DecodeRune(s.buf[s.r:s.w])
			if r == utf8.RuneError && size == 1 {
				return s.syntaxError("invalid UTF-8")
			}
			if !isInCharacterRange(r) {
				return s.syntaxError(fmt.Sprintf("illegal character code %U", r))
			}
			s.emit(s.buf[s.r : s.r+size])
			s.r += size
			c = 0x80 // a byte of no meaning here
		}
		b0, b1 = b1, c
	}
}

var (
	brackets = []byte("]]")
	newline  = []byte("\n")
)

// text reads character data (a CDATA section with cdata set) into the
// sink set, or, for RDF/XML, tells the handler whether it held more than
// white space.
func (s *xmlScanner) text(cdata bool) error {
	if s.rdf == nil {
		return s.chars(0, cdata)
	}
	s.sink, s.nonSpace = sinkText, false
	if err := s.chars(0, cdata); err != nil {
		return err
	}
	if s.nonSpace && len(s.frames) > 0 {
		return s.rdfError(s.rdf.text())
	}
	return nil
}

// rdfError turns an error of the RDF/XML handler into a *LineError at the
// current line; errStopped passes.
func (s *xmlScanner) rdfError(err error) error {
	if err == nil || err == errStopped {
		return err
	}
	return s.lineError(err)
}

// emit passes decoded character data to the sink.
func (s *xmlScanner) emit(b []byte) {
	switch s.sink {
	case sinkLoc:
		s.loc.add(b)
	case sinkAttr:
		s.attr.add(b)
	case sinkValue:
		if len(s.val)+len(b) > s.valMax {
			s.valLong = true
			return
		}
		s.val = append(s.val, b...)
	case sinkText:
		if !s.nonSpace {
			for _, c := range b {
				if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
					s.nonSpace = true
					break
				}
			}
		}
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
func (s *xmlScanner) reference() ([]byte, error) {
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
// the input ends, the name is longer than maxName or it is not an XML name.
func (s *xmlScanner) readName() (bool, error) {
	s.qname = s.qname[:0]
	for {
		if s.r == s.w && !s.fill() {
			return false, s.eofError()
		}
		i := s.r
		for i < s.w && nameByte[s.buf[i]] {
			i++
		}
		if len(s.qname)+i-s.r > maxName {
			return false, s.limitError("name longer than %d bytes", maxName)
		}
		s.qname = append(s.qname, s.buf[s.r:i]...)
		s.r = i
		if i < s.w {
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

// isName reports whether b, made of nameByte bytes, is a Name of XML 1.0
// (fifth edition).
func isName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if c := b[0]; '0' <= c && c <= '9' || c == '.' || c == '-' {
		return false
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return isNameSlow(b)
		}
	}
	return true
}

// isNameSlow is isName for any bytes.
func isNameSlow(b []byte) bool {
	for i := 0; i < len(b); {
		r, size := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			if r, size = utf8.DecodeRune(b[i:]); r == utf8.RuneError && size == 1 {
				return false
			}
		}
		if i == 0 && !isPNCharsU(r) || i > 0 && r != '.' && !isPNChars(r) {
			return false
		}
		i += size
	}
	return len(b) > 0
}

// readQName reads a qualified name into s.qname and returns the index of its
// colon, or -1. A missing name, or one of more than one colon, is a syntax
// error saying what, else.
func (s *xmlScanner) readQName(what string) (int, error) {
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
func (s *xmlScanner) space() {
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

// startTag reads a start tag, the '<' read, and applies it.
func (s *xmlScanner) startTag() error {
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
	if len(s.frames) > s.depthMax {
		return s.limitError("elements nested deeper than %d", s.depthMax)
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
	if err := s.start(); err != nil {
		return err
	}
	if empty {
		return s.end()
	}
	return nil
}

// attribute reads an attribute and keeps it when it declares a namespace.
func (s *xmlScanner) attribute() error {
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
	if s.rdf != nil {
		return s.rdfAttribute(c, decl, prefix, colon)
	}
	s.sink = sinkNone
	if decl {
		s.sink = sinkAttr
		s.attr.reset()
	}
	if err := s.chars(c, false); err != nil {
		return err
	}
	if decl {
		if len(s.binds) == maxNamespaces {
			return s.limitError("more than %d namespace declarations in scope", maxNamespaces)
		}
		v := string(s.attr.buf)
		full := s.attr.n == len(s.attr.buf)
		s.binds = append(s.binds, binding{prefix: prefix, space: v, ours: full && (v == "" || v == sitemapNS)})
	}
	return nil
}

// rdfAttribute reads an attribute value, its opening quote q read, for
// RDF/XML: whole (up to valMax), a namespace declaration too.
func (s *xmlScanner) rdfAttribute(q byte, decl bool, prefix string, colon int) error {
	qname := string(s.qname)
	s.sink, s.val, s.valLong = sinkValue, s.val[:0], false
	if err := s.chars(q, false); err != nil {
		return err
	}
	if s.valLong {
		return s.lineError(fmt.Errorf("%w (an attribute value of more than %d bytes)", ErrLineTooLong, s.valMax))
	}
	if decl {
		if len(s.binds) == maxNamespaces {
			return s.limitError("more than %d namespace declarations in scope", maxNamespaces)
		}
		s.binds = append(s.binds, binding{prefix: prefix, space: string(s.val)})
		return nil
	}
	s.attrs = append(s.attrs, rawAttr{qname: qname, colon: colon, value: string(s.val)})
	return nil
}

// rdfStart hands the start tag just read to the RDF/XML handler, its
// element and attribute names resolved as encoding/xml resolves them, but
// for a prefix no declaration binds, which is an error.
func (s *xmlScanner) rdfStart() error {
	space, _ := s.resolve()
	f := s.frames[len(s.frames)-1]
	if f.colon >= 0 && space == string(s.names[f.start:f.colon]) {
		if _, ok := s.lookup(space); !ok {
			return s.syntaxError("unbound namespace prefix " + quote(space))
		}
	}
	e := &s.elem
	e.Name = xml.Name{Space: space, Local: string(s.local())}
	e.Attr = e.Attr[:0]
	for _, a := range s.attrs {
		n := xml.Name{Local: a.qname}
		if a.colon >= 0 {
			prefix := a.qname[:a.colon]
			n.Local = a.qname[a.colon+1:]
			space, ok := s.lookup(prefix)
			if !ok {
				return s.syntaxError("unbound namespace prefix " + quote(prefix))
			}
			n.Space = space
		}
		e.Attr = append(e.Attr, xml.Attr{Name: n, Value: a.value})
	}
	return s.rdfError(s.rdf.start(e))
}

// lookup returns the namespace bound to prefix, as encoding/xml names
// the predeclared xml and xmlns ones, and whether a declaration in scope
// binds it.
func (s *xmlScanner) lookup(prefix string) (string, bool) {
	switch prefix {
	case "xml":
		return xmlURL, true
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

// resolve returns the namespace of the innermost open element, or of the
// prefix it shows when none is declared, as encoding/xml does, and whether
// that is the sitemaps.org namespace or none.
func (s *xmlScanner) resolve() (space string, ours bool) {
	f := s.frames[len(s.frames)-1]
	var prefix []byte
	if f.colon >= 0 {
		prefix = s.names[f.start:f.colon]
	}
	switch string(prefix) {
	case "xmlns":
		return "xmlns", false
	case "xml":
		return xmlURL, false
	}
	for i := len(s.binds) - 1; i >= 0; i-- {
		if s.binds[i].prefix == string(prefix) {
			return s.binds[i].space, s.binds[i].ours
		}
	}
	return string(prefix), len(prefix) == 0
}

// local returns the local name of the innermost open element.
func (s *xmlScanner) local() []byte {
	f := s.frames[len(s.frames)-1]
	return s.names[max(f.start, f.colon+1):f.end]
}

// start applies the start tag of the innermost open element to the sitemap
// structure.
func (s *xmlScanner) start() error {
	if s.rdf != nil {
		return s.rdfStart()
	}
	space, ours := s.resolve()
	local := s.local()
	switch len(s.frames) {
	case 1:
		switch {
		case ours && string(local) == "urlset":
			s.entry = "url"
		case ours && string(local) == "sitemapindex":
			s.entry = "sitemap"
		default:
			return s.lineError(fmt.Errorf("%w: root element is %s, want urlset or sitemapindex", ErrNotSitemap, xmlName(space, local)))
		}
	case 2:
		s.inEntry = ours && string(local) == s.entry
	case 3:
		if s.inEntry && ours && string(local) == "loc" {
			s.inLoc, s.locLine = true, s.line
			s.loc.reset()
		}
	}
	return nil
}

// endTag reads an end tag, the "</" read, and applies it.
func (s *xmlScanner) endTag() error {
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
	open := s.local()
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

// end applies the end of the innermost open element to the sitemap
// structure, yielding a <loc>, and closes it.
func (s *xmlScanner) end() error {
	if s.rdf != nil {
		if err := s.rdfError(s.rdf.end()); err != nil {
			return err
		}
		s.pop()
		return nil
	}
	switch len(s.frames) {
	case 2:
		s.inEntry = false
	case 3:
		if s.inLoc {
			s.inLoc = false
			var rec Record
			var err error
			switch text := s.loc.text(); {
			case s.loc.tooLong:
				rec, err = Record{Line: s.locLine}, &LineError{File: s.name, Line: s.locLine,
					Err: fmt.Errorf("%w: <loc> of more than %d bytes", ErrLineTooLong, s.loc.max)}
			case len(text) == 0:
				rec, err = Record{Line: s.locLine}, &LineError{File: s.name, Line: s.locLine, Err: ErrEmptyLoc}
			default:
				rec = Record{Text: string(text), Line: s.locLine}
			}
			if !s.yield(rec, err) {
				return errStopped
			}
		}
	}
	s.pop()
	return nil
}

// pop closes the innermost open element: its name and its namespace
// declarations go out of scope.
func (s *xmlScanner) pop() {
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	s.names = s.names[:f.start]
	s.binds = s.binds[:f.binds]
}

// procInst reads a processing instruction, the "<?" read. An XML
// declaration must say version 1.0, if any, and encoding UTF-8, if any.
func (s *xmlScanner) procInst() error {
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
			if len(s.scratch) == maxXMLDecl {
				return s.limitError("XML declaration longer than %d bytes", maxXMLDecl)
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
func (s *xmlScanner) bang() error {
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
		s.sink = sinkNone
		if s.inLoc && len(s.frames) == 3 {
			s.sink = sinkLoc
		}
		return s.text(true)
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

// xmlName formats an element name for an error message.
func xmlName(space string, local []byte) string {
	if space == "" {
		return "<" + string(local) + ">"
	}
	return "<" + string(local) + "> in namespace " + quote(space)
}

// locText collects the text of a <loc>, trimmed of ASCII white space, in at
// most max bytes however long the text is.
type locText struct {
	buf     []byte // the text without its leading white space
	max     int
	dropped bool // white space was dropped after max bytes: more text is too much
	tooLong bool // the trimmed text is longer than max
}

func (l *locText) reset() {
	l.buf, l.dropped, l.tooLong = l.buf[:0], false, false
}

func (l *locText) add(b []byte) {
	if l.tooLong {
		return
	}
	if len(l.buf) == 0 {
		b = trimLeftSpace(b)
	}
	if len(b) == 0 {
		return
	}
	if l.dropped {
		if len(trimLeftSpace(b)) > 0 {
			l.tooLong, l.buf = true, l.buf[:0]
		}
		return
	}
	n := min(len(b), l.max-len(l.buf))
	l.buf = append(l.buf, b[:n]...)
	if rest := b[n:]; len(rest) > 0 {
		if len(trimLeftSpace(rest)) > 0 {
			l.tooLong, l.buf = true, l.buf[:0]
		} else {
			l.dropped = true
		}
	}
}

// text returns the trimmed text, valid until the next reset.
func (l *locText) text() []byte { return trimSpace(l.buf) }

// attrText collects the first maxQuote+1 bytes of a namespace name (all
// that an error message shows, and more than sitemapNS) and counts the rest.
type attrText struct {
	buf []byte
	n   int // bytes in all
}

func (a *attrText) reset() { a.buf, a.n = a.buf[:0], 0 }

func (a *attrText) add(b []byte) {
	a.n += len(b)
	if k := maxQuote + 1 - len(a.buf); k > 0 {
		a.buf = append(a.buf, b[:min(k, len(b))]...)
	}
}

// trimLeftSpace returns b without leading ASCII white space.
func trimLeftSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}
