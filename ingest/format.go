package ingest

import (
	"fmt"
	"path"
	"strings"
)

// Format names an input format.
type Format int

const (
	// Lines is one record per line (or per NUL-separated record).
	Lines Format = iota
	// NTriples is W3C N-Triples 1.1 or N-Quads 1.1: every IRI in subject,
	// predicate, object, datatype and graph position is a record.
	NTriples
	// Sitemap is a sitemaps.org <urlset> or <sitemapindex>: every
	// url/loc or sitemap/loc is a record.
	Sitemap
	// Hashes is one hex hash or hash prefix per line.
	Hashes
	// Turtle is W3C Turtle 1.1: every IRI in subject, predicate, object and
	// datatype position, prefixed names expanded and relative references
	// resolved (see Options.Base).
	Turtle
	// TriG is W3C TriG 1.1: Turtle's records and every graph name.
	TriG
	// RDFXML is W3C RDF 1.1 XML Syntax: every IRI of the graph it encodes.
	RDFXML
)

var formatNames = [...]string{
	Lines:    "lines",
	NTriples: "ntriples",
	Sitemap:  "sitemap",
	Hashes:   "hashes",
	Turtle:   "turtle",
	TriG:     "trig",
	RDFXML:   "rdfxml",
}

// String returns the format's name as ParseFormat accepts it.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// isValid reports whether f is one of the defined formats.
func (f Format) isValid() bool { return f >= 0 && int(f) < len(formatNames) }

// FormatNames lists the names ParseFormat accepts, in the order messages
// give them.
const FormatNames = "lines, hashes, ntriples, nquads, turtle, trig, rdfxml or sitemap"

// ParseFormat returns the format named name: "lines", "hashes",
// "ntriples", "nquads" (the same reader as "ntriples"), "turtle", "trig",
// "rdfxml" or "sitemap", in any case. Another name is an error wrapping
// ErrUnknownFormat.
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "lines":
		return Lines, nil
	case "ntriples", "nquads":
		return NTriples, nil
	case "sitemap":
		return Sitemap, nil
	case "hashes":
		return Hashes, nil
	case "turtle":
		return Turtle, nil
	case "trig":
		return TriG, nil
	case "rdfxml":
		return RDFXML, nil
	}
	return 0, fmt.Errorf("%w %s (want %s)", ErrUnknownFormat, quote(name), FormatNames)
}

// FormatOf returns the RDF format a file name's extension names, ignoring
// a final ".gz": .nt and .nq (NTriples), .ttl (Turtle), .trig (TriG), .rdf
// and .owl (RDFXML), in any case. ok is false for any other name.
func FormatOf(name string) (f Format, ok bool) {
	ext := strings.ToLower(path.Ext(name))
	if ext == ".gz" {
		ext = strings.ToLower(path.Ext(name[:len(name)-len(ext)]))
	}
	switch ext {
	case ".nt", ".nq":
		return NTriples, true
	case ".ttl":
		return Turtle, true
	case ".trig":
		return TriG, true
	case ".rdf", ".owl":
		return RDFXML, true
	}
	return 0, false
}

// IsRDF reports whether f is one of the RDF syntaxes: NTriples, Turtle,
// TriG or RDFXML.
func (f Format) IsRDF() bool { return f == NTriples || f == Turtle || f == TriG || f == RDFXML }
