package ingest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// benchInput returns about size bytes of typical input for format f.
func benchInput(f Format, size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		switch f {
		case Lines:
			fmt.Fprintf(&b, "https://www.example.com/section-%d/article/%d?utm_source=feed&id=%d\n", i%97, i, i*7)
		case NTriples:
			switch i % 3 {
			case 0:
				fmt.Fprintf(&b, "<http://dbpedia.org/resource/Item_%d> <http://www.w3.org/2000/01/rdf-schema#label> \"Item number %d\\n\"@en .\n", i, i)
			case 1:
				fmt.Fprintf(&b, "<http://dbpedia.org/resource/Item_%d> <http://dbpedia.org/ontology/wikiPageID> \"%d\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n", i, i)
			default:
				fmt.Fprintf(&b, "<http://dbpedia.org/resource/Item_%d> <http://xmlns.com/foaf/0.1/isPrimaryTopicOf> <http://en.wikipedia.org/wiki/Item_%d> .\n", i, i)
			}
		case Sitemap:
			if i == 0 {
				b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
			}
			fmt.Fprintf(&b, "  <url><loc>https://www.example.com/section-%d/article/%d?a=1&amp;b=%d</loc><lastmod>2024-01-01</lastmod></url>\n", i%97, i, i)
		case Hashes:
			fmt.Fprintf(&b, "%064x\n", i*2654435761)
		case Turtle, TriG:
			if i == 0 {
				b.WriteString(turtleHead)
				if f == TriG {
					b.WriteString("GRAPH <http://dbpedia.org/graph/1> {\n")
				}
			}
			fmt.Fprintf(&b, turtleItem, i, i, i, i, i%97, i)
		case RDFXML:
			if i == 0 {
				b.WriteString(rdfxmlHead)
			}
			fmt.Fprintf(&b, rdfxmlItem, i, i, i, i, i%97, i)
		}
	}
	switch f {
	case Sitemap:
		b.WriteString("</urlset>\n")
	case TriG:
		b.WriteString("}\n")
	case RDFXML:
		b.WriteString("</rdf:RDF>\n")
	}
	return b.Bytes()
}

// The benchmark's Turtle and RDF/XML: the same DBpedia-like statements,
// written as their writers write them (prefixes, ';' and ',' lists, typed
// and language-tagged literals, a nested blank node).
const (
	turtleHead = `@prefix dbr: <http://dbpedia.org/resource/> .
@prefix dbo: <http://dbpedia.org/ontology/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
`
	turtleItem = `dbr:Item_%d a dbo:Work ;
    rdfs:label "Item number %d"@en ;
    dbo:wikiPageID "%d"^^xsd:integer ;
    foaf:isPrimaryTopicOf <http://en.wikipedia.org/wiki/Item_%d> ;
    dbo:author [ a foaf:Person ; foaf:name "Author %d" ] ;
    dbo:wikiPageLength %d .
`
	rdfxmlHead = `<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#"
         xmlns:dbo="http://dbpedia.org/ontology/"
         xmlns:foaf="http://xmlns.com/foaf/0.1/">
`
	rdfxmlItem = `  <dbo:Work rdf:about="http://dbpedia.org/resource/Item_%d">
    <rdfs:label xml:lang="en">Item number %d</rdfs:label>
    <dbo:wikiPageID rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">%d</dbo:wikiPageID>
    <foaf:isPrimaryTopicOf rdf:resource="http://en.wikipedia.org/wiki/Item_%d"/>
    <dbo:author><foaf:Person><foaf:name>Author %d</foaf:name></foaf:Person></dbo:author>
    <dbo:wikiPageLength rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">%d</dbo:wikiPageLength>
  </dbo:Work>
`
)

// BenchmarkRead measures throughput per format, in MB/s of input.
func BenchmarkRead(b *testing.B) {
	for _, f := range []Format{Lines, NTriples, Sitemap, Hashes, Turtle, TriG, RDFXML} {
		data := benchInput(f, 4<<20)
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			records := 0
			for b.Loop() {
				records = 0
				for _, err := range Read(bytes.NewReader(data), "bench", f, nil) {
					if err != nil {
						b.Fatal(err)
					}
					records++
				}
			}
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// TestBenchInputIsClean checks that the benchmark inputs read without errors,
// so that the benchmarks measure the good path.
func TestBenchInputIsClean(t *testing.T) {
	for _, f := range []Format{Lines, NTriples, Sitemap, Hashes, Turtle, TriG, RDFXML} {
		n := 0
		for rec, err := range Read(bytes.NewReader(benchInput(f, 64<<10)), "", f, nil) {
			if err != nil {
				t.Fatalf("%v: %v", f, err)
			}
			if !strings.Contains(rec.Text, "//") && f != Hashes {
				t.Fatalf("%v: odd record %q", f, rec.Text)
			}
			n++
		}
		if n < 100 {
			t.Errorf("%v: %d records", f, n)
		}
	}
}

// sitemapRich returns about size bytes of a sitemap as generators write
// them: indented, with image and alternate-language extensions, CDATA and
// character references.
func sitemapRich(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:xhtml="http://www.w3.org/1999/xhtml">
`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `  <url>
    <loc>
      https://www.example.com/caf&#233;/article-%d?utm=a&amp;id=%d
    </loc>
    <xhtml:link rel="alternate" hreflang="de" href="https://www.example.de/artikel-%d"/>
    <image:image>
      <image:loc><![CDATA[https://img.example.com/%d.jpg?w=1&h=2]]></image:loc>
    </image:image>
    <lastmod>2024-01-01T00:00:00+00:00</lastmod>
    <changefreq>daily</changefreq>
    <priority>0.8</priority>
  </url>
`, i, i, i, i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// BenchmarkSitemapRich measures the sitemap reader on sitemapRich input.
func BenchmarkSitemapRich(b *testing.B) {
	data := sitemapRich(4 << 20)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for _, err := range Read(bytes.NewReader(data), "bench", Sitemap, nil) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkSniff measures the binary check of an input's first block.
func BenchmarkSniff(b *testing.B) {
	data := benchInput(Lines, sniffLen)[:sniffLen]
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if binaryReason(data, false, false, true) != "" {
			b.Fatal("binary")
		}
	}
}

// TestAllocations checks that reading allocates one string per record and
// a fixed number of buffers per input, whatever its length.
func TestAllocations(t *testing.T) {
	for _, tc := range []struct {
		f    Format
		data []byte
	}{
		{Lines, benchInput(Lines, 256<<10)},
		{Hashes, benchInput(Hashes, 256<<10)},
		{NTriples, benchInput(NTriples, 256<<10)},
		{Sitemap, benchInput(Sitemap, 256<<10)},
		{Sitemap, sitemapRich(256 << 10)},
	} {
		records := 0
		for range Read(bytes.NewReader(tc.data), "", tc.f, nil) {
			records++
		}
		allocs := testing.AllocsPerRun(3, func() {
			for range Read(bytes.NewReader(tc.data), "", tc.f, nil) {
			}
		})
		// A string per record (an IRI each, for N-Triples), and buffers
		// and namespace declarations once.
		if extra := allocs - float64(records); extra > 64 {
			t.Errorf("%v: %.0f allocations for %d records", tc.f, allocs, records)
		} else {
			t.Logf("%v: %.0f allocations for %d records", tc.f, allocs, records)
		}
	}
}
