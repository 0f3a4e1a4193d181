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
// decides whether to skip it or stop. Any other error ends the sequence.
//
// # Formats
//
//   - Lines: one record per line, kept as is except for a trailing carriage
//     return (the URL canonicaliser trims). Blank and comment lines are
//     skipped (see below). With Options.NUL, records are separated by NUL
//     bytes and taken byte for byte: only blank ones are skipped, and one
//     starting with '#' is a record like any other.
//   - Hashes: one hex hash per line, trimmed; blank and comment lines are
//     skipped, NUL-separated or not. A record is an even number of 8 to 64 hex digits
//     (64: a full SHA-256 entry; fewer: a prefix entry of 4 to 31 bytes),
//     yielded in lowercase.
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
// # Caveats
//
// Lines, records and <loc> texts longer than Options.MaxLineBytes (1 MiB by
// default) are a *LineError, never held in memory whole. Sitemaps must be UTF-8:
// another declared encoding is a syntax error. Record line numbers of
// NUL-separated input count records, not newlines.
package ingest
