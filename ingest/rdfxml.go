package ingest

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/rdflex"
	"github.com/urlhash/urlhash/ingest/internal/xmlscan"
)

// RDF/XML vocabulary (https://www.w3.org/TR/rdf-syntax-grammar/#section-Namespace).
const (
	rdfDescription = rdfNS + "Description"
	rdfStatement   = rdfNS + "Statement"
	rdfSubject     = rdfNS + "subject"
	rdfPredicate   = rdfNS + "predicate"
	rdfObject      = rdfNS + "object"
)

// maxRDFIDs bounds the rdf:ID values an RDF/XML document may declare: each
// is remembered (as a 64-bit hash) to refuse a repeated one, as the syntax
// asks, so this is the one part of its memory that grows with the document.
const maxRDFIDs = 1 << 22

// rdfxml frame kinds: what the open element is, so what its content may be.
const (
	xRDF        = iota // rdf:RDF: node elements
	xNode              // a node element: property elements
	xResource          // a property element with parseType="Resource": property elements
	xProperty          // a property element, content unknown yet: text or one node element
	xEmpty             // a property element that must be empty (rdf:resource, rdf:nodeID, property attributes)
	xCollection        // parseType="Collection": node elements
	xLiteral           // parseType="Literal" (or another): anything, skipped
)

// xframe is an open element of an RDF/XML document.
type xframe struct {
	kind  int
	base  string // the in-scope base IRI ("" if none)
	li    int    // the last rdf:li number used (xNode, xResource)
	node  bool   // xProperty: holds a node element; xCollection: holds one
	text  bool   // xProperty: holds text other than white space
	typed bool   // xProperty: has rdf:datatype, so holds text only
	// subject is the IRI of a top-level node element (xNode) that is no
	// triple's subject yet: it is yielded with its first property.
	subject string
	depth   int // xLiteral: elements open inside
}

// readRDFXML yields every IRI of an RDF/XML document: node and property
// element names, rdf:about, rdf:resource, rdf:datatype, rdf:type, property
// attributes, rdf:ID (as base#ID) and the vocabulary the syntax implies
// (rdf:type for typed nodes, rdf:_n for rdf:li, rdf:first, rdf:rest and
// rdf:nil for collections, rdf:XMLLiteral, the reification terms). The XML
// is read by the streaming scanner the sitemap reader uses too (package
// xmlscan), which checks well-formedness as encoding/xml's strict Decoder
// does, expands no entity but the predefined five and holds no more than
// one attribute value (up to MaxLineBytes) and the open elements; this
// reader is the RDF/XML grammar's state machine over its elements. The
// first error ends the sequence.
func readRDFXML(br *bufio.Reader, name string, o *Options, yield func(Record, error) bool) {
	x := &xmlRDF{name: name, yield: yield, max: o.MaxLineBytes, seed: maphash.MakeSeed(), docBase: o.Base}
	x.s = xmlscan.New(br, x, xmlscan.Options{MaxDepth: maxRDFNesting, MaxValue: o.MaxLineBytes, SkipSpace: true})
	x.s.SetText(true)
	err := x.s.Run()
	if err == nil && !x.rootSeen {
		err = x.lineError(syntaxf("malformed XML: no root element"))
	}
	yieldXMLError(name, err, yield)
}

// xmlRDF is the state of one RDF/XML document: the open elements and the
// rdf:ID values seen. It is the XML scanner's Handler.
type xmlRDF struct {
	s        *xmlscan.Scanner
	name     string
	yield    func(Record, error) bool
	max      int
	docBase  string
	stack    []xframe
	seed     maphash.Seed
	ids      map[uint64]struct{}
	rs       resolver // scratch: the base of the element at hand
	rootSeen bool
}

func (x *xmlRDF) line() int { return x.s.Line() }

// lineError puts the file and the current line on an error of the
// grammar; errStopped passes.
func (x *xmlRDF) lineError(err error) error {
	if err == nil || err == errStopped {
		return err
	}
	return &LineError{File: x.name, Line: x.line(), Err: err}
}

// StartElement hands a start tag, its names resolved, to the grammar.
func (x *xmlRDF) StartElement(s *xmlscan.Scanner) error {
	e, err := s.StartElement()
	if err != nil {
		return err
	}
	return x.lineError(x.start(e))
}

// EndElement hands the end of the open element to the grammar.
func (x *xmlRDF) EndElement(*xmlscan.Scanner) error { return x.lineError(x.end()) }

// CharData has nothing to do: what matters of text is that it holds more
// than white space (the scanner leaves out runs of nothing else:
// SkipSpace), which TextEnd says.
func (x *xmlRDF) CharData([]byte) {}

// TextEnd hands text other than white space in an element to the grammar.
func (x *xmlRDF) TextEnd(s *xmlscan.Scanner) error {
	if s.Depth() == 0 {
		return nil
	}
	return x.lineError(x.text())
}

func (x *xmlRDF) emit(iri string) error {
	if len(iri) > x.max && !isVocabulary(iri) {
		return fmt.Errorf("%w (an IRI of more than %d bytes)", ErrLineTooLong, x.max)
	}
	// An attribute value may hold what no IRI may: refuse it, as the other
	// syntaxes' grammars do.
	for i := 0; i < len(iri); i++ {
		if c := iri[i]; c < utf8.RuneSelf && rdflex.ForbiddenInIRI(c) {
			return fmt.Errorf("%w <%s>: forbidden character %q", ErrInvalidIRI, shorten(iri), c)
		}
	}
	if !isAbsoluteIRI(iri) {
		// A namespace name and a local name that make no absolute IRI.
		return fmt.Errorf("%w <%s>: an element or attribute name in RDF/XML makes no absolute IRI", ErrRelativeIRI, shorten(iri))
	}
	if !x.yield(Record{Text: iri, Line: x.line()}, nil) {
		return errStopped
	}
	return nil
}

// isVocabulary reports whether iri is one of the short rdf: and xsd: IRIs
// the syntaxes imply, which Options.MaxLineBytes does not bound.
func isVocabulary(iri string) bool {
	return len(iri) <= maxVocabulary && (strings.HasPrefix(iri, rdfNS) || strings.HasPrefix(iri, xsdNS))
}

// maxVocabulary bounds the length of the IRIs isVocabulary accepts.
const maxVocabulary = 64

// text handles character data other than white space in the open element.
func (x *xmlRDF) text() error {
	f := &x.stack[len(x.stack)-1]
	switch f.kind {
	case xLiteral:
		return nil
	case xProperty:
		if f.node {
			return syntaxf("text beside a node element in a property element")
		}
		f.text = true
		return nil
	}
	return syntaxf("text where only elements may be")
}

// end closes the open element.
func (x *xmlRDF) end() error {
	n := len(x.stack) - 1
	f := &x.stack[n]
	switch f.kind {
	case xLiteral:
		if f.depth > 0 {
			f.depth--
			return nil
		}
	case xCollection:
		if err := x.emit(rdfNil); err != nil {
			return err
		}
	}
	x.stack = x.stack[:n]
	return nil
}

// push opens an element, refusing one nested past maxRDFNesting.
func (x *xmlRDF) push(f xframe) error {
	if len(x.stack) >= maxRDFNesting {
		return fmt.Errorf("%w: elements nested deeper than %d", ErrLimit, maxRDFNesting)
	}
	x.stack = append(x.stack, f)
	return nil
}

// start opens an element: the root, a node element or a property element,
// as its parent says.
func (x *xmlRDF) start(e *xml.StartElement) error {
	if len(x.stack) == 0 {
		if x.rootSeen {
			return syntaxf("a second root element")
		}
		x.rootSeen = true
		base, err := x.baseOf(e, x.docBase)
		if err != nil {
			return err
		}
		if e.Name.Space == rdfNS && e.Name.Local == "RDF" {
			for _, a := range e.Attr {
				if !isXMLAttr(a.Name) {
					return syntaxf("attribute %s on rdf:RDF", fullName(a.Name))
				}
			}
			return x.push(xframe{kind: xRDF, base: base})
		}
		return x.nodeElement(e, base)
	}
	f := &x.stack[len(x.stack)-1]
	base, err := x.baseOf(e, f.base)
	if err != nil {
		return err
	}
	switch f.kind {
	case xLiteral:
		f.depth++
		return nil
	case xRDF:
		return x.nodeElement(e, base)
	case xCollection:
		if !f.node {
			f.node = true
			if err := x.emit(rdfFirst); err != nil {
				return err
			}
			if err := x.emit(rdfRest); err != nil {
				return err
			}
		}
		return x.nodeElement(e, base)
	case xProperty:
		if f.node || f.text || f.typed {
			return syntaxf("a property element holds one node element or text, not more (nor a node element with rdf:datatype)")
		}
		f.node = true
		return x.nodeElement(e, base)
	case xEmpty:
		return syntaxf("element %s in a property element that must be empty", fullName(e.Name))
	}
	if f.subject != "" {
		if err := x.emit(f.subject); err != nil {
			return err
		}
		f.subject = ""
	}
	if e.Name.Space == rdfNS && e.Name.Local == "li" {
		f.li++
	}
	return x.propertyElement(e, base, f.li)
}

// baseOf returns the base in scope on e: its xml:base resolved against
// the parent's, or the parent's.
func (x *xmlRDF) baseOf(e *xml.StartElement, parent string) (string, error) {
	for _, a := range e.Attr {
		if a.Name.Space == xmlscan.XMLNamespace && a.Name.Local == "base" {
			if err := x.setBase(parent); err != nil {
				return "", err
			}
			b, err := x.rs.resolve(a.Value)
			if err != nil {
				return "", err
			}
			if i := strings.IndexByte(b, '#'); i >= 0 {
				b = b[:i]
			}
			return b, nil
		}
	}
	return parent, nil
}

// setBase makes base the resolver's base ("" for none).
func (x *xmlRDF) setBase(base string) error {
	if base == x.rs.text && (base != "") == x.rs.hasBase {
		return nil
	}
	if base == "" {
		x.rs = resolver{}
		return nil
	}
	return x.rs.setBase(base)
}

// resolve resolves ref against base.
func (x *xmlRDF) resolve(ref, base string) (string, error) {
	if err := x.setBase(base); err != nil {
		return "", err
	}
	return x.rs.resolve(ref)
}

// isXMLAttr reports whether an attribute is one RDF/XML ignores: a
// namespace declaration or a name starting with "xml" (xml:lang, xml:base
// are read where they matter).
func isXMLAttr(n xml.Name) bool {
	return n.Space == "xmlns" || n.Space == "" && n.Local == "xmlns" || n.Space == xmlscan.XMLNamespace ||
		len(n.Local) >= 3 && strings.EqualFold(n.Local[:3], "xml") && n.Space == ""
}

// fullName quotes an element or attribute name, its namespace joined on.
func fullName(n xml.Name) string { return quote(n.Space + n.Local) }

// rdfAttr returns the RDF/XML attribute name of a: its local name in the
// rdf namespace ("about", "ID", ...), or "" for a property attribute. An
// attribute in no namespace is an error, but for the five names the syntax
// still reads as rdf: ones.
func rdfAttr(a xml.Attr) (string, error) {
	switch a.Name.Space {
	case rdfNS:
		return a.Name.Local, nil
	case "":
		switch a.Name.Local {
		case "about", "ID", "resource", "parseType", "type":
			return a.Name.Local, nil
		}
		return "", syntaxf("attribute %s in no namespace", quote(a.Name.Local))
	}
	return "", nil
}

// isSyntaxTerm reports whether rdf:name is one of the grammar's
// coreSyntaxTerms or oldTerms, which no node element, property element or
// property attribute may be named.
func isSyntaxTerm(name string) bool {
	switch name {
	case "RDF", "ID", "about", "parseType", "resource", "nodeID", "datatype",
		"aboutEach", "aboutEachPrefix", "bagID":
		return true
	}
	return false
}

// isForbiddenAttr reports whether rdf:name may not be a property attribute
// (propertyAttributeURIs: not a syntax term, rdf:Description or rdf:li).
func isForbiddenAttr(name string) bool {
	return isSyntaxTerm(name) || name == "Description" || name == "li"
}

// nodeElement opens a node element: its subject (rdf:about, rdf:ID,
// rdf:nodeID or none), its type (the element name unless rdf:Description)
// and its property attributes. The caller has checked its place.
func (x *xmlRDF) nodeElement(e *xml.StartElement, base string) error {
	if e.Name.Space == "" {
		return syntaxf("element %s in no namespace", quote(e.Name.Local))
	}
	if e.Name.Space == rdfNS && (isSyntaxTerm(e.Name.Local) || e.Name.Local == "li") {
		return syntaxf("rdf:%s cannot be a node element", e.Name.Local)
	}
	// The subject first: a top-level node element yields it only with a
	// triple (a bare <rdf:Description rdf:about="..."/> states nothing).
	topLevel := len(x.stack) == 0 || x.stack[len(x.stack)-1].kind == xRDF
	subjects := 0
	var subject string
	for _, a := range e.Attr {
		if isXMLAttr(a.Name) {
			continue
		}
		name, err := rdfAttr(a)
		if err != nil {
			return err
		}
		switch name {
		case "about":
			subjects++
			if subject, err = x.resolve(a.Value, base); err != nil {
				return err
			}
		case "ID":
			subjects++
			if subject, err = x.id(a.Value, base); err != nil {
				return err
			}
		case "nodeID":
			subjects++
			if !xmlscan.IsNCName(a.Value) {
				return syntaxf("rdf:nodeID %s is not an XML name", quote(a.Value))
			}
		}
	}
	if subjects > 1 {
		return syntaxf("a node element with more than one of rdf:about, rdf:ID and rdf:nodeID")
	}
	emitSubject := func() error {
		if subject == "" {
			return nil
		}
		s := subject
		subject = ""
		return x.emit(s)
	}
	if !topLevel {
		if err := emitSubject(); err != nil {
			return err
		}
	}
	if !(e.Name.Space == rdfNS && e.Name.Local == "Description") {
		if err := emitSubject(); err != nil {
			return err
		}
		if err := x.emit(rdfType); err != nil {
			return err
		}
		if err := x.emit(e.Name.Space + e.Name.Local); err != nil {
			return err
		}
	}
	for _, a := range e.Attr {
		if isXMLAttr(a.Name) {
			continue
		}
		name, _ := rdfAttr(a)
		switch name {
		case "about", "ID", "nodeID":
			continue
		case "":
			if err := emitSubject(); err != nil {
				return err
			}
			if err := x.emit(a.Name.Space + a.Name.Local); err != nil {
				return err
			}
		case "type":
			iri, err := x.resolve(a.Value, base)
			if err != nil {
				return err
			}
			if err := emitSubject(); err != nil {
				return err
			}
			if err := x.emit(rdfType); err != nil {
				return err
			}
			if err := x.emit(iri); err != nil {
				return err
			}
		default:
			if isForbiddenAttr(name) {
				return syntaxf("attribute rdf:%s on a node element", name)
			}
			if err := emitSubject(); err != nil {
				return err
			}
			if err := x.emit(rdfNS + name); err != nil {
				return err
			}
		}
	}
	return x.push(xframe{kind: xNode, base: base, subject: subject})
}

// propertyElement opens a property element; li is its number should it be
// rdf:li.
func (x *xmlRDF) propertyElement(e *xml.StartElement, base string, li int) error {
	if e.Name.Space == "" {
		return syntaxf("element %s in no namespace", quote(e.Name.Local))
	}
	pred := e.Name.Space + e.Name.Local
	if e.Name.Space == rdfNS {
		switch l := e.Name.Local; {
		case l == "li":
			pred = rdfNS + "_" + strconv.Itoa(li)
		case isSyntaxTerm(l) || l == "Description":
			return syntaxf("rdf:%s cannot be a property element", l)
		}
	}
	if err := x.emit(pred); err != nil {
		return err
	}
	var id, parseType, resource, nodeID, datatype *string
	props := 0
	for i := range e.Attr {
		a := &e.Attr[i]
		if isXMLAttr(a.Name) {
			continue
		}
		name, err := rdfAttr(*a)
		if err != nil {
			return err
		}
		switch name {
		case "":
			props++
			if err := x.emit(a.Name.Space + a.Name.Local); err != nil {
				return err
			}
		case "ID":
			id = &a.Value
		case "parseType":
			parseType = &a.Value
		case "resource":
			resource = &a.Value
		case "nodeID":
			nodeID = &a.Value
		case "datatype":
			datatype = &a.Value
		case "type":
			props++
			iri, err := x.resolve(a.Value, base)
			if err != nil {
				return err
			}
			if err := x.emit(rdfType); err != nil {
				return err
			}
			if err := x.emit(iri); err != nil {
				return err
			}
		default:
			if isForbiddenAttr(name) {
				return syntaxf("attribute rdf:%s on a property element", name)
			}
			props++
			if err := x.emit(rdfNS + name); err != nil {
				return err
			}
		}
	}
	if id != nil {
		iri, err := x.id(*id, base)
		if err != nil {
			return err
		}
		for _, iri := range [...]string{iri, rdfType, rdfStatement, rdfSubject, rdfPredicate, rdfObject} {
			if err := x.emit(iri); err != nil {
				return err
			}
		}
	}
	if parseType != nil {
		if resource != nil || nodeID != nil || datatype != nil || props > 0 {
			return syntaxf("rdf:parseType with rdf:resource, rdf:nodeID, rdf:datatype or property attributes")
		}
		switch *parseType {
		case "Resource":
			return x.push(xframe{kind: xResource, base: base})
		case "Collection":
			return x.push(xframe{kind: xCollection, base: base})
		}
		if err := x.emit(rdfXMLLiteral); err != nil {
			return err
		}
		return x.push(xframe{kind: xLiteral, base: base})
	}
	if resource != nil && nodeID != nil {
		return syntaxf("a property element with both rdf:resource and rdf:nodeID")
	}
	if datatype != nil {
		if resource != nil || nodeID != nil || props > 0 {
			return syntaxf("rdf:datatype with rdf:resource, rdf:nodeID or property attributes")
		}
		iri, err := x.resolve(*datatype, base)
		if err != nil {
			return err
		}
		if err := x.emit(iri); err != nil {
			return err
		}
		return x.push(xframe{kind: xProperty, base: base, typed: true})
	}
	if nodeID != nil && !xmlscan.IsNCName(*nodeID) {
		return syntaxf("rdf:nodeID %s is not an XML name", quote(*nodeID))
	}
	if resource != nil {
		iri, err := x.resolve(*resource, base)
		if err != nil {
			return err
		}
		if err := x.emit(iri); err != nil {
			return err
		}
	}
	if resource != nil || nodeID != nil || props > 0 {
		return x.push(xframe{kind: xEmpty, base: base})
	}
	return x.push(xframe{kind: xProperty, base: base})
}

// id checks an rdf:ID value, refuses one the document used before with the
// same base, and yields base#id.
func (x *xmlRDF) id(v, base string) (string, error) {
	if !xmlscan.IsNCName(v) {
		return "", syntaxf("rdf:ID %s is not an XML name", quote(v))
	}
	iri, err := x.resolve("#"+v, base)
	if err != nil {
		return "", err
	}
	if x.ids == nil {
		x.ids = make(map[uint64]struct{})
	}
	h := maphash.String(x.seed, iri)
	if _, dup := x.ids[h]; dup {
		return "", syntaxf("rdf:ID %s used twice (as <%s>)", quote(v), iri)
	}
	if len(x.ids) >= maxRDFIDs {
		return "", fmt.Errorf("%w: more than %d rdf:ID values", ErrLimit, maxRDFIDs)
	}
	x.ids[h] = struct{}{}
	return iri, nil
}
