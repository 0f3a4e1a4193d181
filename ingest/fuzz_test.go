package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/rdflex"
)

// refusedAsBinary reports whether data looks binary to Read, and then checks
// that reading it as f yields exactly one error, wrapping ErrBinary.
func refusedAsBinary(t *testing.T, data []byte, f Format, nul bool) bool {
	head := data[:min(len(data), sniffLen)]
	if binaryReason(head, nul, f.IsRDF(), len(head) == sniffLen) == "" {
		return false
	}
	var errs []error
	for _, err := range Read(bytes.NewReader(data), "f", f, &Options{NUL: nul}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrBinary) {
		t.Fatalf("binary input: got %v, want one ErrBinary", errs)
	}
	return true
}

// addSeeds adds the named testdata files to f's corpus, with extra args.
func addSeeds(f *testing.F, files []string, extra ...any) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]any{b}, extra...)...)
	}
}

// FuzzNTriples checks that the N-Triples reader never panics, that every
// yielded IRI is valid UTF-8 with no character the grammar forbids, that
// each line reads the same alone as in the file (all-or-nothing per line)
// and that a yielded IRI written back as <iri> reads back unchanged.
func FuzzNTriples(f *testing.F) {
	addSeeds(f, []string{"sample.nt", "sample.nq"})
	f.Add([]byte(`<http://a/\u00e9> <http://p> "x\"y"@en-US .`))
	f.Add([]byte("_:a.b <http://p> \"1\"^^<http://dt> <http://g> . # c\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if refusedAsBinary(t, data, NTriples, false) {
			return
		}
		type rec struct {
			text string
			err  bool
		}
		var all []rec
		var byLine = map[int][]rec{}
		for r, err := range Read(bytes.NewReader(data), "", NTriples, nil) {
			if err != nil {
				var le *LineError
				if !errors.As(err, &le) {
					t.Fatalf("fatal error from a bytes.Reader: %v", err)
				}
			}
			if r.Line < 1 {
				t.Fatalf("record %+v has line < 1", r)
			}
			if err == nil {
				if !utf8.ValidString(r.Text) {
					t.Fatalf("IRI %q is not valid UTF-8", r.Text)
				}
				for i := 0; i < len(r.Text); i++ {
					if rdflex.ForbiddenInIRI(r.Text[i]) {
						t.Fatalf("IRI %q holds forbidden byte %q", r.Text, r.Text[i])
					}
				}
			}
			all = append(all, rec{r.Text, err != nil})
			byLine[r.Line] = append(byLine[r.Line], rec{r.Text, err != nil})
		}
		// Each line alone gives the same records (read past the sniffing,
		// which may find a line binary that the file is not).
		var again []rec
		for i, line := range bytes.Split(bytes.TrimPrefix(data, utf8BOM), []byte("\n")) {
			var got []rec
			for r, err := range readWith(readNTriples, line) {
				got = append(got, rec{r.Text, err != nil})
			}
			if len(got) != len(byLine[i+1]) {
				t.Fatalf("line %d alone gives %v, in the file %v", i+1, got, byLine[i+1])
			}
			again = append(again, got...)
		}
		if len(again) != len(all) {
			t.Fatalf("lines alone give %d records, the file %d", len(again), len(all))
		}
		for i := range all {
			if all[i] != again[i] {
				t.Fatalf("record %d: lines alone give %v, the file %v", i, again[i], all[i])
			}
		}
		// Round trip.
		for _, r := range all {
			if r.err {
				continue
			}
			line := "<" + r.text + "> <" + r.text + "> <" + r.text + "> .\n"
			n := 0
			for got, err := range readWith(readNTriples, []byte(line)) { // past the sniffing, as above
				if err != nil || got.Text != r.text {
					t.Fatalf("round trip of %q: got %q, %v", r.text, got.Text, err)
				}
				n++
			}
			if n != 3 {
				t.Fatalf("round trip of %q: %d records, want 3", r.text, n)
			}
		}
	})
}

// FuzzSitemap checks that the sitemap reader never panics, yields trimmed,
// non-empty records with lines >= 1, ends after a syntax error, and agrees
// with the encoding/xml model (sitemapDiff).
func FuzzSitemap(f *testing.F) {
	addSeeds(f, []string{"urlset.xml", "sitemapindex.xml", "nons.xml", "malformed.xml", "rss.xml"})
	f.Add([]byte(`<sitemapindex><sitemap><loc> a&amp;b </loc></sitemap></sitemapindex>`))
	f.Add([]byte(`<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><s:url><s:loc>&#x41;<![CDATA[b]]]></s:loc></s:url></s:urlset>`))
	f.Add([]byte(`<!DOCTYPE urlset [<!ENTITY x "a>b"> <!-- c > -->]><?xml-stylesheet href="a"?><urlset a='1'><url xmlns="o"><loc>x</loc></url></urlset>`))
	f.Add([]byte("<urlset>\r\n<url><loc>\r\n a&#13;\r\nb \t</loc></url><é/></urlset>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := sitemapDiff(data, 64); d != "" {
			t.Fatal(d)
		}
		if refusedAsBinary(t, data, Sitemap, false) {
			return
		}
		ended := false
		for r, err := range Read(bytes.NewReader(data), "", Sitemap, &Options{MaxLineBytes: 64}) {
			if ended {
				t.Fatalf("record %+v after a syntax error", r)
			}
			if r.Line < 1 {
				t.Fatalf("record %+v has line < 1", r)
			}
			if err != nil {
				var le *LineError
				if !errors.As(err, &le) {
					t.Fatalf("fatal error from a bytes.Reader: %v", err)
				}
				ended = errors.Is(err, ErrSyntax) || errors.Is(err, ErrNotSitemap) || errors.Is(err, ErrLimit)
				continue
			}
			if r.Text == "" || len(r.Text) > 64 || string(trimSpace([]byte(r.Text))) != r.Text {
				t.Fatalf("record %q is empty, too long or not trimmed", r.Text)
			}
		}
	})
}

// FuzzLines checks that the lines reader never panics and agrees with a
// slow, obvious model built on bytes.Split.
func FuzzLines(f *testing.F) {
	addSeeds(f, []string{"lines.txt", "hashes.txt"}, false, uint8(200))
	f.Add([]byte("a\x00b\r\n\x00\x00c"), true, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, nul bool, max uint8) {
		if refusedAsBinary(t, data, Lines, nul) {
			return
		}
		o := &Options{NUL: nul, MaxLineBytes: 1 + int(max)}
		sep := []byte("\n")
		if nul {
			sep = []byte{0}
		}
		var want []string
		in := data
		if !nul {
			in = bytes.TrimPrefix(in, utf8BOM)
		}
		raw := bytes.Split(in, sep)
		if len(raw[len(raw)-1]) == 0 {
			raw = raw[:len(raw)-1] // nothing after the last separator
		}
		for i, l := range raw {
			switch {
			case len(l) > o.MaxLineBytes:
				want = append(want, fmt.Sprintf("%d error", i+1))
				continue
			case !nul:
				l = bytes.TrimSuffix(l, []byte("\r"))
			}
			if t := trimSpace(l); len(t) > 0 && (nul || t[0] != '#') {
				want = append(want, fmt.Sprintf("%d %q", i+1, l))
			}
		}
		var got []string
		for r, err := range Read(bytes.NewReader(data), "", Lines, o) {
			switch {
			case err == nil:
				got = append(got, fmt.Sprintf("%d %q", r.Line, r.Text))
			case errors.Is(err, ErrLineTooLong):
				got = append(got, fmt.Sprintf("%d error", r.Line))
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Read gives %q, the model %q", got, want)
		}
	})
}

// FuzzHashes checks that the hashes reader never panics and yields only
// lowercase hex of an even length from 8 to 64.
func FuzzHashes(f *testing.F) {
	addSeeds(f, []string{"hashes.txt"}, false)
	f.Add([]byte("DEADBEEF\x00 #x\x00"), true)
	f.Fuzz(func(t *testing.T, data []byte, nul bool) {
		if refusedAsBinary(t, data, Hashes, nul) {
			return
		}
		for r, err := range Read(bytes.NewReader(data), "", Hashes, &Options{NUL: nul}) {
			if err != nil {
				if !errors.Is(err, ErrInvalidHash) && !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("unexpected error %v", err)
				}
				continue
			}
			n := len(r.Text)
			if n < 8 || n > 64 || n%2 != 0 || strings.Trim(r.Text, "0123456789abcdef") != "" {
				t.Fatalf("bad hash record %q", r.Text)
			}
		}
	})
}

// readWith returns what a format reader yields from data, without Read's
// sniffing.
func readWith(read func(*bufio.Reader, string, *Options, func(Record, error) bool), data []byte) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		o := (*Options)(nil).withDefaults()
		read(bufio.NewReader(bytes.NewReader(data)), "", &o, yield)
	}
}

// FuzzRead reads any input, gzipped or not, as any format with any options,
// through NewReader, and checks what holds for every format: no panic, lines
// from 1 that never go down, a *LineError's line that is its record's,
// ErrBinary alone, and an error that is not a *LineError only at the end.
func FuzzRead(f *testing.F) {
	addSeeds(f, []string{"lines.txt", "hashes.txt", "sample.nt", "urlset.xml"}, uint8(0), false, uint8(0))
	addSeeds(f, []string{"w3c/rdf-turtle/turtle-syntax-blank-label.ttl"}, uint8(Turtle), false, uint8(0))
	addSeeds(f, []string{"w3c/rdf-trig/trig-syntax-minimal-whitespace-01.trig"}, uint8(TriG), false, uint8(0))
	addSeeds(f, []string{"w3c/rdf-xml/rdfms-reification-required/test001.rdf"}, uint8(RDFXML), false, uint8(0))
	// "http://a/\n<x>\n", gzipped
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xcb\x28\x29\x29\xb0\xd2\xd7\x4f\xd4\xe7\xb2\xa9\xb0\xe3\x02\x00\x4a\x5d\x57\x1f\x0e\x00\x00\x00"), uint8(0), false, uint8(4))
	f.Add([]byte("\xef\xbb\xbfa\x00#b\x00"), uint8(3), true, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, format uint8, nul bool, maxLine uint8) {
		fm := Format(format % 7)
		if nul && fm != Lines && fm != Hashes {
			nul = false
		}
		rc, err := NewReader("f", bytes.NewReader(data))
		if err != nil {
			return // not gzip after all
		}
		defer rc.Close()
		line, n, ended := 0, 0, false
		for r, err := range Read(rc, "f", fm, &Options{NUL: nul, MaxLineBytes: int(maxLine)}) {
			n++
			if ended {
				t.Fatalf("result %+v, %v after the end", r, err)
			}
			var le *LineError
			switch {
			case err == nil || errors.As(err, &le):
				if r.Line < max(line, 1) {
					t.Fatalf("line %d after line %d", r.Line, line)
				}
				if le != nil && (le.Line != r.Line || r.Text != "") {
					t.Fatalf("LineError at line %d with record %+v", le.Line, r)
				}
				line = r.Line
			case errors.Is(err, ErrBinary):
				if n != 1 {
					t.Fatalf("ErrBinary after %d results", n-1)
				}
				ended = true
			default:
				ended = true // a gzip error
			}
		}
	})
}
