package threatlist_test

import (
	"fmt"

	"github.com/urlhash/urlhash/threatlist"
)

func ExampleList_Apply() {
	l, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("cccc"), []byte("bbbbbbbb")})
	// Remove the second entry in lexicographic order (bbbbbbbb), add dddd.
	add, _ := threatlist.NewList([][]byte{[]byte("dddd")})
	next, change, err := l.Apply([]int32{1}, add)
	if err != nil {
		panic(err)
	}
	for e := range next.All() {
		fmt.Printf("%s ", e)
	}
	fmt.Println(change.Removed.Len(), change.Added.Len())
	// Output: aaaa cccc dddd 1 1
}

// A server encodes the update from the version a client holds; the client
// decodes and applies it, and checks the checksum.
func ExampleEncodeDiff() {
	v1, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("bbbb"), []byte("cccc")})
	v2, _ := threatlist.NewList([][]byte{[]byte("aaaa"), []byte("cccc"), []byte("eeee")})
	resp := threatlist.EncodeDiff(v1, v2, []byte("v2"), threatlist.DiffOptions{Rice: true})
	u, err := resp.Decode()
	if err != nil {
		panic(err)
	}
	got, _, err := v1.Apply(u.Removals, u.Additions)
	if err != nil {
		panic(err)
	}
	sum := got.Checksum()
	fmt.Println(resp.ResponseType, u.Removals, got.Equal(v2), string(sum[:]) == string(u.Checksum))
	// Output: DIFF [1] true true
}
