// Package filter is the index's in-memory membership filter: it answers
// most lookups of absent keys without reading the database, may answer
// "maybe" for an absent key, and never answers "absent" for a stored one.
//
// A Filter holds the leading k bits of every full
// entry, k = BitsFor(N) = bitlen(N)+10 (at least MinBits), so that at most
// about 1/1024 of absent keys get a "maybe", plus a 32-bit roaring bitmap
// of the first 4 bytes of every prefix entry (prefix entries are at least
// 4 bytes long, so every extension of a stored prefix hits it). When the
// entry count outgrows k (IsTooNarrowFor), the index builds a Wider filter
// that shares the prefix bitmap. Marshal and Unmarshal are roaring's
// portable format; Unmarshal validates what it reads and turns damage into
// an error wrapping store.ErrCorrupt.
//
// The full entries' values are held in one form at a time: the roaring64
// bitmap only while they are too sparse for the flat form (a new filter
// sized ahead of a load, a wider one being filled), then the flat form:
// the values sorted and bucketed by their leading bits (one offset pair and
// a short run of 16-bit values per probe, about 2.1 bytes a value against
// roaring64's 3.4..4.2), with an overlay of the values added since, merged into
// it as it grows. The flat form encodes to, and decodes from, the same
// roaring64 format, one 32-bit bitmap at a time, never the whole bitmap.
// BenchmarkFilter measures a probe of each form, BenchmarkFormsHeap their
// memory, BenchmarkForms the costs of adding, encoding and decoding.
//
// The filter knows hashes only, and nothing of Badger. Callers synchronise:
// the methods that add are writes, the others reads.
package filter
