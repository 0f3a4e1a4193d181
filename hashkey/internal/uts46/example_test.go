package uts46_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey/internal/uts46"
)

func ExampleToASCII() {
	for _, host := range []string{"Bücher.example", "ẞ.com", "a.b.c.XN--pokxncvks", "a\u200db.example"} {
		ascii, err := uts46.ToASCII(host)
		fmt.Printf("%q %v\n", ascii, err)
	}
	// Output:
	// "xn--bcher-kva.example" <nil>
	// "xn--zca.com" <nil>
	// "a.b.c.xn--pokxncvks" <nil>
	// "" uts46: joiner not allowed by contextj rules in label "a\u200db" of "a\u200db.example"
}

func ExampleProfile_ToASCII() {
	// Lookup converts label by label whatever ASCII the labels hold.
	ascii, err := uts46.Lookup.ToASCII("a_b.ＭÜＮＣＨＥＮ.de")
	fmt.Println(ascii, err)
	// Output: a_b.xn--mnchen-3ya.de <nil>
}
