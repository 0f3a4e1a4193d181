package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// ExampleDB_Backup backs up a served index while it serves, and restores
// the backup into another index.
func ExampleDB_Backup() {
	ctx := context.Background()
	db, _ := index.Open("", &index.Options{InMemory: true})
	defer db.Close()
	srv := httptest.NewServer(server.New(db, &server.Options{
		Backup: func(w io.Writer, since uint64) (uint64, error) {
			info, err := db.Backup(w, since)
			return info.Until, err
		},
		Logger: slog.New(slog.DiscardHandler),
	}))
	defer srv.Close()

	c, err := remote.Open(ctx, srv.URL, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	c.PutBatch(ctx, []store.Entry{store.FullEntry(hashkey.Sum([]byte("https://example.com/")), store.Value{})})
	var bak bytes.Buffer
	if _, err := c.Backup(ctx, &bak, 0); err != nil {
		fmt.Println(err)
		return
	}

	restored, _ := index.Open("", &index.Options{InMemory: true})
	defer restored.Close()
	if _, err := restored.Restore(&bak); err != nil {
		fmt.Println(err)
		return
	}
	ok, _ := restored.Has(ctx, hashkey.Sum([]byte("https://example.com/")))
	fmt.Println("restored:", ok)
	// Output:
	// restored: true
}

// ExampleDB_AddBatchOnce resends a batch with its Idempotency-Key, as a
// client does after a crash: the server answers what it answered the
// first time, so the keys the first attempt stored are still reported new.
func ExampleDB_AddBatchOnce() {
	ctx := context.Background()
	db, _ := index.Open("", &index.Options{InMemory: true})
	defer db.Close()
	srv := httptest.NewServer(server.New(db, &server.Options{Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	c, err := remote.Open(ctx, srv.URL, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	batch := []store.Entry{
		store.FullEntry(hashkey.Sum([]byte("a")), store.Value{}),
		store.FullEntry(hashkey.Sum([]byte("b")), store.Value{}),
	}
	key := wire.NewKey() // kept with the batch (dedupe journals both)
	first, _ := c.AddBatchOnce(ctx, batch, key)
	again, _ := c.AddBatchOnce(ctx, batch, key)
	other, _ := c.AddBatchOnce(ctx, batch, wire.NewKey())
	fmt.Println(first, again, other)
	// Output:
	// [true true] [true true] [false false]
}

// ExampleDB_ServerStats reads a server's whole /v1/stats answer: over a
// Badger index it has the index's filter figures too.
func ExampleDB_ServerStats() {
	db, _ := index.Open("", &index.Options{InMemory: true})
	defer db.Close()
	srv := httptest.NewServer(server.New(db, &server.Options{Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()

	c, err := remote.Open(context.Background(), srv.URL, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	c.PutBatch(context.Background(), []store.Entry{store.FullEntry(hashkey.Sum([]byte("https://example.com/")), store.Value{})})
	s, err := c.ServerStats(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("entries:", s.Entries, "filter bits:", s.FilterBits)
	// Output:
	// entries: 1 filter bits: 20
}
