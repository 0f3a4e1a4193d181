// Package ingest reads URL and hash records out of files: plain lines,
// the RDF syntaxes (N-Triples, N-Quads, Turtle, TriG, RDF/XML), sitemaps and
// hex hash lists. It is the input side of
// `urlhash import`, `dedupe` and the other commands that take many URLs; it
// knows nothing of canonicalisation or storage, which the caller does with
// hashkey and query.
//
// # Basics
//
// Open a file ("-" is standard input; gzip is detected by its magic bytes, not
// its name), then range over Read:
//
//	rc, err := ingest.Open(path)
//	if err != nil { ... }
//	defer rc.Close()
//	for rec, err := range ingest.Read(rc, path, ingest.NTriples, nil) {
//		var le *ingest.LineError
//		if errors.As(err, &le) {
//			fmt.Fprintln(os.Stderr, err) // FILE:LINE: reason; skip, or stop (--strict)
//			continue
//		}
//		if err != nil {
//			return err // I/O or decompression error: the sequence has ended
//		}
//		use(rec.Text, rec.Line)
//	}
//
// A bad record yields a *LineError and reading continues, so that the caller
// decides whether to skip it or stop; only a sitemap's *LineError wrapping
// ErrSyntax, ErrNotSitemap or ErrLimit, and any *LineError of a Turtle,
// TriG or RDF/XML document, end the sequence (see Limits). Any other error
// ends the sequence: a read or gzip error, invalid options, or ErrBinary.
//
// # Formats
//
//   - Lines: one record per line, kept as is except for a trailing carriage
//     return (the URL canonicaliser trims). Blank and comment lines are
//     skipped (see below). With Options.NUL, records are separated by NUL
//     bytes and taken byte for byte: only blank ones are skipped, and one
//     starting with '#' is a record like any other.
//   - Hashes: one hex hash per line, trimmed; blank and comment lines are
//     skipped, NUL-separated or not. A record is an even number of 8 to 64
//     hex digits (64: a full SHA-256 entry; fewer: a prefix entry of 4 to 31
//     bytes), yielded in lowercase.
//   - NTriples: W3C N-Triples 1.1 and N-Quads 1.1. Every IRI in subject,
//     predicate, object, datatype (^^<...>) and graph position is a record,
//     with its \u and \U escapes decoded; literals and blank nodes are
//     skipped, as are comments and blank lines. A line that does not follow
//     the grammar, or whose IRIs hold a character the grammar forbids (also
//     through an escape) or are relative (ErrRelativeIRI), is one
//     *LineError, and none of its IRIs is yielded. Blank node labels follow
//     the grammar as its erratum and the W3C tests read it: no ':'.
//   - Turtle and TriG: W3C Turtle 1.1 and TriG 1.1, streamed by one lexer
//     and a recursive-descent parser (Turtle's statements; TriG's graphs).
//     Every IRI in subject, predicate, object, datatype and graph position
//     is a record, with the line it starts on: IRIREFs with their escapes
//     decoded and resolved against the base, prefixed names expanded (local
//     name escapes decoded, %XX kept), 'a' as rdf:type, and the IRIs the
//     syntax implies: xsd:integer, xsd:decimal, xsd:double and xsd:boolean
//     for bare numbers and booleans, rdf:first, rdf:rest and rdf:nil for
//     collections. Literals and blank nodes are checked and skipped.
//   - RDFXML: W3C RDF 1.1 XML Syntax. Every IRI of the graph the document
//     encodes: node and property element names (rdf:li numbered rdf:_1,
//     rdf:_2, ...), rdf:about, rdf:resource, rdf:datatype, rdf:type,
//     property attributes, rdf:ID as base#ID (an XML name, used once per
//     base), rdf:type for typed node elements, rdf:first, rdf:rest and
//     rdf:nil for parseType="Collection", rdf:XMLLiteral for
//     parseType="Literal" (whose content is skipped), and rdf:Statement,
//     rdf:subject, rdf:predicate, rdf:object for a reified statement
//     (rdf:ID on a property element). xml:base sets the base; the names
//     the syntax forbids (rdf:RDF, rdf:ID, ... as elements, rdf:li and
//     rdf:Description as attributes, the removed rdf:aboutEach,
//     rdf:aboutEachPrefix and rdf:bagID) are errors. The XML is read by the
//     streaming XML scanner the sitemap reader uses too (below):
//     well-formed, UTF-8, no entity but the predefined five, a prefix no
//     declaration binds is an error; this reader is the grammar's state
//     machine over the scanner's elements. A node
//     element that states nothing (<rdf:Description rdf:about="x"/>) yields
//     nothing.
//
// The N-Triples, N-Quads, Turtle and TriG readers share one lexical core
// for the terminals their grammars define alike (IRIREF with its UCHAR
// escapes, ECHAR, the PN_CHARS classes), so that one mistake reads the same
// in each: "invalid escape "\\u00G"", "forbidden character ' '", "escape
// of forbidden character '>'"; N-Triples puts the column before the reason
// (at column N: ...), Turtle and TriG after it ((column N)).
//
// A relative IRI reference in Turtle, TriG or RDF/XML is resolved as RFC
// 3986 section 5.2 says (strict, with remove_dot_segments), against the base
// the document sets (@base, BASE, xml:base) or else Options.Base; with
// neither it is a *LineError wrapping ErrRelativeIRI. An absolute IRI has
// its dot segments removed too, as section 5.2.2 does. The first error in a
// Turtle, TriG or RDF/XML document (syntax, invalid or relative IRI, a term
// too long, a limit) is one *LineError naming its line (for Turtle and
// TriG, its byte column too), and ends the sequence: past it the document
// cannot be followed.
//   - Sitemap: a sitemaps.org <urlset> (url/loc) or <sitemapindex>
//     (sitemap/loc), in the sitemaps.org namespace or none, streamed by a
//     scanner of the XML that sitemaps use, which checks well-formedness as
//     encoding/xml does but holds no more than one <loc> text in memory. A
//     record is the <loc> text, decoded and trimmed, with the line of the
//     end of its start tag. Character references and the five predefined
//     entities are decoded; a DOCTYPE is skipped, and no entity it declares
//     is ever expanded: a reference to one is a syntax error. XML that is
//     not well-formed yields one *LineError at the line of the fault and
//     ends the sequence.
//
// One rule for blank lines and comments holds in every line format: a line
// (or NUL-separated record) is blank when it holds nothing but ASCII white
// space, and a comment when its first other byte is '#'; both are skipped,
// and still count for line numbers. No URL, IRI or hash starts with '#' (a
// bare "#fragment" is a relative reference, which has no identity of its
// own), so no record is lost. The one exception is Lines with Options.NUL,
// which keeps a '#' record, byte for byte. A UTF-8 byte order mark at the
// start of an input is dropped, unless records are NUL-separated.
//
// # Binary input
//
// Read first examines the first 8 KiB of an input (after gzip decoding) and
// refuses one that does not look like text: it yields a single error, which
// wraps ErrBinary and names the file, and no record. An RDF literal may hold
// any character, NUL and the other control characters included, so for the
// RDF formats only a UTF-16 or UTF-32 byte order mark or a third of invalid
// UTF-8 makes a block binary (their grammars refuse the rest). Otherwise
// the block looks binary when it
//
//   - starts with a UTF-16 or UTF-32 byte order mark (only UTF-8 is read);
//   - holds a NUL byte, unless records are NUL-separated (Options.NUL);
//   - has more than a third of odd bytes: C0 control bytes other than tab,
//     LF, VT, FF and CR (and NUL with Options.NUL), DEL, and bytes that are
//     not part of valid UTF-8. This is the rule of Perl's -B file test.
//
// So random bytes, images, archives and UTF-16 text are refused, while UTF-8
// in any script passes, and so does a Latin-1 file with some accented
// letters: its bytes are read as they are, and a sitemap's are a syntax
// error (invalid UTF-8). Only the first block is examined; binary bytes
// further on are read like any others.
//
// # Limits
//
// Memory is bounded by the limits below, never by the input: whatever the
// length of its lines, tokens or nesting, reading an input holds a 64 KiB
// read buffer (another for a sitemap, and gzip's window), one line or <loc>
// text of at most Options.MaxLineBytes, and for a sitemap the open elements'
// names and namespace declarations. The Turtle, TriG and RDF/XML readers
// hold one term (IRI, prefixed name, blank node label, attribute value) of
// at most Options.MaxLineBytes, the open nesting (at most 1024 property
// lists, collections or elements), the prefixes a Turtle or TriG document
// declares (at most 65536 distinct ones) and, for RDF/XML, a 64-bit hash
// of each rdf:ID value (at most 4 Mi of them), to refuse a repeated one:
// the one part of a reader's memory that grows with its input. Literals,
// comments, numbers and XML literals stream through at any length. With -hostile-mib 1024, TestMemoryBound
// reads hostile inputs of 1 GiB each (a gzipped run of zeros, a <loc>,
// comment, attribute, DOCTYPE or line of 1 GiB, 10 million nested elements
// or attributes, a newline bomb, NUL mode without a NUL, ...) in under 5 MiB
// of heap.
//
//   - Options.MaxLineBytes, 1 MiB by default, bounds a line or NUL-separated
//     record (Lines, Hashes, NTriples) and a <loc> text once trimmed. A
//     longer one is a *LineError wrapping ErrLineTooLong, its bytes are
//     dropped as they are read, and reading goes on with the next line or
//     element: where that is is known without holding what came before.
//   - A sitemap's structure has fixed limits: elements nested at most 64
//     deep, element, attribute and processing-instruction names of at most
//     1 KiB, at most 256 namespace declarations in scope and an XML
//     declaration of at most 1 KiB. Going over one is a *LineError wrapping
//     ErrLimit, which ends the sequence as a syntax error does: past it, the
//     document cannot be followed (end tags, namespaces) without holding
//     what the limit bounds. No real sitemap comes near them. RDF/XML,
//     read by the same scanner, has the same limits but for nesting (1024
//     elements), and holds each attribute value whole, up to
//     Options.MaxLineBytes.
//   - Everything else in a sitemap streams through and is never held, at
//     any length: text outside <loc>, attribute values, comments, CDATA
//     sections, processing instructions, DOCTYPE declarations with their
//     internal subset, character references with any number of leading
//     zeros. Entities are never expanded.
//
// # Caveats
//
// Sitemaps must be UTF-8: another declared encoding is a syntax error. Names
// are checked against XML 1.0 fifth edition, which allows some non-ASCII
// names that encoding/xml (fourth edition) refuses; otherwise the sitemap
// reader accepts and refuses what encoding/xml's strict Decoder does, and
// reports a bad character on its own line. Record line numbers of
// NUL-separated input count records, not newlines.
package ingest
