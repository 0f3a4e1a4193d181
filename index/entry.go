package index

import (
	"bytes"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
)

// Entry is a stored key and its value. A full entry keys all of Hash; a
// prefix entry keys only Hash[:Len] (the rest of Hash is zero when read
// back).
type Entry struct {
	Hash hashkey.Hash
	// Len is the number of leading bytes of Hash the entry keys:
	// hashkey.Size (or 0, read as hashkey.Size) for a full entry,
	// MinPrefixLen..MaxPrefixLen for a prefix entry.
	Len   int
	Value Value
}

// IsPrefix reports whether e is a prefix entry.
func (e *Entry) IsPrefix() bool { return e.Len != 0 && e.Len != hashkey.Size }

// Key returns the bytes the entry keys: all of Hash, or its prefix.
func (e *Entry) Key() []byte {
	if e.IsPrefix() {
		return e.Hash[:e.Len]
	}
	return e.Hash[:]
}

// PrefixEntry returns the prefix entry for p, which must be
// MinPrefixLen..MaxPrefixLen bytes long.
func PrefixEntry(p []byte, v Value) (Entry, error) {
	if err := checkPrefix(p); err != nil {
		return Entry{}, err
	}
	var e Entry
	copy(e.Hash[:], p)
	e.Len = len(p)
	e.Value = v
	return e, nil
}

func (e *Entry) check() error {
	if e.IsPrefix() && (e.Len < MinPrefixLen || e.Len > MaxPrefixLen) {
		return fmt.Errorf("%w: %d bytes", ErrPrefixLength, e.Len)
	}
	return nil
}

func checkPrefix(p []byte) error {
	if len(p) < MinPrefixLen || len(p) > MaxPrefixLen {
		return fmt.Errorf("%w: %d bytes, want %d..%d", ErrPrefixLength, len(p), MinPrefixLen, MaxPrefixLen)
	}
	return nil
}

// dbKey returns the Badger key of e.
func (e *Entry) dbKey() []byte {
	if e.IsPrefix() {
		return prefixKey(e.Hash[:e.Len])
	}
	k := fullKey(&e.Hash)
	return k[:]
}

// compareEntries orders entries as their Badger keys: full entries first
// (by hash), then prefix entries (by bytes).
func compareEntries(a, b *Entry) int {
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

// Match is the answer of DB.Match: the stored entry a hash matched.
type Match struct {
	// Len is the length of the matching key: hashkey.Size for the full
	// entry, MinPrefixLen..MaxPrefixLen for a prefix entry.
	Len   int
	Value Value
}

// IsFull reports whether the hash matched its full entry.
func (m Match) IsFull() bool { return m.Len == hashkey.Size }
