package index_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
)

// A seen-set adds bare keys: AddKeys reports which were new, in input
// order, without an entry per key.
func ExampleDB_AddKeys() {
	dir, err := os.MkdirTemp("", "index-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := index.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	a, b := hashkey.Sum([]byte("https://example.com/a")), hashkey.Sum([]byte("https://example.com/b"))
	added := make([]bool, 3)
	if err := db.AddKeys(context.Background(), []hashkey.Hash{a, b, a}, added, nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println(added)
	if err := db.AddKeys(context.Background(), []hashkey.Hash{b}, added[:1], nil); err != nil {
		log.Fatal(err)
	}
	fmt.Println(added[:1])
	// Output:
	// [true true false]
	// [false]
}
