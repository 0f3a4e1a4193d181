package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/urlhash/urlhash/internal/golden"
)

// dump runs Read over r and formats every record as "LINE\tTEXT" and every
// error as "LINE\terror: MESSAGE" (or "-\tfatal: MESSAGE"), one a line.
func dump(t testing.TB, r io.Reader, name string, f Format, opts *Options) string {
	t.Helper()
	var b strings.Builder
	for rec, err := range Read(r, name, f, opts) {
		var le *LineError
		switch {
		case err == nil:
			fmt.Fprintf(&b, "%d\t%s\n", rec.Line, rec.Text)
		case errors.As(err, &le):
			if le.Line != rec.Line || rec.Text != "" {
				t.Errorf("LineError line %d with record %+v", le.Line, rec)
			}
			fmt.Fprintf(&b, "%d\terror: %v\n", rec.Line, err)
		default:
			fmt.Fprintf(&b, "-\tfatal: %v\n", err)
		}
	}
	return b.String()
}

// TestReadGolden reads every testdata input and compares what Read yields with
// the matching .golden file (regenerate with -update, then review the diff).
func TestReadGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string // test and golden file name
		file   string
		format Format
		opts   *Options
	}{
		// N-Triples 1.1: IRIs in every position, literals, blank nodes, bad lines.
		{"ntriples", "sample.nt", NTriples, nil},
		// N-Quads 1.1: graph labels.
		{"nquads", "sample.nq", NTriples, nil},
		// Sitemaps: urlset with entities, CDATA, extensions; sitemapindex; no namespace.
		{"urlset", "urlset.xml", Sitemap, nil},
		{"sitemapindex", "sitemapindex.xml", Sitemap, nil},
		{"nons", "nons.xml", Sitemap, nil},
		// Not well-formed XML: records before the error, then one LineError and the end.
		{"malformed", "malformed.xml", Sitemap, nil},
		{"rss", "rss.xml", Sitemap, nil},
		// Turtle, TriG, RDF/XML: every IRI, resolved and expanded; an error
		// ends the sequence.
		{"turtle", "sample.ttl", Turtle, nil},
		{"trig", "sample.trig", TriG, nil},
		{"rdfxml", "sample.rdf", RDFXML, nil},
		{"turtle-bad", "bad.ttl", Turtle, nil},
		{"rdfxml-bad", "bad.rdf", RDFXML, &Options{Base: "http://example.org/bad.rdf"}},
		// Lines: CRLF, blank and comment lines, no final newline.
		{"lines", "lines.txt", Lines, nil},
		// Hashes: full and prefix entries, bad lines.
		{"hashes", "hashes.txt", Hashes, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := dump(t, f, tc.file, tc.format, tc.opts)
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), []byte(got))
		})
	}
}

// TestReadInline covers small cases, each with its expected dump.
func TestReadInline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		format Format
		opts   *Options
		want   string
	}{
		// Lines
		{"lines empty", "", Lines, nil, ""},
		{"lines only blanks", "\n\r\n \t\n", Lines, nil, ""},
		{"lines keep spaces", " a \r\n", Lines, nil, "1\t a \n"},
		{"lines inner CR kept", "a\rb\r\n", Lines, nil, "1\ta\rb\n"},
		{"lines comment", "#frag\n  # c\nhttp://a/#x\n", Lines, nil, "3\thttp://a/#x\n"},
		{"lines NUL hash kept", "#frag\x00", Lines, &Options{NUL: true}, "1\t#frag\n"},
		{"lines BOM", "\xEF\xBB\xBF# c\nhttp://a/\n", Lines, nil, "2\thttp://a/\n"},
		{"lines NUL BOM kept", "\xEF\xBB\xBFa\x00", Lines, &Options{NUL: true}, "1\t\xEF\xBB\xBFa\n"},
		{"lines NUL", "a b\x00\r\n\x00c\r\n\x00\x00d", Lines, &Options{NUL: true}, "1\ta b\n3\tc\r\n\n5\td\n"},
		{"lines NUL keeps newlines", "a\nb\x00", Lines, &Options{NUL: true}, "1\ta\nb\n"},
		{"lines max", "12345\n123456\n1234\n", Lines, &Options{MaxLineBytes: 5}, "1\t12345\n2\terror: f:2: line too long (more than 5 bytes)\n3\t1234\n"},
		{"lines max CRLF", "12345\r\n", Lines, &Options{MaxLineBytes: 5}, "1\terror: f:1: line too long (more than 5 bytes)\n"},
		// Hashes
		{"hashes NUL", "DEADBEEF\x00#x\x00 abcdef01 \x00", Hashes, &Options{NUL: true}, "1\tdeadbeef\n3\tabcdef01\n"},
		{"hashes BOM", "\xEF\xBB\xBFdeadbeef\n", Hashes, nil, "1\tdeadbeef\n"},
		{"hashes 62", strings.Repeat("ab", 31) + "\n", Hashes, nil, "1\t" + strings.Repeat("ab", 31) + "\n"},
		{"hashes 66", strings.Repeat("ab", 33), Hashes, nil, "1\terror: f:1: invalid hash \"" + strings.Repeat("ab", 32) + "\"...: 66 hex digits, want 8 to 64\n"},
		// N-Triples
		{"nt comment only", "# c\n   \n", NTriples, nil, ""},
		{"nt escaped gt", `<http://a/\u003E> <http://p> <http://o> .`, NTriples, nil, "1\terror: f:1: invalid IRI at column 11: escape of forbidden character '>'\n"},
		{"nt surrogate", `<http://a/\uD800> <http://p> <http://o> .`, NTriples, nil, "1\terror: f:1: syntax error at column 11: escape \"\\\\uD800\" is not a Unicode scalar value\n"},
		{"nt bad utf8", "<http://a/\xff> <http://p> <http://o> .", NTriples, nil, "1\terror: f:1: invalid IRI at column 11: invalid UTF-8\n"},
		{"nt DEL allowed", "<http://a/\x7f> <http://p> <http://o> .", NTriples, nil, "1\thttp://a/\x7f\n1\thttp://p\n1\thttp://o\n"},
		{"nt CR splits", "<http://a> <http://p> <http://o> .\r<http://b> <http://p> <http://o> .\r\n", NTriples, nil,
			"1\thttp://a\n1\thttp://p\n1\thttp://o\n1\thttp://b\n1\thttp://p\n1\thttp://o\n"},
		{"nt two statements", "<http://a> <http://p> <http://o> . <http://b> <http://p> <http://o> .", NTriples, nil,
			"1\terror: f:1: syntax error at column 36: unexpected '<' after final '.'\n"},
		{"nt bnode dots", "_:a.b.. <http://p> _:c..", NTriples, nil, "1\terror: f:1: syntax error at column 6: want 3 or 4 terms before '.', got 1\n"},
		// The N-Triples erratum (and the W3C tests): no ':' in a label.
		{"nt bnode colon", "_:a:b <http://p> _:1 .", NTriples, nil, "1\terror: f:1: syntax error at column 4: unexpected ':'\n"},
		{"nt bnode leading colon", "_::a <http://p> _:1 .", NTriples, nil, "1\terror: f:1: syntax error at column 3: invalid blank node label\n"},
		{"nt bnode U+FFFD", "_:a\uFFFD\uFFFD <http://p> _:\uFFFD .", NTriples, nil, "1\thttp://p\n"},
		{"nt relative IRI", "<s> <http://p> <http://o> .", NTriples, nil, "1\terror: f:1: relative IRI <s> at column 1: N-Triples and N-Quads allow only absolute IRIs\n"},
		{"nt NUL in literal", "<http://s> <http://p> \"a\x00b\" .", NTriples, nil, "1\thttp://s\n1\thttp://p\n"},
		{"nt bnode bad", "_:-a <http://p> <http://o> .", NTriples, nil, "1\terror: f:1: syntax error at column 3: invalid blank node label\n"},
		{"nt ws around ^^", `<http://s> <http://p> "1" ^^ <http://dt> .`, NTriples, nil, "1\thttp://s\n1\thttp://p\n1\thttp://dt\n"},
		{"nt datatype not IRI", `<http://s> <http://p> "1"^^_:x .`, NTriples, nil, "1\terror: f:1: syntax error at column 28: datatype is not an IRI\n"},
		{"nt lang subtags", `<http://s> <http://p> "x"@en-Latn-US-1994 .`, NTriples, nil, "1\thttp://s\n1\thttp://p\n"},
		{"nt empty IRI", `<> <http://p> "" .`, NTriples, nil, "1\terror: f:1: relative IRI <> at column 1: N-Triples and N-Quads allow only absolute IRIs\n"},
		{"nt literal then lang and dt", `<http://s> <http://p> "x"@en^^<http://dt> .`, NTriples, nil, "1\terror: f:1: syntax error at column 29: unexpected '^'\n"},
		// W3C minimal_whitespace and bad-struct/bad-lang/bad-num cases.
		{"nt minimal ws lang", `_:s<http://p>"x"@en.`, NTriples, nil, "1\thttp://p\n"},
		{"nt minimal ws bnode", `<http://s><http://p>_:o.#c`, NTriples, nil, "1\thttp://s\n1\thttp://p\n"},
		{"nt comma", `<http://s> <http://p> <http://o>, <http://o2> .`, NTriples, nil, "1\terror: f:1: syntax error at column 33: unexpected ','\n"},
		{"nt lang digit", `<http://s> <http://p> "x"@1 .`, NTriples, nil, "1\terror: f:1: syntax error at column 27: invalid language tag\n"},
		{"nt number", `<http://s> <http://p> 1 .`, NTriples, nil, "1\terror: f:1: syntax error at column 23: unexpected '1'\n"},
		{"nt prefix", `@prefix ex: <http://e/> .`, NTriples, nil, "1\terror: f:1: syntax error at column 1: unexpected '@'\n"},
		{"nt max", "<http://aaaa> <http://p> <http://o> .\n", NTriples, &Options{MaxLineBytes: 10}, "1\terror: f:1: line too long (more than 10 bytes)\n"},
		// Turtle, TriG and RDF/XML: the grammar, as the W3C suites do not spell it out.
		{"ttl semicolons", "@prefix : <http://e/> . :s :p :o ;; :p2 :o2 ;.", Turtle, nil, "1\thttp://e/s\n1\thttp://e/p\n1\thttp://e/o\n1\thttp://e/p2\n1\thttp://e/o2\n"},
		{"ttl sparql prefix no dot", "PREFIX : <http://e/> :s :p \"x\"@en .", Turtle, nil, "1\thttp://e/s\n1\thttp://e/p\n"},
		{"ttl dots tight", "@prefix : <http://e/> . :s :p :o.\n:s2 :p2 1.", Turtle, nil, "1\thttp://e/s\n1\thttp://e/p\n1\thttp://e/o\n2\thttp://e/s2\n2\thttp://e/p2\n2\thttp://www.w3.org/2001/XMLSchema#integer\n"},
		{"ttl relative no base", "<s> <http://e/p> <http://e/o> .", Turtle, nil, "1\terror: f:1: relative IRI <s> and no base IRI to resolve it against (column 1)\n"},
		{"ttl undeclared prefix", "ex:s <http://e/p> <http://e/o> .", Turtle, nil, "1\terror: f:1: syntax error: undeclared prefix \"ex:\" (column 1)\n"},
		{"ttl literal subject", "\"x\" <http://e/p> <http://e/o> .", Turtle, nil, "1\terror: f:1: syntax error: want a subject, got string (column 1)\n"},
		{"ttl anon alone", "[] .", Turtle, nil, "1\terror: f:1: syntax error: want a predicate, got '.' (column 4)\n"},
		{"ttl bnode list alone", "[ <http://e/p> <http://e/o> ] .", Turtle, nil, "1\thttp://e/p\n1\thttp://e/o\n"},
		{"ttl keyword a subject", "a <http://e/p> <http://e/o> .", Turtle, nil, "1\terror: f:1: syntax error: want a subject, got \"a\" (column 1)\n"},
		{"ttl langtag then datatype", "<http://e/s> <http://e/p> \"x\"@en^^<http://e/dt> .", Turtle, nil, "1\thttp://e/s\n1\thttp://e/p\n1\terror: f:1: syntax error: want '.' ending a statement, got '^^' (column 33)\n"},
		{"ttl prefix trailing dot", "@prefix e.: <http://e/> .", Turtle, nil, "1\terror: f:1: syntax error: prefix ends with '.' (column 11)\n"},
		{"ttl dot segments", "<http://e/a/../b/./c> <http://e/p> <http://e/o> .", Turtle, nil, "1\thttp://e/b/c\n1\thttp://e/p\n1\thttp://e/o\n"},
		{"trig nested graph", "<http://e/g> { <http://e/h> { } }", TriG, nil, "1\thttp://e/g\n1\thttp://e/h\n1\terror: f:1: syntax error: want a predicate, got '{' (column 29)\n"},
		{"trig dot after graph", "{ <http://e/s> <http://e/p> <http://e/o> } .", TriG, nil, "1\thttp://e/s\n1\thttp://e/p\n1\thttp://e/o\n1\terror: f:1: syntax error: want a statement, got '.' (column 44)\n"},
		{"trig directive in graph", "{ @prefix : <http://e/> . }", TriG, nil, "1\terror: f:1: syntax error: want a subject, got @prefix (column 3)\n"},
		{"trig graph no label", "GRAPH { }", TriG, nil, "1\terror: f:1: syntax error: want a graph label, got '{' (column 7)\n"},
		{"rdfxml empty datatype", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:e=\"http://e/\"><rdf:Description rdf:about=\"http://e/s\"><e:p rdf:datatype=\"http://e/dt\"/></rdf:Description></rdf:RDF>", RDFXML, nil, "1\thttp://e/s\n1\thttp://e/p\n1\thttp://e/dt\n"},
		{"rdfxml no root rdf", "<e:T xmlns:e=\"http://e/\" xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" rdf:about=\"http://e/s\"/>", RDFXML, nil, "1\thttp://e/s\n1\thttp://www.w3.org/1999/02/22-rdf-syntax-ns#type\n1\thttp://e/T\n"},
		{"rdfxml unbound prefix", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><x:T/></rdf:RDF>", RDFXML, nil, "1\terror: f:1: syntax error: malformed XML: unbound namespace prefix \"x\"\n"},
		{"rdfxml text in node", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description>text</rdf:Description></rdf:RDF>", RDFXML, nil, "1\terror: f:1: syntax error: text where only elements may be\n"},
		{"rdfxml two objects", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:e=\"http://e/\"><rdf:Description rdf:about=\"http://e/s\"><e:p><rdf:Description/><rdf:Description/></e:p></rdf:Description></rdf:RDF>", RDFXML, nil, "1\thttp://e/s\n1\thttp://e/p\n1\terror: f:1: syntax error: a property element holds one node element or text, not more (nor a node element with rdf:datatype)\n"},
		{"rdfxml li attribute", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description rdf:li=\"x\"/></rdf:RDF>", RDFXML, nil, "1\terror: f:1: syntax error: attribute rdf:li on a node element\n"},
		{"rdfxml bagID", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:e=\"http://e/\"><rdf:Description rdf:about=\"http://e/s\"><e:p rdf:bagID=\"b\">x</e:p></rdf:Description></rdf:RDF>", RDFXML, nil, "1\thttp://e/s\n1\thttp://e/p\n1\terror: f:1: syntax error: attribute rdf:bagID on a property element\n"},
		{"rdfxml ID not a name", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:e=\"http://e/\" xml:base=\"http://e/doc\"><rdf:Description rdf:ID=\"1a\" e:p=\"v\"/></rdf:RDF>", RDFXML, nil, "1\terror: f:1: syntax error: rdf:ID \"1a\" is not an XML name\n"},
		{"rdfxml space in IRI", "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:e=\"http://e/\"><rdf:Description rdf:about=\"http://e/a b\" e:p=\"v\"/></rdf:RDF>", RDFXML, nil, "1\terror: f:1: invalid IRI <http://e/a b>: forbidden character ' '\n"},
		{"rdfxml entity", "<!DOCTYPE rdf:RDF [<!ENTITY e \"http://e/\">]><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" xmlns:e=\"http://e/\"><rdf:Description rdf:about=\"&e;s\" e:p=\"v\"/></rdf:RDF>", RDFXML, nil, "1\terror: f:1: syntax error: malformed XML: invalid character entity &e;\n"},
		{"ttl sign dot", "<http://e/s> <http://e/p> -. ", Turtle, nil, "1\thttp://e/s\n1\thttp://e/p\n1\terror: f:1: syntax error: sign not followed by a number (column 28)\n"},
		{"ttl plus point five", "<http://e/s> <http://e/p> +.5e-3, -0.0, 01 .", Turtle, nil, "1\thttp://e/s\n1\thttp://e/p\n1\thttp://www.w3.org/2001/XMLSchema#double\n1\thttp://www.w3.org/2001/XMLSchema#decimal\n1\thttp://www.w3.org/2001/XMLSchema#integer\n"},
		// The lexical core's errors read the same in N-Triples and Turtle
		// (package rdflex): an escape that is no UCHAR, one of no scalar
		// value, a cut one, an escaped and a written forbidden character.
		{"nt bad hex escape", `<http://a/\u00G9> <http://p> <http://o> .`, NTriples, nil, "1\terror: f:1: syntax error at column 11: invalid escape \"\\\\u00G\"\n"},
		{"ttl bad hex escape", `<http://a/\u00G9> <http://p> <http://o> .`, Turtle, nil, "1\terror: f:1: syntax error: invalid escape \"\\\\u00G\" (column 11)\n"},
		{"ttl surrogate", `<http://a/\uD800> <http://p> <http://o> .`, Turtle, nil, "1\terror: f:1: syntax error: escape \"\\\\uD800\" is not a Unicode scalar value (column 11)\n"},
		{"nt bad echar", `<http://s> <http://p> "\q" .`, NTriples, nil, "1\terror: f:1: syntax error at column 24: invalid escape \"\\\\q\"\n"},
		{"ttl bad echar", `<http://s> <http://p> "\q" .`, Turtle, nil, "1\thttp://s\n1\thttp://p\n1\terror: f:1: syntax error: invalid escape \"\\\\q\" (column 24)\n"},
		{"ttl escaped gt", `<http://a/\u003E> <http://p> <http://o> .`, Turtle, nil, "1\terror: f:1: invalid IRI: escape of forbidden character '>' (column 11)\n"},
		{"ttl space in IRI", `<http://a b> <http://p> <http://o> .`, Turtle, nil, "1\terror: f:1: invalid IRI: forbidden character ' ' (column 10)\n"},
		{"nt space in IRI", `<http://a b> <http://p> <http://o> .`, NTriples, nil, "1\terror: f:1: invalid IRI at column 10: forbidden character ' '\n"},
		{"ttl unterminated IRI", `<http://a`, Turtle, nil, "1\terror: f:1: syntax error: unterminated IRI (column 10)\n"},
		{"nt unterminated IRI", `<http://a`, NTriples, nil, "1\terror: f:1: syntax error at column 10: unterminated IRI\n"},
		// Sitemap
		{"sitemap empty", "", Sitemap, nil, "1\terror: f:1: not a sitemap: no root element\n"},
		{"sitemap other ns", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"/>`, Sitemap, nil,
			"1\terror: f:1: not a sitemap: root element is <urlset> in namespace \"http://www.google.com/schemas/sitemap/0.84\", want urlset or sitemapindex\n"},
		{"sitemap truncated", "<urlset>\n<url><loc>http://a/</loc></url>\n<url><loc>http://b", Sitemap, nil,
			"2\thttp://a/\n3\terror: f:3: syntax error: malformed XML: unexpected EOF\n"},
		{"sitemap entity", "<urlset><url><loc>http://a/&nbsp;</loc></url></urlset>", Sitemap, nil,
			"1\terror: f:1: syntax error: malformed XML: invalid character entity &nbsp;\n"},
		{"sitemap loc max", "<urlset><url><loc> 12345 </loc></url><url><loc>123456</loc></url></urlset>", Sitemap, &Options{MaxLineBytes: 5},
			"1\t12345\n1\terror: f:1: line too long: <loc> of more than 5 bytes\n"},
		{"sitemap nested loc", "<urlset><url><loc>http://a/<b>x</b>y</loc></url></urlset>", Sitemap, nil, "1\thttp://a/y\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dump(t, strings.NewReader(tc.in), "f", tc.format, tc.opts)
			if got != tc.want {
				t.Errorf("Read(%q) =\n%s\nwant\n%s", tc.in, got, tc.want)
			}
		})
	}
}

// TestLinesLongLine feeds lines over the default 1 MiB limit between good
// lines, with CRLF endings: each is one *LineError and reading goes on.
func TestLinesLongLine(t *testing.T) {
	long := "http://example.com/" + strings.Repeat("a", DefaultMaxLineBytes)
	in := "http://example.com/first\r\n" + long + "\r\nhttp://example.com/third\r\n" +
		strings.Repeat("b", DefaultMaxLineBytes+1) + "\nhttp://example.com/fifth"
	for _, f := range []Format{Lines, NTriples, Hashes} {
		t.Run(f.String(), func(t *testing.T) {
			var tooLong, other []int
			for rec, err := range Read(strings.NewReader(in), "long.txt", f, nil) {
				var le *LineError
				switch {
				case err == nil:
					other = append(other, rec.Line)
				case errors.Is(err, ErrLineTooLong) && errors.As(err, &le):
					tooLong = append(tooLong, rec.Line)
				case errors.As(err, &le):
					other = append(other, rec.Line) // bad syntax for ntriples and hashes
				default:
					t.Fatalf("fatal error %v", err)
				}
			}
			if fmt.Sprint(tooLong, other) != "[2 4] [1 3 5]" {
				t.Errorf("too long on lines %v, other records on %v; want [2 4] [1 3 5]", tooLong, other)
			}
		})
	}
	// A line of exactly the limit is accepted.
	exact := strings.Repeat("x", DefaultMaxLineBytes)
	got := collect(t, strings.NewReader(exact+"\n"), Lines, nil)
	if len(got) != 1 || got[0] != exact {
		t.Errorf("line of exactly %d bytes: got %d records", DefaultMaxLineBytes, len(got))
	}
}

// collect returns the texts of the records of r, failing on any error.
func collect(t testing.TB, r io.Reader, f Format, opts *Options) []string {
	t.Helper()
	var out []string
	for rec, err := range Read(r, "", f, opts) {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		out = append(out, rec.Text)
	}
	return out
}

// TestOpenGzip checks that Open gunzips by content, not by name, and that a
// gzipped sitemap reads like the plain one.
func TestOpenGzip(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join("testdata", "urlset.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(plain)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		data []byte
	}{
		{"sitemap.xml.gz", zb.Bytes()},
		{"gzipped-without-suffix.xml", zb.Bytes()},
		{"plain-with-suffix.xml.gz", plain},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			rc, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			got := dump(t, rc, "urlset.xml", Sitemap, nil)
			want := dump(t, bytes.NewReader(plain), "urlset.xml", Sitemap, nil)
			if got != want {
				t.Errorf("Open(%s) read\n%s\nwant\n%s", tc.file, got, want)
			}
			if err := rc.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestOpenStdin reads "-" from the given reader, gzipped or not, and never
// closes it.
func TestOpenStdin(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	io.WriteString(zw, "http://a/\nhttp://b/\n")
	zw.Close()
	for _, in := range []string{zb.String(), "http://a/\nhttp://b/\n"} {
		rc, err := OpenFile("-", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(collect(t, rc, Lines, nil), " "); got != "http://a/ http://b/" {
			t.Errorf("got %q", got)
		}
		rc.Close()
	}
	if _, err := OpenFile("-", nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("OpenFile(-, nil) = %v, want ErrInvalidOptions", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want os.ErrNotExist", err)
	}
}

// TestReadErrors checks that I/O and decompression errors end the sequence
// with an error that is not a *LineError, after the records before them.
func TestReadErrors(t *testing.T) {
	boom := errors.New("boom")
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	io.WriteString(zw, "<urlset><url><loc>http://a/</loc></url>"+strings.Repeat("<!-- padding -->", 1000)+"</urlset>")
	zw.Close()
	corrupt := zb.Bytes()
	corrupt = corrupt[:len(corrupt)-6] // truncated gzip stream

	// records reads r to its end: the records' texts, and the last error.
	records := func(t *testing.T, r io.Reader, name string, f Format) (texts []string, last error) {
		for rec, err := range Read(r, name, f, nil) {
			if last != nil {
				t.Fatalf("record after fatal error %v", last)
			}
			if err == nil {
				texts = append(texts, rec.Text)
				continue
			}
			last = err
		}
		return texts, last
	}
	for _, tc := range []struct {
		f    Format
		in   string
		want []string // the records before the error
	}{
		{Lines, "http://a/\nhttp://b/\n", []string{"http://a/", "http://b/"}},
		{Hashes, "deadbeef\n", []string{"deadbeef"}},
		{NTriples, "<http://a/> <http://p> <http://o> .\n", []string{"http://a/", "http://p", "http://o"}},
		{Sitemap, "<urlset><url><loc>http://a/</loc></url>\n", []string{"http://a/"}},
	} {
		t.Run(tc.f.String(), func(t *testing.T) {
			texts, last := records(t, io.MultiReader(strings.NewReader(tc.in), iotest.ErrReader(boom)), "x", tc.f)
			var le *LineError
			if !errors.Is(last, boom) || errors.As(last, &le) {
				t.Errorf("last error = %v, want boom, not a *LineError", last)
			}
			if !slices.Equal(texts, tc.want) {
				t.Errorf("records before the error %q, want %q", texts, tc.want)
			}
		})
	}
	t.Run("gzip", func(t *testing.T) {
		rc, err := OpenFile("-", bytes.NewReader(corrupt))
		if err != nil {
			t.Fatal(err)
		}
		texts, last := records(t, rc, "x.gz", Sitemap)
		var le *LineError
		if !errors.Is(last, io.ErrUnexpectedEOF) || errors.As(last, &le) {
			t.Errorf("last error = %v, want io.ErrUnexpectedEOF, not a *LineError", last)
		}
		if want := []string{"http://a/"}; !slices.Equal(texts, want) {
			t.Errorf("records before the error %q, want %q", texts, want)
		}
	})
	t.Run("options", func(t *testing.T) {
		for _, tc := range []struct {
			f    Format
			opts *Options
			want error
		}{
			{NTriples, &Options{NUL: true}, ErrInvalidOptions},
			{Sitemap, &Options{NUL: true}, ErrInvalidOptions},
			{Lines, &Options{MaxLineBytes: -1}, ErrInvalidOptions},
			{Format(9), nil, ErrUnknownFormat},
		} {
			var errs []error
			for _, err := range Read(strings.NewReader("x\n"), "", tc.f, tc.opts) {
				errs = append(errs, err)
			}
			if len(errs) != 1 || !errors.Is(errs[0], tc.want) {
				t.Errorf("Read(%v, %+v) errors %v, want one %v", tc.f, tc.opts, errs, tc.want)
			}
		}
	})
}

// TestBreak checks that a consumer can stop early, after a record or an
// error, and that Read then reads no further: of a long input, no more
// than the buffer it had filled.
func TestBreak(t *testing.T) {
	for _, tc := range []struct {
		f                Format
		head, unit, tail string
		kinds            string // of the first two items: r a record, e an error
	}{
		{Lines, "a\n", "b\n", "", "rr"},
		{Hashes, "zz\n", "zz\n", "", "ee"},
		{NTriples, "<x\n", "<http://a> <http://b> <http://c> .\n", "", "er"},
		{Sitemap, "<urlset><url><loc>a</loc></url><url><loc></loc></url>", "<url><loc>c</loc></url>\n", "</urlset>", "re"},
		{Turtle, "", "<http://a> <http://b> <http://c> .\n", "", "rr"},
		{RDFXML, `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">`,
			`<rdf:Description rdf:about="http://a/"><rdf:type rdf:resource="http://t/"/></rdf:Description>` + "\n", "</rdf:RDF>", "rr"},
	} {
		in := tc.head + strings.Repeat(tc.unit, (4<<20)/len(tc.unit)) + tc.tail
		for stop := 1; stop <= 2; stop++ {
			t.Run(fmt.Sprintf("%v/%d", tc.f, stop), func(t *testing.T) {
				cr := &countingReader{r: strings.NewReader(in)}
				var kinds string
				for _, err := range Read(cr, "", tc.f, nil) {
					if err != nil {
						kinds += "e"
					} else {
						kinds += "r"
					}
					if len(kinds) == stop {
						break
					}
				}
				if want := tc.kinds[:stop]; kinds != want {
					t.Errorf("items %q, want %q", kinds, want)
				}
				if cr.n > 2*readBufSize {
					t.Errorf("read %d of %d bytes after a break at item %d, want at most %d", cr.n, len(in), stop, 2*readBufSize)
				}
			})
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
		ok   bool
	}{
		{"lines", Lines, true},
		{"ntriples", NTriples, true},
		{"nquads", NTriples, true},
		{"NTriples", NTriples, true},
		{"sitemap", Sitemap, true},
		{"hashes", Hashes, true},
		{"", 0, false},
		{"xml", 0, false},
	} {
		got, err := ParseFormat(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseFormat(%q) = %v, %v", tc.in, got, err)
		}
		if !tc.ok && !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("ParseFormat(%q) error %v does not wrap ErrUnknownFormat", tc.in, err)
		}
		if tc.ok && strings.ToLower(tc.in) != "nquads" && got.String() != strings.ToLower(tc.in) {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if got := Format(7).String(); got != "Format(7)" {
		t.Errorf("Format(7).String() = %q", got)
	}
}

func TestLineError(t *testing.T) {
	for _, tc := range []struct {
		e    *LineError
		want string
	}{
		{&LineError{File: "a.nt", Line: 3, Err: ErrSyntax}, "a.nt:3: syntax error"},
		{&LineError{Line: 4, Err: fmt.Errorf("%w: x", ErrInvalidIRI)}, "4: invalid IRI: x"},
		{&LineError{File: "f", Line: 1}, "f:1: bad record"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if e := (&LineError{Err: ErrEmptyLoc}); !errors.Is(e, ErrEmptyLoc) {
		t.Errorf("LineError does not unwrap")
	}
}

// TestGzipBomb: a gzipped run of newlines (no record in it) ends with
// ErrGzipBomb after at most MaxGzipRatio times its compressed size, never
// after gunzipping the whole (issue 21, item 13); a real list that
// compresses well reads whole.
func TestGzipBomb(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write([]byte("http://a/\n"))
	newlines := bytes.Repeat([]byte("\n"), 1<<20)
	for range 64 { // 64 MiB
		zw.Write(newlines)
	}
	zw.Write([]byte("http://b/\n"))
	zw.Close()
	rc, err := NewReader("bomb.gz", bytes.NewReader(bomb.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingReader{r: rc}
	var texts []string
	var last error
	for rec, err := range Read(cr, "bomb.gz", Lines, nil) {
		if err != nil {
			last = err
			continue
		}
		texts = append(texts, rec.Text)
	}
	if !errors.Is(last, ErrGzipBomb) || !strings.Contains(last.Error(), "bomb.gz") {
		t.Errorf("last error %v, want ErrGzipBomb naming bomb.gz", last)
	}
	if len(texts) != 1 || texts[0] != "http://a/" {
		t.Errorf("records %q, want the one before the bomb", texts)
	}
	if limit := max(int64(MinGzipBombBytes), MaxGzipRatio*int64(bomb.Len())) + 1<<20; cr.n > limit {
		t.Errorf("gunzipped %d bytes of %d compressed, want at most %d", cr.n, bomb.Len(), limit)
	}

	// A list of similar URLs compresses far less than MaxGzipRatio.
	var list, gz bytes.Buffer
	for i := range 300_000 {
		fmt.Fprintf(&list, "https://www.example.com/products/item?id=%d&ref=home\n", i)
	}
	zw, _ = gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(list.Bytes())
	zw.Close()
	t.Logf("the list: %d bytes, %d gzipped (%.0f times)", list.Len(), gz.Len(), float64(list.Len())/float64(gz.Len()))
	rc, err = NewReader("list.gz", &gz)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range Read(rc, "list.gz", Lines, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 300_000 {
		t.Errorf("read %d records of 300000", n)
	}
}

// TestInvalidUTF8Cost: a byte that is not UTF-8 counts three times
// against MaxLineBytes (a URL parser makes it nine bytes, where a valid
// character is at most three times its size), so an invalid line never
// costs more than a valid one of the accepted length (issue 21, item 13).
func TestInvalidUTF8Cost(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{"http://a/" + strings.Repeat("a", 21), true},          // 30 bytes
		{"http://a/" + strings.Repeat("中", 7), true},           // 30 bytes, valid
		{"http://a/" + strings.Repeat("\xff", 7), true},        // 16 bytes, costs 30
		{"http://a/" + strings.Repeat("\xff", 8), false},       // 17 bytes, costs 33
		{"http://a/\xe4\xb8" + strings.Repeat("a", 16), false}, // a cut character: 27 + 2 x 2
		{"http://a/\xe4\xb8" + strings.Repeat("a", 15), true},
	} {
		var got []string
		var errs []error
		// (valid lines first: the input must not look binary)
		in := strings.Repeat("http://a/valid\n", 20) + c.line + "\n"
		for rec, err := range Read(strings.NewReader(in), "in", Lines, &Options{MaxLineBytes: 30}) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if rec.Line == 21 {
				got = append(got, rec.Text)
			}
		}
		switch {
		case c.ok && (len(got) != 1 || got[0] != c.line):
			t.Errorf("%q: records %q, errors %v; want it read", c.line, got, errs)
		case !c.ok && (len(got) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrLineTooLong)):
			t.Errorf("%q: records %q, errors %v; want ErrLineTooLong", c.line, got, errs)
		}
	}
}
