package ingest

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/urlhash/urlhash/ingest/internal/xmlscan"
)

// sitemapNS is the sitemaps.org namespace. Elements in it, or in no
// namespace, are read; others (image:loc, xhtml:link, ...) are ignored.
const sitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"

// maxDepth bounds the element nesting of a sitemap, the root being 1: a
// sitemap is 3 elements deep (5 with extensions). Going over it, or over
// one of the XML scanner's fixed limits (name length, namespace
// declarations in scope, length of the XML declaration), is a *LineError
// wrapping ErrLimit that ends the sequence.
const maxDepth = 64

// readSitemap streams a sitemaps.org <urlset> or <sitemapindex> and yields
// the trimmed text of every url/loc or sitemap/loc. A document that is not
// well-formed yields a *LineError and ends. The XML is read by the
// streaming scanner (package xmlscan), which holds a <loc> text (up to
// MaxLineBytes), names and the open elements, never a token.
func readSitemap(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool) {
	h := &sitemap{name: name, yield: yield, loc: locText{max: o.MaxLineBytes}}
	s := xmlscan.New(br, h, xmlscan.Options{MaxDepth: maxDepth})
	err := s.Run()
	if err == nil && h.entry == "" {
		err = &LineError{File: name, Line: s.Line(), Err: fmt.Errorf("%w: no root element", ErrNotSitemap)}
	}
	yieldXMLError(name, err, yield)
}

// yieldXMLError yields the error that ended an XML document, if any: a
// scanner's as a *LineError of its kind, a reader's as it is.
func yieldXMLError(name string, err error, yield func(Record, error) bool) {
	var le *LineError
	var xe *xmlscan.Error
	switch {
	case err == nil, err == errStopped:
	case errors.As(err, &xe):
		switch xe.Kind {
		case xmlscan.Read:
			yield(Record{}, ioError(name, xe.Err))
			return
		case xmlscan.Limit:
			err = fmt.Errorf("%w: %s", ErrLimit, xe.Msg)
		case xmlscan.TooLong:
			err = fmt.Errorf("%w (%s)", ErrLineTooLong, xe.Msg)
		default:
			err = fmt.Errorf("%w: malformed XML: %s", ErrSyntax, xe.Msg)
		}
		yield(Record{Line: xe.Line}, &LineError{File: name, Line: xe.Line, Err: err})
	case errors.As(err, &le):
		yield(Record{Line: le.Line}, err)
	default:
		yield(Record{}, err)
	}
}

// errStopped is returned inside a reader when the consumer stopped.
var errStopped = errors.New("ingest: stopped")

// sitemap is the sitemap structure as the XML scanner goes through it:
// the root says whether entries are url or sitemap elements, whose loc
// child holds the text to yield.
type sitemap struct {
	name  string
	yield func(Record, error) bool

	entry   string // "url" or "sitemap" once the root is read
	inEntry bool   // inside an entry element at depth 2
	inLoc   bool   // inside its <loc> at depth 3
	locLine int    // line of the end of the <loc> start tag
	loc     locText
}

// ours reports whether the innermost open element of s is in the
// sitemaps.org namespace, or in none.
func ours(s *xmlscan.Scanner) (space string, ok bool) {
	space, whole := s.Space()
	return space, whole && (space == "" || space == sitemapNS)
}

// StartElement applies a start tag to the sitemap structure.
func (m *sitemap) StartElement(s *xmlscan.Scanner) error {
	space, ok := ours(s)
	local := s.Local()
	switch s.Depth() {
	case 1:
		switch {
		case ok && string(local) == "urlset":
			m.entry = "url"
		case ok && string(local) == "sitemapindex":
			m.entry = "sitemap"
		default:
			return &LineError{File: m.name, Line: s.Line(), Err: fmt.Errorf("%w: root element is %s, want urlset or sitemapindex", ErrNotSitemap, xmlName(space, local))}
		}
	case 2:
		m.inEntry = ok && string(local) == m.entry
	case 3:
		if m.inEntry && ok && string(local) == "loc" {
			m.inLoc, m.locLine = true, s.Line()
			m.loc.reset()
		}
	}
	s.SetText(m.inLoc && s.Depth() == 3)
	return nil
}

// EndElement applies the end of an element to the sitemap structure,
// yielding a <loc>.
func (m *sitemap) EndElement(s *xmlscan.Scanner) error {
	switch s.Depth() {
	case 2:
		m.inEntry = false
	case 3:
		if m.inLoc {
			m.inLoc = false
			var rec Record
			var err error
			switch text := m.loc.text(); {
			case m.loc.tooLong:
				rec, err = Record{Line: m.locLine}, &LineError{File: m.name, Line: m.locLine,
					Err: fmt.Errorf("%w: <loc> of more than %d bytes", ErrLineTooLong, m.loc.max)}
			case len(text) == 0:
				rec, err = Record{Line: m.locLine}, &LineError{File: m.name, Line: m.locLine, Err: ErrEmptyLoc}
			default:
				rec = Record{Text: string(text), Line: m.locLine}
			}
			if !m.yield(rec, err) {
				return errStopped
			}
		}
	}
	// The text after the end goes to the parent: a <loc>'s, when a child
	// of it closes.
	s.SetText(m.inLoc && s.Depth() == 4)
	return nil
}

// CharData collects the text of a <loc>.
func (m *sitemap) CharData(b []byte) { m.loc.add(b) }

// TextEnd has nothing to do: a <loc>'s text ends with it.
func (m *sitemap) TextEnd(*xmlscan.Scanner) error { return nil }

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

// trimLeftSpace returns b without leading ASCII white space.
func trimLeftSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}
