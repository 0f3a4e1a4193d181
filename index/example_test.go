package index_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"log"
	"os"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "index-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := index.Open(dir, &index.Options{Profile: "urlhash+sha256;unicode=17.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	h := hashkey.Sum([]byte("https://example.com/"))
	if err := db.Put(ctx, h, store.Value{Text: []byte("https://example.com/")}); err != nil {
		log.Fatal(err)
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	// A read-only open of the same directory; a different profile is refused.
	db, err = index.Open(dir, &index.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	v, err := db.Get(ctx, h)
	profile, _ := db.Profile(ctx) // from memory: it never fails
	fmt.Println(string(v.Text), err, profile)
	_, err = index.Open(dir, &index.Options{Profile: "other"})
	fmt.Println(err != nil)
	// Output:
	// https://example.com/ <nil> urlhash+sha256;unicode=17.0.0
	// true
}

func ExampleDB_Add() {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, u := range []string{"https://a.example/", "https://b.example/", "https://a.example/"} {
		added, err := db.Add(context.Background(), hashkey.Sum([]byte(u)), store.Value{})
		if err != nil {
			log.Fatal(err)
		}
		if added {
			fmt.Println("new:", u)
		}
	}
	// Output:
	// new: https://a.example/
	// new: https://b.example/
}

func ExampleDB_Match() {
	ctx := context.Background()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	h := hashkey.Sum([]byte("https://evil.example/"))
	// A Safe Browsing style 4-byte prefix and a longer 8-byte one.
	db.PutPrefix(ctx, h[:4], store.Value{Data: []byte("list A")})
	db.PutPrefix(ctx, h[:8], store.Value{Data: []byte("list B")})

	m, ok, err := db.Match(ctx, h)
	fmt.Println(ok, m.Len, m.IsFull(), string(m.Value.Data), err)
	// Output:
	// true 8 false list B <nil>
}

func ExampleDB_Scan() {
	ctx := context.Background()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{"00aa", "0abb", "0acc", "ff00"} {
		var h hashkey.Hash
		hex.Decode(h[:], []byte(s))
		db.Put(ctx, h, store.Value{})
	}
	// Three hex digits "0ab" are 12 bits.
	db.Scan(ctx, []byte{0x0a, 0xb0}, 12, 10, func(e store.Entry) error {
		fmt.Printf("%x\n", e.Hash[:2])
		return nil
	})
	// Output:
	// 0abb
}

// A bulk load of any size in bounded memory: entries beyond LoadMemory go
// to sorted runs in the index directory, merged when the input ends. The
// first of repeated keys wins, and stored keys keep their values.
func ExampleDB_Load() {
	dir, err := os.MkdirTemp("", "index-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := index.Open(dir, &index.Options{LoadMemory: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	entries := func(yield func(store.Entry) bool) {
		for _, u := range []string{"https://example.com/", "https://example.org/", "https://example.com/"} {
			h := hashkey.Sum([]byte(u))
			if !yield(store.FullEntry(h, store.Value{Text: []byte(u)})) {
				return
			}
		}
	}
	res, err := db.Load(context.Background(), entries)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("added %d, present %d\n", res.Added, res.Present)
	// Output: added 2, present 1
}

// ExampleDB_DetailedStats reads the figures only a Badger index has (its
// filter, its files) beside those of store.Stats.
func ExampleDB_DetailedStats() {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.Add(context.Background(), hashkey.Sum([]byte("https://example.com/")), store.Value{})
	db.Has(context.Background(), hashkey.Sum([]byte("https://example.org/")))
	s, err := db.DetailedStats(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	// The filter answered both the Add's check and the Has without a read.
	fmt.Println("entries:", s.Entries, "filter bits:", s.FilterBits, "answered absent by the filter:", s.FilterAbsent)
	// Output:
	// entries: 1 filter bits: 20 answered absent by the filter: 2
}

// A seen-set in a key table (a new index has one): full entries go to
// it, key-only or with a value (text, data, times, expiry); they are
// found, counted and scanned.
func ExampleOptions_keyTable() {
	dir, err := os.MkdirTemp("", "index-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := index.Open(dir, nil)
	seen := hashkey.Sum([]byte("https://example.com/"))
	noted := hashkey.Sum([]byte("https://example.com/noted"))
	// A batch of key-only entries: the key table.
	added, err := db.AddBatch(ctx, []store.Entry{store.FullEntry(seen, store.Value{}), store.FullEntry(seen, store.Value{})})
	if err != nil {
		log.Fatal(err)
	}
	// An entry with a value: the key table too, its value beside it.
	if err := db.Put(ctx, noted, store.Value{Data: []byte("note")}); err != nil {
		log.Fatal(err)
	}
	ok, _ := db.Has(ctx, seen)
	v, _ := db.Get(ctx, noted)
	st, _ := db.Stats(ctx)
	fmt.Println(added, ok, string(v.Data), st.Entries, st.FormatVersion)
	// Output:
	// [true false] true note 2 3
}
