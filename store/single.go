package store

import (
	"context"

	"github.com/urlhash/urlhash/hashkey"
)

// The single-entry writes of every backend: an entry alone is a batch of
// one, with the batch's guarantees.

// Put stores v under the full entry h with b.PutBatch, replacing any
// stored value.
func Put(ctx context.Context, b Backend, h hashkey.Hash, v Value) error {
	return b.PutBatch(ctx, []Entry{FullEntry(h, v)})
}

// PutPrefix stores v under the prefix entry p (MinPrefixEntryLen..
// MaxPrefixEntryLen bytes, else an error wrapping ErrPrefixLength) with
// b.PutBatch, replacing any stored value.
func PutPrefix(ctx context.Context, b Backend, p []byte, v Value) error {
	e, err := PrefixEntry(p, v)
	if err != nil {
		return err
	}
	return b.PutBatch(ctx, []Entry{e})
}

// Add stores v under the full entry h with b.AddBatch unless h is stored,
// and reports whether it did.
func Add(ctx context.Context, b Backend, h hashkey.Hash, v Value) (bool, error) {
	added, err := b.AddBatch(ctx, []Entry{FullEntry(h, v)})
	if err != nil {
		return false, err
	}
	return added[0], nil
}
