package rice_test

import (
	"fmt"

	"github.com/urlhash/urlhash/threatlist/rice"
)

func ExampleDecode32() {
	// firstValue 5, riceParameter 2, entryCount 2, encodedData f702 (hex).
	vs, err := rice.Decode32(5, 2, 2, []byte{0xf7, 0x02})
	fmt.Println(vs, err)
	// Output: [5 20 29] <nil>
}

func ExampleEncode32() {
	values := []uint32{5, 20, 29}
	first, count, data, err := rice.Encode32(values, rice.Parameter(len(values)-1, 29-5, 2, 28))
	fmt.Printf("%d %d %x %v\n", first, count, data, err)
	// Output: 5 2 bd00 <nil>
}
