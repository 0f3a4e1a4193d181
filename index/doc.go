// Package index is the persistent store of urlhash: tens of millions of
// 32-byte identities (hashkey.Hash) in one Badger v4 database, with an
// in-memory roaring filter that answers most lookups of absent keys
// without reading the database. It knows hashes and bytes only, never
// URLs.
//
// # Basics
//
// Open a directory (created unless Options.ReadOnly or Options.MustExist)
// or an in-memory index, use it from any number of goroutines, and Close
// it:
//
//	db, err := index.Open(dir, nil)
//	...
//	added, err := db.Add(h, store.Value{})
//	ok, err := db.Has(h)
//	err = db.Close()
//
// A DB is a store.Backend, the interface package query works on, and
// speaks the store package's vocabulary (store.Entry, store.Value,
// store.Match, store.Stats). Writes: Put, PutBatch and PutPrefix
// overwrite; Add and AddBatch add if absent (atomic with respect to every
// other write in the process: each key is reported new once); Delete; and
// Load for bulk imports (sorted, written as Badger tables with its
// StreamWriter, also into a non-empty index). Load and the batch writes
// share one write path: sort and keep one entry per key, check which keys
// are stored (filter, then one ordered pass), admit the new keys to the
// filter, write, count. Reads: Get, Has, HasBatch (one ordered iterator
// pass over the keys the filter lets through), Match (the full entry or
// the longest stored prefix entry a hash starts with), Scan by a bit
// prefix (half bytes allowed), Count, ForEach, Stats and Verify.
//
// Errors are the store package's sentinels, possibly wrapped: use
// errors.Is. No Badger type or error escapes the package, except the expert
// Options.Badger. Conditions are told apart by error values, never by
// Badger's message text: "locked" comes from the index's own flock
// (urlhash.lock, taken before Badger's), and TestBadgerBehaviour pins the
// Badger behaviour the package relies on.
//
// # Keyspaces
//
// Every Badger key starts with a one-byte tag:
//
//	0x00 name         metadata: "format" (uvarint FormatVersion),
//	                  "profile", "snapshot" (filter header), "filter/"+u32
//	                  (filter chunks)
//	0x01 hash[32]     full entries
//	0x02 prefix[4:31] prefix entries (Safe Browsing prefixes, short hashes)
//
// A value is empty (zero bytes, the common case) or 0x01, uvarint
// len(Text), Text, Data (see store.Value). testdata/format.golden pins these
// encodings. Keys are sorted, so every hash starting with a given short or
// very-short hash is found by a seek in the full keyspace; no second copy
// is kept.
//
// # Filter
//
// The filter is a roaring64 bitmap of the leading k bits of every full
// entry, k = bitlen(N)+10 (at least 20), so that at most about 1/1024 of
// absent keys get a "maybe", plus a 32-bit roaring bitmap of the first 4
// bytes of every prefix entry (prefix entries are at least 4 bytes long, so
// every extension of a stored prefix hits it). When the entry count
// outgrows k, a wider filter (for twice the entries) is built in the
// background by key-only iteration of a snapshot, while writers add their
// keys to both filters and lookups use the old one. Deleting leaves the deleted key's bits set ("maybe")
// until the next rebuild. Measured (BenchmarkIndex, TestFilterFigures):
// about 2.1 B/entry at 0.06-0.1% false positives; roaring over the first 4
// bytes costs 6 B/entry at 1M keys and roaring64 over the 8-byte
// very-short hash 22 B/entry (far more in memory).
//
// Close writes the filter in roaring's portable format, with the counts and
// the Badger version it reflects, in one transaction. Open loads it when
// that version is still the newest in the database, validating the
// bitmaps and a CRC, and otherwise (a crash, or writes by another program)
// rebuilds it by key-only iteration.
//
// # Durability
//
// Writes go to Badger's write-ahead log without fsync (unless
// Options.SyncWrites): they survive the process being killed, because the
// log is in the operating system's page cache, and they reach the disk when
// Sync, Close or Load returns. Load's tables are fsynced before it returns.
// A process killed in the middle of writes (tested with SIGKILL) leaves an
// index that opens, rebuilds its filter and counts, verifies, holds every
// write acknowledged by a returned Sync, Close or Load, and takes the same
// import again (already present keys are counted as present).
//
// # Caveats
//
//   - Load keeps the whole input in memory to sort it (about 40 bytes per
//     entry plus values) and holds every other operation off while it
//     runs. Into a non-empty index it first flattens the LSM tree (and, if
//     this process wrote since Open, reopens Badger to flush its
//     memtables) so the new sorted tables can go on a level above the old
//     ones; this works around a level-overlap bug in Badger 4.9.6's
//     incremental StreamWriter.
//   - Verify, Load and Close take the index exclusively: lookups wait
//     (Load and Verify also wait for a filter growth in progress).
//   - Tables are Snappy-compressed (about 42 B/entry on disk for keys
//     without values); a present-key lookup whose block is not in the
//     block cache pays a decompression. Options.Badger can choose ZSTD
//     (about 40 B/entry, slower loads) or no compression (about 54
//     B/entry).
//   - Memory: the filter (about 2 B/entry), the block cache and the index
//     cache (64 MiB each by default) and Badger's memtables (up to 5 x
//     64 MiB while writing).
//   - One process at a time: a second Open of the directory, in this
//     process or another, fails with store.ErrLocked.
package index
