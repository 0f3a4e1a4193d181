package keytable

import (
	"bytes"
	"fmt"
)

// KeySize is the size of a key.
const KeySize = 32

// Key is a key of the table.
type Key = [KeySize]byte

// compareKeys orders keys as bytes: the order of key files, merges and
// batches.
func compareKeys(a, b Key) int { return bytes.Compare(a[:], b[:]) }

// MaxTime is the largest time a column holds, in unix seconds:
// 9999-12-31T23:59:59Z (store.MaxTime).
const MaxTime = 253402300799

// Cols are an entry's fixed-width columns, in unix seconds, 0 for unset,
// else 1..MaxTime. A key file stores a column only when one of its rows
// sets it, 4 bytes wide when its times span less than 136 years.
type Cols struct {
	// First and Last are when the entry was first and last seen.
	First, Last int64
	// Expires is the second from which the entry is absent: a lookup,
	// scan or write finds it absent once the table's clock (Options.Now)
	// reaches it, and a merge drops it (Options.Expired).
	Expires int64
}

// IsZero reports whether c sets no column.
func (c Cols) IsZero() bool { return c == Cols{} }

// check refuses times outside 0..MaxTime.
func (c *Cols) check() error {
	for _, v := range [nCols]int64{c.First, c.Last, c.Expires} {
		if v < 0 || v > MaxTime {
			return fmt.Errorf("keytable: time %d (unix seconds) outside 0..%d", v, int64(MaxTime))
		}
	}
	return nil
}

// expired reports whether an entry with expiry x is absent at now.
func expired(x, now int64) bool { return x != 0 && x <= now }

// A Set writes a key's entry, replacing whatever the key had: its
// columns and its value.
type Set struct {
	Key  Key
	Cols Cols
	// Value is the entry's variable bytes, opaque to the table (the index
	// encodes text and data into it); empty: none. It is stored in value
	// files, which key lookups never read.
	Value []byte
	// KeepValue keeps the value of the key's record (expired or not;
	// none when it has none) instead of Value: a revisit that changes the
	// times and keeps the text reads and copies nothing.
	KeepValue bool
}

// Prev is what a write found for one of its keys.
type Prev struct {
	// Live reports whether the key was live: it had a record, not expired
	// by the table's clock.
	Live bool
	// Removed reports whether the write took the key's record (live or
	// expired) out of the table's count (Len); Expires is that record's
	// expiry. A write over an expired record that the running merge
	// drops leaves it to the merge, which reports it (Options.Expired).
	Removed bool
	Expires int64
}

// Result receives what Write found for the keys of a batch, in the order
// of the batch's lists; each slice may be nil, else it is as long as its
// list.
type Result struct {
	Added, Deleted, Set []Prev
}

// Found is what a lookup found for a key.
type Found struct {
	// Live reports whether the key is live (a record not expired).
	Live bool
	// Cols are its columns, HasValue whether it has a value (read with
	// GetBatch or Get).
	Cols     Cols
	HasValue bool
	// Seq is the log position to pass to SyncTo before relying on the
	// answer (0: durable).
	Seq uint64
}

// ExpiryCount is a number of expired records a merge dropped with the
// same expiry second.
type ExpiryCount struct {
	Expires int64
	Count   int64
}

// An Entry is a record as a scan yields it.
type Entry struct {
	Key  Key
	Cols Cols
	// Value is the entry's value when the scan reads values
	// (ScanOptions.Values), valid until the scan's function returns;
	// HasValue whether it has one.
	Value    []byte
	HasValue bool
	// Expired reports whether the record has expired (only with
	// ScanOptions.Expired).
	Expired bool
}
