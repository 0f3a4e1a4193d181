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
