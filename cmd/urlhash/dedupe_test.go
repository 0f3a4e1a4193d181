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
	if len(p.pending) != 0 {
		t.Fatalf("identities still pending after the batches printed: %d", len(p.pending))
	}
}
