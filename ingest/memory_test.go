package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

var hostileMiB = flag.Int("hostile-mib", 64, "size of the generated hostile inputs of TestMemoryBound, in MiB (16 with -short)")

// maxHostileHeap is the most heap TestMemoryBound lets a reader hold in use
// while it reads a hostile input of many times that size.
const maxHostileHeap = 16 << 20

// part is a piece of a generated input: pat repeated to n bytes (a last,
// partial copy cut short), or pat once when n is zero.
type part struct {
	pat string
	n   int64
}

func once(s string) part           { return part{pat: s} }
func rep(pat string, n int64) part { return part{pat: pat, n: n} }
func parts(ps ...part) []part      { return ps }

// huge is as many whole copies of pat as fit in -hostile-mib MiB, hugeN as
// many as fit in 1/div of that.
func huge(pat string) part { return hugeN(pat, 1) }
func hugeN(pat string, div int) part {
	n := int64(*hostileMiB) << 20 / int64(div) / int64(len(pat))
	return rep(pat, n*int64(len(pat)))
}

// count is how many copies of pat huge(pat) holds.
func count(pat string) int { return (*hostileMiB << 20) / len(pat) }

// times is n copies of pat.
func times(pat string, n int) part { return rep(pat, int64(n)*int64(len(pat))) }

func (p part) size() int64 {
	if p.n == 0 {
		return int64(len(p.pat))
	}
	return p.n
}

// genReader generates its parts lazily, so that a gigabyte of input costs
// no memory.
type genReader struct {
	parts []part
	i     int    // current part
	off   int64  // bytes of parts[i] read
	block []byte // parts[i].pat repeated to at least 32 KiB
}

func (g *genReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if g.i == len(g.parts) {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		pt := g.parts[g.i]
		if g.off >= pt.size() {
			g.i, g.off, g.block = g.i+1, 0, nil
			continue
		}
		if g.block == nil {
			g.block = []byte(strings.Repeat(pt.pat, (32<<10)/len(pt.pat)+1))
		}
		start := int(g.off % int64(len(pt.pat)))
		c := copy(p[n:], g.block[start:])
		c = int(min(int64(c), pt.size()-g.off))
		n += c
		g.off += int64(c)
	}
	return n, nil
}

// gzipParts returns a gzip stream of the parts, made of one gzip member
// per MiB-sized piece of each part, compressed once and repeated.
func gzipParts(t testing.TB, ps []part) io.Reader {
	var rs []io.Reader
	for _, pt := range ps {
		piece := min(pt.size(), 1<<20)
		var zb bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&zb, gzip.BestCompression)
		if _, err := io.Copy(zw, &genReader{parts: []part{{pt.pat, piece}}}); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		if pt.size()%piece != 0 {
			t.Fatalf("part of %d bytes is not a whole number of %d-byte pieces", pt.size(), piece)
		}
		member := zb.Bytes()
		rs = append(rs, &genReader{parts: []part{{string(member), int64(len(member)) * (pt.size() / piece)}}})
	}
	return io.MultiReader(rs...)
}

// heapSampler passes reads through and samples the heap in use every MiB.
type heapSampler struct {
	r     io.Reader
	n     int64 // bytes read
	next  int64 // n at the next sample
	base  uint64
	peak  uint64 // highest HeapInuse seen
	ms    runtime.MemStats
	first bool
}

func newHeapSampler(r io.Reader) *heapSampler {
	runtime.GC()
	s := &heapSampler{r: r}
	runtime.ReadMemStats(&s.ms)
	s.base = s.ms.HeapInuse
	return s
}

func (s *heapSampler) sample() {
	runtime.ReadMemStats(&s.ms)
	s.peak = max(s.peak, s.ms.HeapInuse)
}

func (s *heapSampler) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.n >= s.next {
		s.sample()
		s.next = s.n + 1<<20
	}
	return n, err
}

// growth returns the peak heap in use above the heap in use before reading.
func (s *heapSampler) growth() uint64 {
	s.sample()
	if s.peak < s.base {
		return 0
	}
	return s.peak - s.base
}

// outcome summarises what Read yielded.
type outcome struct {
	records int
	texts   []string // the first few record texts
	errs    []error  // the first few errors
	nerrs   int
	last    error // the last error, if it ended the sequence
}

func (o outcome) String() string {
	var errs []string
	for _, err := range o.errs {
		msg := err.Error()
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		errs = append(errs, msg)
	}
	return fmt.Sprintf("%d records %q, %d errors %q", o.records, o.texts, o.nerrs, errs)
}

// Turtle and RDF/XML pieces of TestMemoryBound's inputs.
const (
	ttlHead = "@prefix : <http://example.org/> .\n"
	ttlStmt = ":s :p :o .\n"
	rdfHead = `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://example.org/">
`
	rdfDesc = `<rdf:Description rdf:about="http://example.org/s"><e:p rdf:resource="http://example.org/o"/></rdf:Description>
`
	rdfTail = "</rdf:RDF>\n"
)

// TestMemoryBound reads generated hostile inputs of -hostile-mib MiB each
// (64 by default; 1024 for the figures in doc.go) and checks that no
// reader holds more than maxHostileHeap of heap while it does, and what
// each yields. It measures the peak of HeapInuse, sampled every MiB read.
func TestMemoryBound(t *testing.T) {
	if testing.Short() {
		*hostileMiB = min(*hostileMiB, 16)
	}
	const (
		head  = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
		entry = "<url><loc>http://example.com/ok</loc></url>\n"
		tail  = "</urlset>\n"
	)
	// is reports whether o's errors are exactly want, in order.
	is := func(want ...error) func(outcome) bool {
		return func(o outcome) bool {
			if len(o.errs) != len(want) {
				return false
			}
			for i, w := range want {
				if !errors.Is(o.errs[i], w) {
					return false
				}
			}
			return true
		}
	}
	records := func(n int, errs ...error) func(outcome) bool {
		return func(o outcome) bool { return o.records == n && is(errs...)(o) }
	}
	for _, tc := range []struct {
		name   string
		format Format
		opts   *Options
		gz     bool
		in     []part
		ok     func(outcome) bool
	}{
		// Binary input is refused after its first block.
		{"sitemap gzip zeros", Sitemap, nil, true, parts(huge("\x00")), records(0, ErrBinary)},
		{"lines gzip zeros", Lines, nil, true, parts(huge("\x00")), records(0, ErrBinary)},
		// Sitemaps: an over-long <loc> is skipped, and reading goes on.
		{"sitemap huge loc", Sitemap, nil, false, parts(once(head+entry+"<url><loc>"), huge("a"), once("</loc></url>\n"+entry+tail)),
			records(2, ErrLineTooLong)},
		// A gzipped input expanding past MaxGzipRatio is a bomb: refused,
		// after the records before it.
		{"sitemap gzip huge loc", Sitemap, nil, true, parts(once(head+entry+"<url><loc>"), huge("a"), once("</loc></url>\n"+entry+tail)),
			records(1, ErrGzipBomb)},
		{"sitemap huge CDATA loc", Sitemap, nil, false, parts(once(head+"<url><loc><![CDATA["), huge("a&<"), once("]]></loc></url>\n"+entry+tail)),
			records(1, ErrLineTooLong)},
		{"sitemap huge loc of spaces", Sitemap, nil, false, parts(once(head+"<url><loc>"), huge(" \n\t"), once("http://example.com/x"), huge(" "), once("</loc></url>\n"+tail)),
			records(1)},
		{"sitemap huge loc of entities", Sitemap, nil, false, parts(once(head+"<url><loc>"), huge("&amp;&#x41;&#0000066;"), once("</loc></url>\n"+entry+tail)),
			records(1, ErrLineTooLong)},
		// Sitemaps: what is not a <loc> is streamed through, whatever its size.
		{"sitemap huge text", Sitemap, nil, false, parts(once(head+entry), huge(" x \r\n"), once(entry+tail)), records(2)},
		{"sitemap huge comment", Sitemap, nil, false, parts(once(head+entry+"<!--"), huge("<loc>-x"), once("-->"+entry+tail)), records(2)},
		{"sitemap huge PI", Sitemap, nil, false, parts(once(head+entry+"<?pi "), huge("?<>"), once("?>"+entry+tail)), records(2)},
		{"sitemap huge CDATA", Sitemap, nil, false, parts(once(head+entry+"<![CDATA["), huge("]<>&"), once("]]>"+entry+tail)), records(2)},
		{"sitemap huge DOCTYPE", Sitemap, nil, false, parts(once(`<!DOCTYPE urlset [<!ENTITY a "`), huge("<>'"), once(`">]>`+head+entry+tail)), records(1)},
		{"sitemap huge attribute", Sitemap, nil, false, parts(once(head+`<url a="`), huge("&lt;x"), once(`"><loc>http://example.com/a</loc></url>`+entry+tail)), records(2)},
		{"sitemap huge xmlns", Sitemap, nil, false, parts(once(head+`<url xmlns="`), huge("x"), once(`"><loc>http://example.com/a</loc></url>`+entry+tail)), records(1)},
		{"sitemap many attributes", Sitemap, nil, false, parts(once(head+`<url`), huge(` a="1"`), once(`><loc>http://example.com/a</loc></url>`+entry+tail)), records(2)},
		{"sitemap huge numeric reference", Sitemap, nil, false, parts(once(head+`<url><loc>&#`), huge("0"), once(`65;</loc></url>`+entry+tail)), records(2)},
		// Sitemaps: structure over a limit ends the sequence with one error.
		{"sitemap deep", Sitemap, nil, false, parts(once(head+entry), times("<url>", count("<url></url>")), times("</url>", count("<url></url>")), once(tail)), records(1, ErrLimit)},
		{"sitemap deep loc", Sitemap, nil, false, parts(once(head+"<url><loc>"), times("<a>", count("<a></a>")), times("</a>", count("<a></a>")), once("</loc></url>"+tail)), records(0, ErrLimit)},
		{"sitemap huge tag name", Sitemap, nil, false, parts(once(head+entry+"<u"), huge("r"), once("/>"+tail)), records(1, ErrLimit)},
		{"sitemap huge end tag name", Sitemap, nil, false, parts(once(head+entry+"</u"), huge("r"), once(">"+tail)), records(1, ErrLimit)},
		{"sitemap huge attribute name", Sitemap, nil, false, parts(once(head+entry+"<url a"), huge("r"), once(`="1"/>`+tail)), records(1, ErrLimit)},
		{"sitemap huge entity name", Sitemap, nil, false, parts(once(head+entry+"<url><loc>&"), huge("r"), once(";</loc></url>"+tail)), records(1, ErrSyntax)},
		{"sitemap many xmlns", Sitemap, nil, false, parts(once(head+entry+"<url"), hugeN(` xmlns:a="b"`, 2), once(`/>`+tail)), records(1, ErrLimit)},
		{"sitemap zeros after head", Sitemap, nil, false, parts(once(head), rep(entry, 16<<10/int64(len(entry))*int64(len(entry))), huge("\x00")), records(16<<10/len(entry), ErrSyntax)},
		{"sitemap many urls", Sitemap, nil, false, parts(once(head), huge(entry), once(tail)), func(o outcome) bool {
			return o.records == count(entry) && o.nerrs == 0
		}},
		// Entities are never expanded: a reference to a declared one is an error.
		{"sitemap billion laughs", Sitemap, nil, false, parts(once(`<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset><url><loc>&lol9;</loc></url></urlset>`)), records(0, ErrSyntax)},
		// Line formats: an over-long line is skipped, and reading goes on.
		{"lines huge line", Lines, nil, false, parts(once("http://a/\n"), huge("a"), once("\nhttp://b/\n")), records(2, ErrLineTooLong)},
		{"lines gzip huge line", Lines, nil, true, parts(once("http://a/\n"), huge("a"), once("\nhttp://b/\n")), records(1, ErrGzipBomb)},
		{"lines NUL without NUL", Lines, &Options{NUL: true}, false, parts(huge("http://a/\n")), records(0, ErrLineTooLong)},
		// (a quarter of the size: a million empty lines take 15 ms)
		{"lines gzip newlines", Lines, nil, true, parts(once("http://a/\n"), hugeN("\n", 4), once("http://b/\n")), records(1, ErrGzipBomb)},
		{"lines NUL of NULs", Lines, &Options{NUL: true}, false, parts(once("http://a/\x00"), hugeN("\x00", 4), once("http://b/\x00")), records(2)},
		{"hashes huge line", Hashes, nil, false, parts(once("deadbeef\n"), huge("a"), once("\ndeadbeef\n")), records(2, ErrLineTooLong)},
		{"hashes huge comment", Hashes, nil, false, parts(once("deadbeef\n#"), huge("a"), once("\ndeadbeef\n")), records(2, ErrLineTooLong)},
		{"ntriples huge line", NTriples, nil, false, parts(once("<http://a/> <http://p/> <http://o/> .\n<"), huge("a"), once("> <http://p/> <http://o/> .\n")),
			records(3, ErrLineTooLong)},
		{"ntriples huge literal", NTriples, nil, false, parts(once(`<http://a/> <http://p/> "`), huge("a"), once("\" .\n")), records(0, ErrLineTooLong)},
		// Turtle and TriG: memory is one term and the open nesting, however
		// long the document, its literals or its comments.
		{"turtle many statements", Turtle, nil, false, parts(once(ttlHead), huge(ttlStmt)), func(o outcome) bool {
			return o.records == 3*count(ttlStmt) && o.nerrs == 0
		}},
		{"trig many graphs", TriG, nil, false, parts(once(ttlHead), huge("GRAPH :g { "+ttlStmt+"}\n")), func(o outcome) bool {
			return o.records == 4*count("GRAPH :g { "+ttlStmt+"}\n") && o.nerrs == 0
		}},
		{"turtle huge long string", Turtle, nil, false, parts(once(ttlHead+`:s :p """`), huge("a\"\n\\n"), once(`""" .`+"\n"+ttlStmt)), records(5)},
		{"turtle huge string", Turtle, nil, false, parts(once(ttlHead+`:s :p "`), huge(`a\u00e9\"`), once(`" .`+"\n"+ttlStmt)), records(5)},
		{"turtle huge comment", Turtle, nil, false, parts(once(ttlHead+ttlStmt+"#"), huge("<a> . \"'"), once("\n"+ttlStmt)), records(6)},
		{"turtle huge IRI", Turtle, nil, false, parts(once(ttlHead+ttlStmt+":s :p <http://"), huge("a"), once("> .\n")), records(5, ErrLineTooLong)},
		{"turtle huge local name", Turtle, nil, false, parts(once(ttlHead+ttlStmt+":s :p :"), huge("a"), once(" .\n")), records(5, ErrLineTooLong)},
		{"turtle huge blank node label", Turtle, nil, false, parts(once(ttlHead+ttlStmt+":s :p _:"), huge("a"), once(" .\n")), records(5, ErrLineTooLong)},
		{"turtle huge number", Turtle, nil, false, parts(once(ttlHead+":s :p "), huge("1"), once(" .\n"+ttlStmt)), records(6)},
		{"turtle deep property lists", Turtle, nil, false, parts(once(ttlHead+":s :p "), huge("[ :p "), once(" .\n")), func(o outcome) bool {
			return is(ErrLimit)(o) && o.records < 3*maxRDFNesting
		}},
		{"turtle deep collections", Turtle, nil, false, parts(once(ttlHead+":s :p "), huge("("), once(" .\n")), func(o outcome) bool {
			return is(ErrLimit)(o) && o.records < 3*maxRDFNesting
		}},
		{"turtle prefix redeclared", Turtle, nil, false, parts(huge("@prefix a: <http://e/> . PREFIX b: <http://f/>\n"), once("a:s b:p a:o .\n")), records(3)},
		// RDF/XML likewise: one attribute value, the open elements.
		{"rdfxml many descriptions", RDFXML, nil, false, parts(once(rdfHead), huge(rdfDesc), once(rdfTail)), func(o outcome) bool {
			return o.records == 3*count(rdfDesc) && o.nerrs == 0
		}},
		{"rdfxml huge literal", RDFXML, nil, false, parts(once(rdfHead+`<rdf:Description rdf:about="http://e/s"><e:p>`), huge("a&amp;&#233;<!-- c -->"), once("</e:p></rdf:Description>"+rdfDesc+rdfTail)), records(5)},
		{"rdfxml huge XML literal", RDFXML, nil, false, parts(once(rdfHead+`<rdf:Description rdf:about="http://e/s"><e:p rdf:parseType="Literal">`), huge("<a b='c'>d</a>"), once("</e:p></rdf:Description>"+rdfDesc+rdfTail)), records(6)},
		{"rdfxml huge IRI", RDFXML, nil, false, parts(once(rdfHead+rdfDesc+`<rdf:Description rdf:about="http://e/`), huge("a"), once(`"/>`+rdfTail)), records(3, ErrLineTooLong)},
		{"rdfxml deep", RDFXML, nil, false, parts(once(rdfHead+`<rdf:Description>`), huge(`<e:p><rdf:Description>`), once(rdfTail)), func(o outcome) bool {
			return is(ErrLimit)(o) && o.records < maxRDFNesting
		}},
		{"rdfxml deep XML literal", RDFXML, nil, false, parts(once(rdfHead+`<rdf:Description><e:p rdf:parseType="Literal">`), huge(`<a>`), once(rdfTail)), func(o outcome) bool {
			return is(ErrLimit)(o)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var src io.Reader = &genReader{parts: tc.in}
			if tc.gz {
				rc, err := NewReader("hostile", gzipParts(t, tc.in))
				if err != nil {
					t.Fatal(err)
				}
				defer rc.Close()
				src = rc
			}
			hs := newHeapSampler(src)
			var o outcome
			for rec, err := range Read(hs, "hostile", tc.format, tc.opts) {
				if err != nil {
					o.nerrs++
					if len(o.errs) < 4 {
						o.errs = append(o.errs, err)
					}
					continue
				}
				o.records++
				if len(o.texts) < 4 {
					o.texts = append(o.texts, rec.Text[:min(len(rec.Text), 40)])
				}
			}
			growth := hs.growth()
			t.Logf("%s: read %d MiB, peak heap growth %.2f MiB; %v", tc.name, hs.n>>20, float64(growth)/(1<<20), o)
			if growth > maxHostileHeap {
				t.Errorf("peak heap growth %d MiB, want at most %d MiB", growth>>20, maxHostileHeap>>20)
			}
			if !tc.ok(o) {
				t.Errorf("unexpected outcome: %v", o)
			}
		})
	}
}
