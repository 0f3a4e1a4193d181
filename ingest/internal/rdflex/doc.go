// Package rdflex is the lexical core of ingest's RDF readers: the
// terminals that N-Triples, N-Quads, Turtle and TriG define alike (IRIREF
// and its UCHAR escapes, ECHAR, the PN_CHARS classes of names) and the
// wording of their errors, so that the same mistake reads the same in
// every syntax. It scans bytes it is given and knows nothing of lines,
// files or the readers' error types: an *Error says what is wrong and at
// which offset, and the reader adds where.
package rdflex
