package dedupe

import (
	"slices"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestPipe: with batches in flight, an identity of an earlier batch still
// in flight is not sent again (the server may store the later batch
// first: the first input must be the one reported new), the batches are
// delivered in the order they were admitted whatever order they are
// answered in, and no identity stays in flight once its batch is
// delivered.
func TestPipe(t *testing.T) {
	newBatch := func(urls ...string) *batch {
		b := &batch{done: make(chan struct{})}
		for _, u := range urls {
			b.inputs = append(b.inputs, Input{Text: u, Entry: store.FullEntry(hashkey.Sum([]byte(u)), store.Value{})})
		}
		return b
	}
	var delivered [][]string
	p := newPipe(3, func(b *batch) error {
		var got []string
		for i, in := range b.inputs {
			got = append(got, in.Text)
			if b.skip[i] {
				got[len(got)-1] += " (skipped)"
			}
		}
		delivered = append(delivered, got)
		return nil
	})
	b1, b2 := newBatch("a", "b"), newBatch("a", "c", "c")
	for _, b := range []*batch{b1, b2} {
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
	if len(delivered) != 2 || !slices.Equal(delivered[0], want[0]) || !slices.Equal(delivered[1], want[1]) {
		t.Fatalf("delivered %q, want %q", delivered, want)
	}
	if len(p.inflight) != 0 {
		t.Fatalf("batches still in flight after their delivery: %d", len(p.inflight))
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
