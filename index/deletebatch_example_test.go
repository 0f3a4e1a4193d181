package index_test

import (
	"context"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

func ExampleDB_DeleteBatch() {
	ctx := context.Background()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	a, b := hashkey.Sum([]byte("a")), hashkey.Sum([]byte("b"))
	p, _ := store.PrefixEntry(a[:4], store.Value{})
	db.PutBatch(ctx, []store.Entry{store.FullEntry(a, store.Value{}), p})
	// b is not stored: it is skipped.
	n, err := db.DeleteBatch(ctx, []store.Entry{store.FullEntry(a, store.Value{}), p, store.FullEntry(b, store.Value{})})
	fmt.Println(n, err)
	// Output: 2 <nil>
}
