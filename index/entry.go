package index

import (
	"bytes"

	"github.com/urlhash/urlhash/store"
)

// dbKey returns the Badger key of e.
func dbKey(e *store.Entry) []byte {
	if e.IsPrefix() {
		return prefixKey(e.Hash[:e.Len])
	}
	k := fullKey(&e.Hash)
	return k[:]
}

// compareEntries orders entries as their Badger keys: full entries first
// (by hash), then prefix entries (by bytes).
func compareEntries(a, b *store.Entry) int {
	ap, bp := a.IsPrefix(), b.IsPrefix()
	switch {
	case ap != bp:
		if bp {
			return -1
		}
		return 1
	case ap:
		return bytes.Compare(a.Hash[:a.Len], b.Hash[:b.Len])
	}
	return bytes.Compare(a.Hash[:], b.Hash[:])
}
