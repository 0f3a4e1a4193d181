package urlhash_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/urlhash"
)

func ExampleProfile_Hash() {
	h, err := urlhash.Default.Hash("hTTpS://Example.COM:443/")
	if err != nil {
		panic(err)
	}
	fmt.Println(h)
	// Output: 0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7
}

func ExampleProfile_Canonical() {
	for _, u := range []string{
		"HTTP://Example.com:80/a/./b/../c d?q=1#top",
		"https://exâmple.com",
		"http://0x7f.1/",
		"http://[0:0::1]:8080/",
		"not a url",
	} {
		c, err := urlhash.Default.Canonical(u)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(c)
	}
	// Output:
	// http://example.com/a/c%20d?q=1#top
	// https://xn--exmple-xta.com/
	// http://127.0.0.1/
	// http://[::1]:8080/
	// error: hashkey: urlhash+sha256: invalid url "not a url": missing scheme
}

func ExampleNew() {
	p, err := urlhash.New(urlhash.DropFragment(), urlhash.WithDigest(hashkey.TruncatedSHA384))
	if err != nil {
		panic(err)
	}
	a, _ := p.Hash("https://example.com/page#top")
	b, _ := p.Hash("https://example.com/page")
	fmt.Println(p.Name(), a == b)
	_, err = urlhash.New(urlhash.WithDigest(hashkey.Digest(9)))
	fmt.Println(err)
	// Output:
	// urlhash-nofragment+url-hash-0.1.0 true
	// urlhash: unknown digest Digest(9)
}

func ExampleHash_decimal() {
	h, _ := urlhash.Default.Hash("https://example.com/")
	fmt.Println(h.Decimal())
	fmt.Println(h.Short().Decimal())
	fmt.Println(h.VeryShort().Decimal())
	// Output:
	// 15978973112404087055-11952159289928715011-16949433277703541955-15558110937471207048
	// 15978973112404087055-11952159289928715011
	// 15978973112404087055
}
