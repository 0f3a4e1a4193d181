package ingest_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urlhash/urlhash/ingest"
)

func ExampleRead() {
	const nt = `# two good lines and a bad one
<http://example.org/s> <http://example.org/p> "literal"@en .
<http://example.org/bad iri> <http://example.org/p> _:b .
_:b <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#int> .
`
	for rec, err := range ingest.Read(strings.NewReader(nt), "data.nt", ingest.NTriples, nil) {
		var le *ingest.LineError
		if errors.As(err, &le) {
			fmt.Println("skip:", err) // or stop, as --strict does
			continue
		} else if err != nil {
			fmt.Println("fatal:", err)
			return
		}
		fmt.Println(rec.Line, rec.Text)
	}
	// Output:
	// 2 http://example.org/s
	// 2 http://example.org/p
	// skip: data.nt:3: invalid IRI at column 24: forbidden character ' '
	// 4 http://example.org/p
	// 4 http://www.w3.org/2001/XMLSchema#int
}

func ExampleRead_sitemap() {
	const sm = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> http://example.com/?a=1&amp;b=2 </loc></url>
</urlset>`
	for rec, err := range ingest.Read(strings.NewReader(sm), "sitemap.xml", ingest.Sitemap, nil) {
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(rec.Line, rec.Text)
	}
	// Output:
	// 3 http://example.com/?a=1&b=2
}

func ExampleParseFormat() {
	f, err := ingest.ParseFormat("nquads")
	fmt.Println(f, err)
	_, err = ingest.ParseFormat("csv")
	fmt.Println(err)
	// Output:
	// ntriples <nil>
	// ingest: unknown format "csv" (want lines, hashes, ntriples, nquads, turtle, trig, rdfxml or sitemap)
}

func ExampleRead_turtle() {
	const ttl = `@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@base <http://example.org/people/> .
<alice> a foaf:Person ;
    foaf:knows <../people/bob> ;
    foaf:age 42 .
`
	for rec, err := range ingest.Read(strings.NewReader(ttl), "people.ttl", ingest.Turtle, nil) {
		if err != nil {
			fmt.Println(err) // a syntax error ends the sequence
			return
		}
		fmt.Println(rec.Line, rec.Text)
	}
	// Output:
	// 3 http://example.org/people/alice
	// 3 http://www.w3.org/1999/02/22-rdf-syntax-ns#type
	// 3 http://xmlns.com/foaf/0.1/Person
	// 4 http://xmlns.com/foaf/0.1/knows
	// 4 http://example.org/people/bob
	// 5 http://xmlns.com/foaf/0.1/age
	// 5 http://www.w3.org/2001/XMLSchema#integer
}

func ExampleRead_rdfxml() {
	const rdf = `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
  <rdf:Description rdf:about="report">
    <dc:creator rdf:resource="#me"/>
  </rdf:Description>
</rdf:RDF>`
	opts := &ingest.Options{Base: "http://example.org/doc/"}
	for rec, err := range ingest.Read(strings.NewReader(rdf), "doc.rdf", ingest.RDFXML, opts) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rec.Line, rec.Text)
	}
	// Output:
	// 5 http://example.org/doc/report
	// 5 http://purl.org/dc/elements/1.1/creator
	// 5 http://example.org/doc/#me
}

func ExampleFormatOf() {
	for _, name := range []string{"foaf.ttl", "dump.nq.gz", "schema.owl", "urls.txt"} {
		f, ok := ingest.FormatOf(name)
		fmt.Println(name, f, ok)
	}
	// Output:
	// foaf.ttl turtle true
	// dump.nq.gz ntriples true
	// schema.owl rdfxml true
	// urls.txt lines false
}

func ExampleFileIRI() {
	base, err := ingest.FileIRI("/data/my vocab.ttl")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(base)
	// Output:
	// file:///data/my%20vocab.ttl
}
