package ingest

import (
	"fmt"
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
)

var formatNames = [...]string{
	Lines:    "lines",
	NTriples: "ntriples",
	Sitemap:  "sitemap",
	Hashes:   "hashes",
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

// ParseFormat returns the format named name: "lines", "ntriples", "nquads"
// (the same reader as "ntriples"), "sitemap" or "hashes", in any case.
// Another name is an error wrapping ErrUnknownFormat.
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
	}
	return 0, fmt.Errorf("%w %s (want lines, ntriples, nquads, sitemap or hashes)", ErrUnknownFormat, quote(name))
}
