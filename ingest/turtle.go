package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
)

// Vocabulary IRIs that Turtle, TriG and RDF/XML abbreviate: a statement
// written with them holds them as any other IRI, so they are records too.
const (
	rdfNS         = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	xsdNS         = "http://www.w3.org/2001/XMLSchema#"
	rdfType       = rdfNS + "type"
	rdfFirst      = rdfNS + "first"
	rdfRest       = rdfNS + "rest"
	rdfNil        = rdfNS + "nil"
	rdfXMLLiteral = rdfNS + "XMLLiteral"
	xsdInteger    = xsdNS + "integer"
	xsdDecimal    = xsdNS + "decimal"
	xsdDouble     = xsdNS + "double"
	xsdBoolean    = xsdNS + "boolean"
)

// Fixed limits of the Turtle, TriG and RDF/XML readers, which bound the
// memory they hold besides one term: going over one is a *LineError
// wrapping ErrLimit that ends the sequence.
const (
	maxRDFNesting = 1024    // open blank node property lists, collections, elements
	maxPrefixes   = 1 << 16 // distinct prefixes declared in a Turtle or TriG document
)

// readTurtle yields every IRI of a Turtle (or, with trig, TriG) document, in
// subject, predicate, object, datatype and graph position, with prefixed
// names expanded and relative references resolved against the base. The
// first error ends the sequence: past a syntax error the document cannot be
// followed.
func readTurtle(br *bufio.Reader, name string, o *Options, trig bool, yield func(Record, error) bool) {
	p := &ttlParser{
		lx:       newTTLLexer(br, o.MaxLineBytes),
		trig:     trig,
		prefixes: make(map[string]string),
		yield:    yield,
	}
	err := p.init(o.Base)
	if err == nil {
		err = p.document()
	}
	switch {
	case err == nil, err == errStopped:
	case errors.Is(err, ErrSyntax), errors.Is(err, ErrInvalidIRI), errors.Is(err, ErrRelativeIRI),
		errors.Is(err, ErrLineTooLong), errors.Is(err, ErrLimit):
		// Where the lexer met the error, or else the token the parser
		// refused.
		line, col := p.lx.tok.line, p.lx.tok.col
		var pe *posError
		if errors.As(err, &pe) {
			line, col, err = pe.line, pe.col, pe.err
		}
		yield(Record{Line: line}, &LineError{File: name, Line: line, Err: &columnError{col: col, err: err}})
	default:
		yield(Record{}, ioError(name, err))
	}
}

// ttlParser is a recursive-descent parser of Turtle 1.1 and TriG 1.1
// (https://www.w3.org/TR/turtle/#sec-grammar,
// https://www.w3.org/TR/trig/#sec-grammar) that keeps no triple: it checks
// the grammar and yields IRIs as it meets them.
type ttlParser struct {
	lx       *ttlLexer
	trig     bool
	rs       resolver
	prefixes map[string]string
	yield    func(Record, error) bool
	depth    int // open property lists and collections
}

func (p *ttlParser) init(base string) error {
	if base != "" {
		return p.rs.setBase(base)
	}
	return nil
}

func (p *ttlParser) tok() *token { return &p.lx.tok }

// isPunct reports whether the current token is the punctuation c.
func (p *ttlParser) isPunct(c byte) bool { return p.lx.tok.kind == tPunct && p.lx.tok.c == c }

// expect consumes the punctuation c.
func (p *ttlParser) expect(c byte, where string) error {
	if !p.isPunct(c) {
		return p.unexpected(fmt.Sprintf("'%c' %s", c, where))
	}
	return p.lx.next()
}

// unexpected is the error for the current token where want was due.
func (p *ttlParser) unexpected(want string) error {
	t := p.tok()
	var got string
	switch t.kind {
	case tEOF:
		got = "end of input"
	case tIRI:
		got = "IRI <" + shorten(string(t.text)) + ">"
	case tPName:
		got = "name " + shorten(string(t.prefix)+":"+string(t.text))
	case tBlank:
		got = "blank node"
	case tString:
		got = "string"
	case tLangTag:
		got = "@" + shorten(string(t.text))
	case tInteger, tDecimal, tDouble:
		got = "number"
	case tPunct:
		got = fmt.Sprintf("'%c'", t.c)
	case tDatatype:
		got = "'^^'"
	case tWord:
		got = quote(string(t.text))
	}
	return syntaxf("want %s, got %s", want, got)
}

func shorten(s string) string {
	if len(s) > maxQuote {
		return s[:maxQuote] + "..."
	}
	return s
}

// emit yields an IRI at line.
func (p *ttlParser) emit(iri string, line int) error {
	if !p.yield(Record{Text: iri, Line: line}, nil) {
		return errStopped
	}
	return nil
}

// document parses turtleDoc or trigDoc.
func (p *ttlParser) document() error {
	if err := p.lx.next(); err != nil {
		return err
	}
	for p.tok().kind != tEOF {
		if ok, err := p.directive(); err != nil || ok {
			if err != nil {
				return err
			}
			continue
		}
		var err error
		if p.trig {
			err = p.block()
		} else {
			if err = p.triples(); err == nil {
				err = p.expect('.', "ending a statement")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// directive parses a directive if one starts here: @prefix and @base end
// with '.', SPARQL's PREFIX and BASE (in any case) do not.
func (p *ttlParser) directive() (bool, error) {
	t := p.tok()
	var isPrefix, dot bool
	switch {
	case t.kind == tLangTag && string(t.text) == "prefix":
		isPrefix, dot = true, true
	case t.kind == tLangTag && string(t.text) == "base":
		dot = true
	case t.kind == tWord && strings.EqualFold(string(t.text), "prefix"):
		isPrefix = true
	case t.kind == tWord && strings.EqualFold(string(t.text), "base"):
	default:
		return false, nil
	}
	if err := p.lx.next(); err != nil {
		return true, err
	}
	var prefix string
	if isPrefix {
		if t.kind != tPName || len(t.text) > 0 {
			return true, p.unexpected("a prefix name ending with ':'")
		}
		prefix = string(t.prefix)
		if err := p.lx.next(); err != nil {
			return true, err
		}
	}
	if t.kind != tIRI {
		return true, p.unexpected("an IRI")
	}
	iri, err := p.rs.resolve(string(t.text))
	if err != nil {
		return true, err
	}
	if isPrefix {
		if _, ok := p.prefixes[prefix]; !ok && len(p.prefixes) >= maxPrefixes {
			return true, fmt.Errorf("%w: more than %d prefixes", ErrLimit, maxPrefixes)
		}
		p.prefixes[prefix] = iri
	} else if err := p.rs.setBase(iri); err != nil {
		return true, err
	}
	if err := p.lx.next(); err != nil {
		return true, err
	}
	if dot {
		return true, p.expect('.', "ending a directive")
	}
	return true, nil
}

// block parses a TriG block other than a directive.
func (p *ttlParser) block() error {
	t := p.tok()
	switch {
	case p.isPunct('{'):
		return p.wrappedGraph()
	case t.kind == tWord && strings.EqualFold(string(t.text), "graph"):
		if err := p.lx.next(); err != nil {
			return err
		}
		if err := p.label(); err != nil {
			return err
		}
		return p.wrappedGraph()
	case p.isPunct('['):
		if err := p.lx.next(); err != nil {
			return err
		}
		if p.isPunct(']') { // ANON: a graph label or a subject
			if err := p.lx.next(); err != nil {
				return err
			}
			if p.isPunct('{') {
				return p.wrappedGraph()
			}
			if err := p.predicateObjectList(); err != nil {
				return err
			}
			return p.expect('.', "ending a statement")
		}
		if err := p.propertyListRest(); err != nil {
			return err
		}
		if !p.isPunct('.') {
			if err := p.predicateObjectList(); err != nil {
				return err
			}
		}
		return p.expect('.', "ending a statement")
	case p.isPunct('('):
		if err := p.collection(); err != nil {
			return err
		}
		if err := p.predicateObjectList(); err != nil {
			return err
		}
		return p.expect('.', "ending a statement")
	case t.kind == tIRI || t.kind == tPName || t.kind == tBlank:
		if err := p.iriOrBlank(); err != nil {
			return err
		}
		if p.isPunct('{') {
			return p.wrappedGraph()
		}
		if err := p.predicateObjectList(); err != nil {
			return err
		}
		return p.expect('.', "ending a statement")
	}
	return p.unexpected("a statement")
}

// label parses a graph label after GRAPH: an IRI or a blank node.
func (p *ttlParser) label() error {
	t := p.tok()
	switch {
	case t.kind == tIRI || t.kind == tPName || t.kind == tBlank:
		return p.iriOrBlank()
	case p.isPunct('['):
		if err := p.lx.next(); err != nil {
			return err
		}
		return p.expect(']', "closing an anonymous graph label")
	}
	return p.unexpected("a graph label")
}

// wrappedGraph parses '{' triplesBlock? '}'.
func (p *ttlParser) wrappedGraph() error {
	if err := p.expect('{', "opening a graph"); err != nil {
		return err
	}
	for !p.isPunct('}') {
		if err := p.triples(); err != nil {
			return err
		}
		if p.isPunct('}') {
			break
		}
		if err := p.expect('.', "or '}' after triples"); err != nil {
			return err
		}
	}
	return p.lx.next()
}

// triples parses subject predicateObjectList | blankNodePropertyList
// predicateObjectList?
func (p *ttlParser) triples() error {
	t := p.tok()
	switch {
	case t.kind == tIRI || t.kind == tPName || t.kind == tBlank:
		if err := p.iriOrBlank(); err != nil {
			return err
		}
	case p.isPunct('('):
		if err := p.collection(); err != nil {
			return err
		}
	case p.isPunct('['):
		if err := p.lx.next(); err != nil {
			return err
		}
		if p.isPunct(']') {
			if err := p.lx.next(); err != nil {
				return err
			}
			break
		}
		if err := p.propertyListRest(); err != nil {
			return err
		}
		if p.isPunct('.') || p.trig && p.isPunct('}') {
			return nil
		}
	default:
		return p.unexpected("a subject")
	}
	return p.predicateObjectList()
}

// iriOrBlank consumes an IRI, a prefixed name or a blank node label,
// yielding the IRI.
func (p *ttlParser) iriOrBlank() error {
	t := p.tok()
	if t.kind == tBlank {
		return p.lx.next()
	}
	return p.iri()
}

// iri consumes an IRI or a prefixed name and yields it.
func (p *ttlParser) iri() error {
	t := p.tok()
	line := t.line
	var iri string
	switch t.kind {
	case tIRI:
		var err error
		if iri, err = p.rs.resolve(string(t.text)); err != nil {
			return err
		}
	case tPName:
		ns, ok := p.prefixes[string(t.prefix)]
		if !ok {
			return syntaxf("undeclared prefix %s", quote(string(t.prefix)+":"))
		}
		iri = ns + string(t.text)
	default:
		return p.unexpected("an IRI")
	}
	if len(iri) > p.lx.max {
		return fmt.Errorf("%w (an IRI of more than %d bytes)", ErrLineTooLong, p.lx.max)
	}
	if err := p.emit(iri, line); err != nil {
		return err
	}
	return p.lx.next()
}

// predicateObjectList parses verb objectList (';' (verb objectList)?)*.
func (p *ttlParser) predicateObjectList() error {
	if err := p.verb(); err != nil {
		return err
	}
	if err := p.objectList(); err != nil {
		return err
	}
	for p.isPunct(';') {
		for p.isPunct(';') {
			if err := p.lx.next(); err != nil {
				return err
			}
		}
		if t := p.tok(); t.kind == tIRI || t.kind == tPName || t.kind == tWord && string(t.text) == "a" {
			if err := p.verb(); err != nil {
				return err
			}
			if err := p.objectList(); err != nil {
				return err
			}
		}
	}
	return nil
}

// verb parses a predicate or 'a' (rdf:type).
func (p *ttlParser) verb() error {
	t := p.tok()
	if t.kind == tWord && string(t.text) == "a" {
		if err := p.emit(rdfType, t.line); err != nil {
			return err
		}
		return p.lx.next()
	}
	if t.kind != tIRI && t.kind != tPName {
		return p.unexpected("a predicate")
	}
	return p.iri()
}

// objectList parses object (',' object)*.
func (p *ttlParser) objectList() error {
	if err := p.object(); err != nil {
		return err
	}
	for p.isPunct(',') {
		if err := p.lx.next(); err != nil {
			return err
		}
		if err := p.object(); err != nil {
			return err
		}
	}
	return nil
}

// object parses an object: an IRI, a blank node, a collection, a blank
// node property list or a literal. A literal yields its datatype IRI when
// it has one written or implied (numbers, booleans).
func (p *ttlParser) object() error {
	t := p.tok()
	line := t.line
	switch t.kind {
	case tIRI, tPName, tBlank:
		return p.iriOrBlank()
	case tString:
		if err := p.lx.next(); err != nil {
			return err
		}
		switch t.kind {
		case tLangTag:
			return p.lx.next()
		case tDatatype:
			if err := p.lx.next(); err != nil {
				return err
			}
			if t.kind != tIRI && t.kind != tPName {
				return p.unexpected("a datatype IRI")
			}
			return p.iri()
		}
		return nil
	case tInteger, tDecimal, tDouble:
		dt := [...]string{tInteger: xsdInteger, tDecimal: xsdDecimal, tDouble: xsdDouble}[t.kind]
		if err := p.emit(dt, line); err != nil {
			return err
		}
		return p.lx.next()
	case tWord:
		if s := string(t.text); s == "true" || s == "false" {
			if err := p.emit(xsdBoolean, line); err != nil {
				return err
			}
			return p.lx.next()
		}
	case tPunct:
		switch t.c {
		case '(':
			return p.collection()
		case '[':
			if err := p.lx.next(); err != nil {
				return err
			}
			if p.isPunct(']') {
				return p.lx.next()
			}
			return p.propertyListRest()
		}
	}
	return p.unexpected("an object")
}

// nest opens a level of nesting, refusing one past maxRDFNesting.
func (p *ttlParser) nest() error {
	if p.depth++; p.depth > maxRDFNesting {
		return fmt.Errorf("%w: property lists and collections nested deeper than %d", ErrLimit, maxRDFNesting)
	}
	return nil
}

// propertyListRest parses predicateObjectList ']' after '['.
func (p *ttlParser) propertyListRest() error {
	if err := p.nest(); err != nil {
		return err
	}
	if err := p.predicateObjectList(); err != nil {
		return err
	}
	p.depth--
	return p.expect(']', "closing a blank node property list")
}

// collection parses '(' object* ')', yielding rdf:first and rdf:rest for a
// non-empty one and rdf:nil for every one.
func (p *ttlParser) collection() error {
	if err := p.nest(); err != nil {
		return err
	}
	line := p.tok().line
	if err := p.lx.next(); err != nil { // '('
		return err
	}
	first := true
	for !p.isPunct(')') {
		if first {
			if err := p.emit(rdfFirst, line); err != nil {
				return err
			}
			if err := p.emit(rdfRest, line); err != nil {
				return err
			}
			first = false
		}
		if err := p.object(); err != nil {
			return err
		}
	}
	p.depth--
	if err := p.emit(rdfNil, p.tok().line); err != nil {
		return err
	}
	return p.lx.next()
}
