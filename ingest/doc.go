// Package ingest reads URL and hash records out of files: plain lines,
// N-Triples and N-Quads, sitemaps and hex hash lists. It is the input side of
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
// ErrSyntax, ErrNotSitemap or ErrLimit ends the sequence (see Limits). Any
// other error ends the sequence: a read or gzip error, invalid options, or
// ErrBinary.
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
//     through an escape), is one *LineError, and none of its IRIs is yielded.
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
// wraps ErrBinary and names the file, and no record. The block looks binary
// when it
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
// names and namespace declarations. With -hostile-mib 1024, TestMemoryBound
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
//     what the limit bounds. No real sitemap comes near them.
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
