package query

import (
	"iter"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
)

// The methods in this file work on hashes and entries rather than URLs:
// for hash lists, prefix entries and tools that already hold identities.

// HasHashes reports, for each hash, whether it is stored as a full entry,
// in one ordered pass.
func (ix *Index) HasHashes(hs []hashkey.Hash) ([]bool, error) { return ix.db.HasBatch(hs) }

// GetHash returns the value of the full entry h, or an error wrapping
// index.ErrNotFound.
func (ix *Index) GetHash(h hashkey.Hash) (index.Value, error) { return ix.db.Get(h) }

// AddEntries stores the entries (full or prefix) that are not stored yet
// and reports which were new.
func (ix *Index) AddEntries(entries []index.Entry) ([]bool, error) {
	return ix.db.AddIfAbsentBatch(entries)
}

// DeleteEntry removes a full or prefix entry; an absent one gives an error
// wrapping index.ErrNotFound.
func (ix *Index) DeleteEntry(e index.Entry) error {
	if e.IsPrefix() {
		return ix.db.DeletePrefix(e.Key())
	}
	return ix.db.Delete(e.Hash)
}

// Load bulk-loads entries; see index.DB.Load.
func (ix *Index) Load(seq iter.Seq[index.Entry]) (index.LoadResult, error) { return ix.db.Load(seq) }

// ForEach calls fn for every entry in key order.
func (ix *Index) ForEach(fn func(index.Entry) error) error { return ix.db.ForEach(fn) }

// Count returns the numbers of full and prefix entries under a prefix of
// bits bits.
func (ix *Index) Count(prefix []byte, bits int) (full, prefixes int64, err error) {
	return ix.db.Count(prefix, bits)
}

// Stats returns the backend's counts and sizes.
func (ix *Index) Stats() (index.Stats, error) { return ix.db.Stats() }

// Verify checks the backend's consistency.
func (ix *Index) Verify() error { return ix.db.Verify() }
