package hashkey_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
)

func ExampleProfile_Hash() {
	h, err := hashkey.URLHash.Hash("hTTpS://Example.COM:443/")
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
		c, err := hashkey.URLHash.Canonical(u)
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
	// error: hashkey: urlhash: invalid url "not a url": missing scheme
}

func ExampleParseHash() {
	h, err := hashkey.ParseHash("0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7")
	if err != nil {
		panic(err)
	}
	same, _ := hashkey.ParseHash(h.Decimal())
	fmt.Println(same == h)
	_, err = hashkey.ParseHash("0f11")
	fmt.Println(err != nil)
	// Output:
	// true
	// true
}

func ExampleHash_Decimal() {
	h, _ := hashkey.URLHash.Hash("https://example.com/")
	fmt.Println(h.Decimal())
	fmt.Println(h.Short().Decimal())
	fmt.Println(h.VeryShort().Decimal())
	// Output:
	// 15978973112404087055-11952159289928715011-16949433277703541955-15558110937471207048
	// 15978973112404087055-11952159289928715011
	// 15978973112404087055
}
