// Package xmlscan is a streaming scanner of XML 1.0 documents, checked for
// well-formedness as encoding/xml's strict Decoder checks them, that holds
// no token in memory: only names (up to MaxName bytes), the open elements
// and the namespace declarations in scope (up to Options.MaxDepth and
// MaxNamespaces), and what its Handler asks for. Character references
// and the five predefined entities are decoded; a document type
// declaration is skipped, and no entity it declares is ever expanded (a
// reference to one is a syntax error).
//
// The scanner drives a Handler with the document's structure: each start
// tag, each end, and the character data the handler asks for
// (Scanner.SetText). It knows no vocabulary: ingest's sitemap reader and
// its RDF/XML reader are handlers. encoding/xml's Decoder.Token, which
// allocates every token, read RDF/XML at 15 MB/s where this scanner reads
// 60-110 MB/s (BenchmarkRead/rdfxml of package ingest, on one core).
package xmlscan
