package main

import (
	"slices"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestDedupePipe: with batches in flight, an identity of an earlier batch
// still in flight is not sent again (the server may store the later batch
// first: the first input must be the one printed), the batches print in
// the order they were read whatever order they are answered in, and no
// identity stays pending once its batch has printed.
func TestDedupePipe(t *testing.T) {
	batch := func(urls ...string) *dedupeBatchState {
		b := &dedupeBatchState{done: make(chan struct{})}
		for _, u := range urls {
			b.rs = append(b.rs, resolved{r: record{text: u}, entry: store.FullEntry(hashkey.Sum([]byte(u)), store.Value{})})
		}
		return b
	}
	var printed [][]string
	p := newDedupePipe(3, func(b *dedupeBatchState) error {
		var got []string
		for i, r := range b.rs {
			got = append(got, r.r.text)
			if b.skip[i] {
				got[len(got)-1] += " (skipped)"
			}
		}
		printed = append(printed, got)
		return nil
	})
	b1, b2 := batch("a", "b"), batch("a", "c", "c")
	for _, b := range []*dedupeBatchState{b1, b2} {
		if err := p.admit(b); err != nil {
			t.Fatal(err)
		}
		if err := p.send(b); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := b2.skip, []bool{true, false, false}; !slices.Equal(got, want) {
		t.Fatalf("skip of the second batch = %v, want %v", got, want)
	}
	close(b2.done) // answered first
	close(b1.done)
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a", "b"}, {"a (skipped)", "c", "c"}}
	if len(printed) != 2 || !slices.Equal(printed[0], want[0]) || !slices.Equal(printed[1], want[1]) {
		t.Fatalf("printed %q, want %q", printed, want)
	}
	if len(p.inflight) != 0 {
		t.Fatalf("batches still in flight after they printed: %d", len(p.inflight))
	}
}

// TestKeySet: a key set holds its keys, repeats and keys whose leading
// bytes collide included, and nothing else.
func TestKeySet(t *testing.T) {
	var keys []hashkey.Hash
	for i := range 1000 {
		keys = append(keys, hashkey.Sum([]byte{byte(i), byte(i >> 8)}))
	}
	collide := keys[0]
	collide[31] ^= 1 // the same leading bytes, another key
	keys = append(keys, keys[5], collide)
	s := newKeySet(keys)
	for i := range keys {
		if !s.has(&keys[i]) {
			t.Fatalf("key %d missing", i)
		}
	}
	for i := range 1000 {
		absent := hashkey.Sum([]byte{byte(i), byte(i >> 8), 'x'})
		if s.has(&absent) {
			t.Fatalf("absent key %d found", i)
		}
	}
	other := keys[1]
	other[31] ^= 1
	if s.has(&other) {
		t.Fatal("a key sharing its leading bytes with a member found")
	}
	var empty keySet
	if empty.has(&keys[0]) {
		t.Fatal("the empty set has a key")
	}
}
