package ingest

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// This file keeps the sitemap reader as it was before the streaming scanner
// of sitemap.go, built on encoding/xml, as a slow, obviously correct model
// to check the scanner against (TestSitemapModel, FuzzSitemap). Its memory
// is not bounded.

// errRecorder passes reads through and remembers the first error other than
// io.EOF, so that an I/O error is not taken for malformed XML.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && e.err == nil {
		e.err = err
	}
	return n, err
}

// readSitemapXML streams a sitemaps.org <urlset> or <sitemapindex> and yields
// the trimmed text of every url/loc or sitemap/loc. A document that is not
// well-formed yields a *LineError at the decoder's line and ends.
func readSitemapXML(r io.Reader, name string, o *Options, yield func(Record, error) bool) {
	src := &errRecorder{r: r}
	dec := xml.NewDecoder(src)
	var (
		depth   int    // depth of the current element, root = 1
		entry   string // "url" or "sitemap": the child of the root that holds a <loc>
		inEntry bool   // inside an entry element at depth 2
		inLoc   bool   // inside its <loc> at depth 3
		locLine int
		text    []byte
		tooLong bool
	)
	lineErr := func(line int, err error) bool {
		return yield(Record{Line: line}, &LineError{File: name, Line: line, Err: err})
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			line, _ := dec.InputPos()
			switch {
			case src.err != nil:
				yield(Record{}, ioError(name, src.err))
			case errors.Is(err, io.EOF) && depth == 0 && entry != "":
				// a complete document
			case errors.Is(err, io.EOF) && entry == "":
				lineErr(line, fmt.Errorf("%w: no root element", ErrNotSitemap))
			default:
				var se *xml.SyntaxError
				if errors.As(err, &se) {
					line = se.Line
					err = errors.New(strings.TrimPrefix(se.Msg, "xml: "))
				} else {
					err = errors.New(strings.TrimPrefix(err.Error(), "xml: "))
				}
				lineErr(line, fmt.Errorf("%w: malformed XML: %v", ErrSyntax, err))
			}
			return
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			ours := t.Name.Space == "" || t.Name.Space == sitemapNS
			switch depth {
			case 1:
				switch {
				case ours && t.Name.Local == "urlset":
					entry = "url"
				case ours && t.Name.Local == "sitemapindex":
					entry = "sitemap"
				default:
					line, _ := dec.InputPos()
					lineErr(line, fmt.Errorf("%w: root element is %s, want urlset or sitemapindex", ErrNotSitemap, xmlNameOf(t.Name)))
					return
				}
			case 2:
				inEntry = ours && t.Name.Local == entry
			case 3:
				if inEntry && ours && t.Name.Local == "loc" {
					inLoc, tooLong, text = true, false, text[:0]
					locLine, _ = dec.InputPos()
				}
			}
		case xml.CharData:
			if inLoc && depth == 3 && !tooLong {
				text = append(text, t...)
				// The trimmed length only grows as text is appended.
				if len(text) > o.MaxLineBytes && len(trimSpace(text)) > o.MaxLineBytes {
					tooLong, text = true, text[:0]
				}
			}
		case xml.EndElement:
			switch depth {
			case 2:
				inEntry = false
			case 3:
				if inLoc {
					inLoc = false
					loc := trimSpace(text)
					var ok bool
					switch {
					case tooLong:
						ok = lineErr(locLine, fmt.Errorf("%w: <loc> of more than %d bytes", ErrLineTooLong, o.MaxLineBytes))
					case len(loc) == 0:
						ok = lineErr(locLine, ErrEmptyLoc)
					default:
						ok = yield(Record{Text: string(loc), Line: locLine}, nil)
					}
					if !ok {
						return
					}
				}
			}
			depth--
		}
	}
}

// xmlNameOf formats an element name for an error message.
func xmlNameOf(n xml.Name) string {
	if n.Space == "" {
		return "<" + n.Local + ">"
	}
	return "<" + n.Local + "> in namespace " + quote(n.Space)
}
