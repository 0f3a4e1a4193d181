package store

import (
	"context"
	"iter"
	"time"

	"github.com/urlhash/urlhash/hashkey"
)

// Backend is an index of hashes: what package query needs of a store. The
// embedded Badger index (*index.DB), PostgreSQL (*pgindex.DB) and the
// client of a urlhash server implement it; every implementation is safe
// for concurrent use.
//
// Slices passed in may be reused by the caller once a method returns;
// values passed to a callback or returned are the caller's to keep.
//
// Every method that can block takes a context: a cancelled one (or one
// past its deadline) ends the call with an error wrapping ctx.Err() as
// soon as the backend can tell. A write cancelled midway may have applied
// part of its batch (each entry whole), as a crash may; what a write
// acknowledged stays.
type Backend interface {
	// Get returns the value of the full entry h, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, h hashkey.Hash) (Value, error)
	// GetBatch returns, in input order, the values of the full entries
	// hs and which of them are stored; a hash whose full entry is not
	// (absent, expired, or the key of a prefix entry only) has false and
	// a zero Value. It answers as a Get of each would, in one call.
	GetBatch(ctx context.Context, hs []hashkey.Hash) ([]Value, []bool, error)
	// HasBatch reports, for each hash, whether its full entry is stored.
	HasBatch(ctx context.Context, hs []hashkey.Hash) ([]bool, error)
	// Match returns the full entry h when it is stored, else the longest
	// prefix entry h starts with; the bool is false when neither is.
	Match(ctx context.Context, h hashkey.Hash) (Match, bool, error)
	// Scan calls fn for the stored entries (full first, then prefix
	// entries) whose key starts with the first bits of prefix, in key
	// order, at most limit of them (limit <= 0: all). It stops at the
	// first error fn returns and returns it.
	Scan(ctx context.Context, prefix []byte, bits, limit int, fn func(Entry) error) error
	// Count returns the numbers of full and prefix entries whose key
	// starts with the first bits of prefix.
	Count(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error)

	// PutBatch stores every entry, replacing the value of a stored key
	// (put overwrites; add does not).
	PutBatch(ctx context.Context, entries []Entry) error
	// AddBatch stores each entry whose key is not stored yet (add if
	// absent; a stored value is never replaced) and reports which were new. Among concurrent callers adding one key,
	// exactly one sees true; a key repeated in the batch is new at most
	// once (the first).
	AddBatch(ctx context.Context, entries []Entry) ([]bool, error)
	// VisitBatch records a sighting of each entry and reports which are
	// new: absent (or expired), or last reported new revisitAfter or
	// longer ago by the backend's clock (revisitAfter <= 0: never again).
	// A new entry is stored with FirstSeen (kept when it was stored) and
	// LastSeen set to now, the entry's Text, Data and Expires where they
	// are set, else the stored ones; an entry that is not new is left as
	// it was. A stored entry that records no times is new. Among
	// concurrent callers visiting one key, exactly one sees true per
	// revisit; a key repeated in the batch is new at most once (the
	// first).
	VisitBatch(ctx context.Context, entries []Entry, revisitAfter time.Duration) ([]bool, error)
	// Delete removes a full or prefix entry; an absent one is an error
	// wrapping ErrNotFound.
	Delete(ctx context.Context, e Entry) error
	// DeletePrefix removes every entry Scan(prefix, bits, 0, ...) would
	// visit and returns how many full and prefix entries it removed.
	DeletePrefix(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error)
	// Load bulk-loads entries, keeping stored keys as they are (add if
	// absent); it is the fast path for large imports.
	Load(ctx context.Context, seq iter.Seq[Entry]) (LoadResult, error)

	// Stats returns counts and sizes.
	Stats(ctx context.Context) (Stats, error)
	// Verify reads the whole index and returns an error wrapping
	// ErrCorrupt that lists every damage it finds, naming each damaged
	// file.
	Verify(ctx context.Context) error
	// Sync makes every acknowledged write durable.
	Sync(ctx context.Context) error
	// Close syncs and releases the backend.
	Close() error
	// Path names the index for messages: a directory, a redacted
	// connection string or a server address.
	Path() string
	// Profile returns the profile name recorded in the index ("" if
	// none). A backend that cannot tell (a server that does not answer)
	// returns the error, never "": "" would mean the default profile.
	Profile(ctx context.Context) (string, error)
	// SetProfile records name as the index's profile when it records none
	// (once recorded, a profile never changes; an empty name records
	// nothing). It returns an error
	// wrapping ErrProfileMismatch when the index records another, and
	// ErrReadOnly on a read-only backend that records none.
	SetProfile(ctx context.Context, name string) error
}

// LoadResult counts what a Load did.
type LoadResult struct {
	// Added is the number of keys stored by the load.
	Added int64
	// Present is the number of input entries whose key was already
	// stored, or repeated an earlier input entry; their values were left
	// as they were.
	Present int64
	// Streamed reports whether the new keys were written as sorted tables
	// rather than through the write-ahead log (Badger only).
	Streamed bool
}

// Stats describes an index: the figures every backend can answer. A
// backend's own figures (index.Stats: the filter, Badger's files) are
// reached through its own type.
type Stats struct {
	// Entries is the number of full entries.
	Entries int64
	// PrefixEntries is the number of prefix entries.
	PrefixEntries int64
	// Expiring is the number of entries (full and prefix) that have an
	// expiry time (a TTL) and have not expired yet.
	Expiring int64
	// DiskBytes is the disk space of the whole index, in bytes (0 for an
	// index in memory, or where the backend cannot measure it).
	DiskBytes int64
	// FormatVersion is the format version of the index.
	FormatVersion int
	// Profile is the recorded profile ("" if none).
	Profile string
}
