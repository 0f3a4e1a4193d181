package store

import (
	"fmt"
	"time"

	"github.com/urlhash/urlhash/hashkey"
)

// Lengths of a prefix entry's key, in bytes. A key of hashkey.Size bytes is
// a full entry.
const (
	// MinPrefixEntryLen is the shortest prefix entry: a Safe Browsing
	// 4-byte hash prefix.
	MinPrefixEntryLen = 4
	// MaxPrefixEntryLen is the longest prefix entry, one byte short of a
	// full hash.
	MaxPrefixEntryLen = hashkey.Size - 1
)

// Entry is a stored key and its value. A full entry keys all of Hash; a
// prefix entry keys only Hash[:Len] (the rest of Hash is zero when read
// back).
type Entry struct {
	Hash hashkey.Hash
	// Len is the number of leading bytes of Hash the entry keys:
	// hashkey.Size (or 0, read as hashkey.Size) for a full entry,
	// MinPrefixEntryLen..MaxPrefixEntryLen for a prefix entry.
	Len   int
	Value Value
}

// FullEntry returns the full entry for h.
func FullEntry(h hashkey.Hash, v Value) Entry { return Entry{Hash: h, Len: hashkey.Size, Value: v} }

// PrefixEntry returns the prefix entry for p, which must be
// MinPrefixEntryLen..MaxPrefixEntryLen bytes long (else an error wrapping
// ErrPrefixLength).
func PrefixEntry(p []byte, v Value) (Entry, error) {
	if err := CheckPrefixEntryLen(len(p)); err != nil {
		return Entry{}, err
	}
	var e Entry
	copy(e.Hash[:], p)
	e.Len = len(p)
	e.Value = v
	return e, nil
}

// IsPrefix reports whether e is a prefix entry.
func (e *Entry) IsPrefix() bool { return e.Len != 0 && e.Len != hashkey.Size }

// Key returns the bytes the entry keys: all of Hash, or its prefix. The
// slice aliases e.
func (e *Entry) Key() []byte {
	if e.IsPrefix() {
		return e.Hash[:e.Len]
	}
	return e.Hash[:]
}

// Check returns an error wrapping ErrPrefixLength when e is a prefix entry
// of a length outside MinPrefixEntryLen..MaxPrefixEntryLen, and one
// wrapping ErrBadValue when its value fails Value.Check. Every backend
// checks every entry it is asked to write.
func (e *Entry) Check() error {
	if e.Len < 0 || e.Len > hashkey.Size {
		return fmt.Errorf("%w: %d bytes", ErrPrefixLength, e.Len)
	}
	if e.IsPrefix() {
		if err := CheckPrefixEntryLen(e.Len); err != nil {
			return err
		}
	}
	if err := e.Value.Check(); err != nil {
		return fmt.Errorf("%w (key %x)", err, e.Key())
	}
	return nil
}

// The times a Value may carry: from the first second after the unix epoch
// (0 stands for "none") to the last second of year 9999, the range every
// backend stores and every export format (RFC 3339) writes.
var (
	MinTime = time.Unix(1, 0).UTC()
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// Check returns an error wrapping ErrBadValue when a time of v is neither
// zero nor within MinTime..MaxTime.
func (v Value) Check() error {
	if v.FirstSeen.IsZero() && v.LastSeen.IsZero() && v.Expires.IsZero() {
		return nil // most values: every batch a client sends checks each
	}
	return v.checkTimes()
}

func (v *Value) checkTimes() error {
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"first seen", v.FirstSeen}, {"last seen", v.LastSeen}, {"expiry", v.Expires}} {
		if !f.t.IsZero() && (f.t.Before(MinTime) || f.t.After(MaxTime)) {
			return fmt.Errorf("%w: %s %d (unix seconds) is outside %s..%s", ErrBadValue, f.name, f.t.Unix(),
				MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339))
		}
	}
	return nil
}

// CheckPrefixEntryLen returns an error wrapping ErrPrefixLength unless n is
// MinPrefixEntryLen..MaxPrefixEntryLen.
func CheckPrefixEntryLen(n int) error {
	if n < MinPrefixEntryLen || n > MaxPrefixEntryLen {
		return fmt.Errorf("%w: %d bytes, want %d..%d", ErrPrefixLength, n, MinPrefixEntryLen, MaxPrefixEntryLen)
	}
	return nil
}

// Value is what an entry stores besides its key. Both parts are opaque to
// every backend; both empty is the common, smallest case.
type Value struct {
	// Text is the entry's text, for example the URL the hash was computed
	// from.
	Text []byte
	// Data is caller bytes.
	Data []byte
	// FirstSeen and LastSeen are when the entry was first and last
	// reported new by Backend.VisitBatch, to the second; zero when not
	// recorded (a plain set records no times). A backend stores both or
	// neither: LastSeen alone is stored as both.
	FirstSeen, LastSeen time.Time
	// Expires is when the entry stops being stored, to the second: from
	// then on every read answers as if it were absent. Zero: never.
	Expires time.Time
}

// IsZero reports whether v stores nothing: no text, data, times or
// expiry.
func (v Value) IsZero() bool {
	return len(v.Text) == 0 && len(v.Data) == 0 && !v.HasTimes() && v.Expires.IsZero()
}

// CheckPrefix refuses a key range no backend can scan: the first bits of
// prefix, bits from 0 to 256 and within prefix (else an error wrapping
// ErrPrefixLength).
func CheckPrefix(prefix []byte, bits int) error {
	if bits < 0 || bits > 8*hashkey.Size || len(prefix)*8 < bits {
		return fmt.Errorf("%w: %d bits of a %d-byte prefix", ErrPrefixLength, bits, len(prefix))
	}
	return nil
}

// HasTimes reports whether v records when it was seen.
func (v Value) HasTimes() bool { return !v.LastSeen.IsZero() || !v.FirstSeen.IsZero() }

// SeenUnix returns v's seen times in unix seconds as every backend stores
// them: both or neither (either alone stands for both, 0 for none), and
// LastSeen never before FirstSeen.
func (v Value) SeenUnix() (first, last int64) {
	first, last = UnixOf(v.FirstSeen), UnixOf(v.LastSeen)
	switch {
	case first == 0:
		first = last
	case last < first:
		last = first
	}
	return first, last
}

// Unix returns the time of unix seconds s in UTC, and the zero time for 0:
// how backends read the times they store.
func Unix(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

// UnixOf returns t in unix seconds, and 0 for the zero time.
func UnixOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// Match is the answer of Backend.Match: the stored entry a hash matched.
type Match struct {
	// Len is the length of the matching key: hashkey.Size for the full
	// entry, MinPrefixEntryLen..MaxPrefixEntryLen for a prefix entry.
	Len   int
	Value Value
}

// IsFull reports whether the hash matched its full entry.
func (m Match) IsFull() bool { return m.Len == hashkey.Size }
