package hashkey_test

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
)

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
	h := hashkey.Sum([]byte("https://example.com/"))
	fmt.Println(h.Decimal())
	fmt.Println(h.Short().Decimal())
	fmt.Println(h.VeryShort().Decimal())
	// Output:
	// 15978973112404087055-11952159289928715011-16949433277703541955-15558110937471207048
	// 15978973112404087055-11952159289928715011
	// 15978973112404087055
}

func ExampleParsePrefix() {
	p, bits, err := hashkey.ParsePrefix("0f115")
	fmt.Printf("%x %d %v\n", p, bits, err)
	_, _, err = hashkey.ParsePrefix("0fz")
	fmt.Println(err)
	// Output:
	// 0f1150 20 <nil>
	// hashkey: invalid prefix "0fz": 'z' is not a hex digit
}
