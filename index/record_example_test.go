package index_test

import (
	"context"
	"fmt"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// ExampleDB_AddBatchRecorded keeps a write's answer with the write, under
// a request's idempotency key: the answer is readable exactly when the
// keys are stored.
func ExampleDB_AddBatchRecorded() {
	db, _ := index.Open("", &index.Options{InMemory: true})
	defer db.Close()
	batch := []store.Entry{store.FullEntry(hashkey.Sum([]byte("a")), store.Value{})}
	answer := func(added []bool) []byte { return fmt.Appendf(nil, "new: %v", added) }
	added, err := db.AddBatchRecorded(context.Background(), batch, &index.Record{Key: "request-1", TTL: 24 * time.Hour, Answer: answer})
	if err != nil {
		fmt.Println(err)
		return
	}
	kept, ok, _ := db.Recorded("request-1")
	fmt.Println(added, ok, string(kept))
	// Output:
	// [true] true new: [true]
}
