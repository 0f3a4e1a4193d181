package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/rdflex"
)

// rdfSeeds adds every action file of the W3C cases of one syntax to f's
// corpus, with extra args.
func rdfSeeds(f *testing.F, format string, extra ...any) {
	var files []string
	for _, tc := range loadW3CCases(f) {
		if tc.Format == format {
			files = append(files, filepath.Join("w3c", tc.Action))
		}
	}
	addSeeds(f, files, extra...)
}

// rdfResult is what an RDF reader yields for an input: the records, then
// the error that ended it, if any.
type rdfResult struct {
	recs []Record
	err  error
}

// readRDF reads data as f from r through the format's reader (past the
// binary sniff), with base and max.
func readRDF(t *testing.T, f Format, r *bufio.Reader, base string, max int) rdfResult {
	var res rdfResult
	o := (&Options{Base: base, MaxLineBytes: max}).withDefaults()
	yield := func(rec Record, err error) bool {
		if res.err != nil {
			t.Fatalf("result %+v, %v after the error %v", rec, err, res.err)
		}
		if err != nil {
			res.err = err
			return true
		}
		res.recs = append(res.recs, rec)
		return true
	}
	switch f {
	case Turtle, TriG:
		readTurtle(r, "f", &o, f == TriG, yield)
	case RDFXML:
		readRDFXML(r, "f", &o, yield)
	}
	return res
}

// checkRDF checks what holds for every RDF reader: records from line 1
// that never go down, each an absolute IRI (a base is given) of valid UTF-8
// with no character an IRIREF forbids and at most max bytes, one error at
// most, last, a *LineError at or after the last record's line; and the same
// results when the input arrives a byte at a time.
func checkRDF(t *testing.T, f Format, data []byte, max int) {
	const base = "http://example.org/dir/file"
	res := readRDF(t, f, bufio.NewReader(bytes.NewReader(data)), base, max)
	line := 1
	for _, r := range res.recs {
		if r.Line < line {
			t.Fatalf("record %+v after line %d", r, line)
		}
		line = r.Line
		if !utf8.ValidString(r.Text) || !isAbsoluteIRI(r.Text) || len(r.Text) > max && !isVocabulary(r.Text) {
			t.Fatalf("record %q: not UTF-8, not absolute or over %d bytes", r.Text, max)
		}
		if i := strings.IndexFunc(r.Text, func(c rune) bool { return c < utf8.RuneSelf && rdflex.ForbiddenInIRI(byte(c)) }); i >= 0 {
			t.Fatalf("record %q holds a forbidden character", r.Text)
		}
	}
	if res.err != nil {
		var le *LineError
		if !errors.As(res.err, &le) {
			t.Fatalf("error %v from a bytes.Reader is not a *LineError", res.err)
		}
		if le.Line < line {
			t.Fatalf("error at line %d after a record of line %d", le.Line, line)
		}
	}
	slow := readRDF(t, f, bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(data)), 16), base, max)
	if !slices.Equal(slow.recs, res.recs) || (slow.err == nil) != (res.err == nil) ||
		slow.err != nil && slow.err.Error() != res.err.Error() {
		t.Fatalf("a byte at a time: %v, %v; at once: %v, %v", slow.recs, slow.err, res.recs, res.err)
	}
}

// FuzzTurtle checks the Turtle and TriG reader (see checkRDF).
func FuzzTurtle(f *testing.F) {
	rdfSeeds(f, "turtle", false, uint8(0))
	rdfSeeds(f, "trig", true, uint8(0))
	f.Add([]byte("@prefix : <#> . :a\\.b :c 1.e5, -.5, \"\"\"x\"\"y\"\"\"@en-GB ; :d ( [ :e _:f.g. ] ) ."), false, uint8(12))
	f.Fuzz(func(t *testing.T, data []byte, trig bool, max uint8) {
		f := Turtle
		if trig {
			f = TriG
		}
		checkRDF(t, f, data, 16+int(max))
	})
}

// FuzzRDFXML checks the RDF/XML reader (see checkRDF).
func FuzzRDFXML(f *testing.F) {
	rdfSeeds(f, "rdfxml", uint8(0))
	f.Add([]byte(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/"><e:T rdf:ID="x" e:p="v"><e:q rdf:parseType="Collection"><e:A/></e:q><rdf:li rdf:ID="y">1</rdf:li></e:T></rdf:RDF>`), uint8(8))
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		checkRDF(t, RDFXML, data, 16+int(max))
	})
}
