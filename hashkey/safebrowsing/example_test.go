package safebrowsing_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey/safebrowsing"
)

func ExampleProfile_Canonical() {
	for _, raw := range []string{
		"http://host/%25%32%35",
		"www.GOOgle.com",
		"http://3279880203/blah",
		"http://www.google.com/blah/..",
		"http://www.evil.com/blah#frag",
	} {
		c, err := safebrowsing.WebRisk.Canonical(raw)
		fmt.Println(c, err)
	}
	_, err := safebrowsing.WebRisk.Canonical("mailto:someone@example.com")
	fmt.Println(err)
	// Output:
	// http://host/%25 <nil>
	// http://www.google.com/ <nil>
	// http://195.127.0.11/blah <nil>
	// http://www.google.com/ <nil>
	// http://www.evil.com/blah <nil>
	// hashkey: webrisk: invalid url "mailto:someone@example.com": safebrowsing: not a web url
}

func ExampleProfile_Expressions() {
	for _, p := range []*safebrowsing.Profile{safebrowsing.WebRisk, safebrowsing.V5} {
		canonical, exprs, err := p.Expressions("http://a.b.example.co.uk/1/2.html?param=1")
		if err != nil {
			panic(err)
		}
		fmt.Println(p.Name(), canonical)
		for _, e := range exprs {
			fmt.Println("  ", e)
		}
	}
	// Output:
	// webrisk http://a.b.example.co.uk/1/2.html?param=1
	//    a.b.example.co.uk/1/2.html?param=1
	//    a.b.example.co.uk/1/2.html
	//    a.b.example.co.uk/
	//    a.b.example.co.uk/1/
	//    b.example.co.uk/1/2.html?param=1
	//    b.example.co.uk/1/2.html
	//    b.example.co.uk/
	//    b.example.co.uk/1/
	//    example.co.uk/1/2.html?param=1
	//    example.co.uk/1/2.html
	//    example.co.uk/
	//    example.co.uk/1/
	//    co.uk/1/2.html?param=1
	//    co.uk/1/2.html
	//    co.uk/
	//    co.uk/1/
	// safebrowsing-v5 http://a.b.example.co.uk/1/2.html?param=1
	//    a.b.example.co.uk/1/2.html?param=1
	//    a.b.example.co.uk/1/2.html
	//    a.b.example.co.uk/
	//    a.b.example.co.uk/1/
	//    b.example.co.uk/1/2.html?param=1
	//    b.example.co.uk/1/2.html
	//    b.example.co.uk/
	//    b.example.co.uk/1/
	//    example.co.uk/1/2.html?param=1
	//    example.co.uk/1/2.html
	//    example.co.uk/
	//    example.co.uk/1/
}

func ExampleProfile_Hashes() {
	exprs, err := safebrowsing.V5.Hashes("http://[::ffff:1.2.3.4]/1/")
	if err != nil {
		panic(err)
	}
	for _, e := range exprs {
		prefix, _ := safebrowsing.Prefix(e.Hash, 4)
		fmt.Printf("%-12s %x %s\n", e.Expr, prefix, e.Hash)
	}
	// Output:
	// 1.2.3.4/1/   5c9f3541 5c9f354119e8d3f82e1bc01545ec7a656da70453e6bfc053ac8b257bdd4d8ef6
	// 1.2.3.4/     3f008b86 3f008b863ca6e954c31859665454f9cbcb10760acb7ebc536d6da1ccac94618d
}

// A Buffer reused across URLs makes canonicalising, expanding and hashing
// allocate nothing.
func ExampleBuffer() {
	var b safebrowsing.Buffer
	for _, raw := range []string{"http://a.b.c/1/2.html?param=1", "http://1.2.3.4/1/"} {
		if err := safebrowsing.WebRisk.Expand(&b, raw); err != nil {
			panic(err)
		}
		fmt.Printf("%s: %d expressions\n", b.Canonical(), b.Len())
		for i := range b.Len() {
			h := b.Hash(i)
			fmt.Printf("  %x %s\n", h[:4], b.Expression(i))
		}
	}
	// Output:
	// http://a.b.c/1/2.html?param=1: 8 expressions
	//   1cd5cf5e a.b.c/1/2.html?param=1
	//   8b19a5a5 a.b.c/1/2.html
	//   f9c142c4 a.b.c/
	//   59e650c4 a.b.c/1/
	//   9b7d85bb b.c/1/2.html?param=1
	//   1803dee4 b.c/1/2.html
	//   b225cf5d b.c/
	//   ac5f446d b.c/1/
	// http://1.2.3.4/1/: 2 expressions
	//   5c9f3541 1.2.3.4/1/
	//   3f008b86 1.2.3.4/
}

func ExamplePrefix() {
	var b safebrowsing.Buffer
	_ = safebrowsing.WebRisk.Expand(&b, "abc") // canonical http://abc/, expression "abc/"
	p, err := safebrowsing.Prefix(b.Hash(0), 6)
	fmt.Printf("%x %v\n", p, err)
	_, err = safebrowsing.Prefix(b.Hash(0), 3)
	fmt.Println(err)
	// Output:
	// ee08f01097d6 <nil>
	// safebrowsing: hash prefix length must be 4 to 32 bytes: got 3
}
