package iri_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey/iri"
)

func ExampleProfile_Hash() {
	for _, s := range []string{"http://example.org/~bob/", "HTTP://EXAMPLE.ORG:80/~bob/", "<http://example.org/>"} {
		h, err := iri.IRI.Hash(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(h.VeryShort(), s)
	}
	// Output:
	// 2ab86cab529820c3 http://example.org/~bob/
	// ebe0fdeae75271c5 HTTP://EXAMPLE.ORG:80/~bob/
	// error: hashkey: iri: invalid url "<http://example.org/>": no scheme: not an absolute IRI at byte 0
}
