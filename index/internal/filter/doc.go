// Package filter is the index's in-memory membership filter: it answers
// most lookups of absent keys without reading the database, may answer
// "maybe" for an absent key, and never answers "absent" for a stored one.
//
// A Filter holds a roaring64 bitmap of the leading k bits of every full
// entry, k = BitsFor(N) = bitlen(N)+10 (at least MinBits), so that at most
// about 1/1024 of absent keys get a "maybe", plus a 32-bit roaring bitmap
// of the first 4 bytes of every prefix entry (prefix entries are at least
// 4 bytes long, so every extension of a stored prefix hits it). When the
// entry count outgrows k (IsTooNarrowFor), the index builds a Wider filter
// that shares the prefix bitmap. Marshal and Unmarshal are roaring's
// portable format; Unmarshal validates what it reads and turns damage into
// an error wrapping store.ErrCorrupt.
//
// For probes, Freeze builds a flat copy of the full-entry values (sorted,
// bucketed by their leading bits: one offset pair and a short run of
// 16-bit values per probe), with an overlay of the values added since,
// merged into it as it grows; the roaring form stays the filter of record
// (persisted, updated, widened). BenchmarkFilter measures a probe of each.
//
// The filter knows hashes only, and nothing of Badger. Callers synchronise:
// the methods that add are writes, the others reads.
package filter
