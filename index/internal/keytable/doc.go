// Package keytable stores the index's full entries: 32-byte keys, each
// with fixed-width columns (first seen, last seen, expiry) and a value
// (variable bytes, opaque to the table), in immutable sorted key files, a
// bounded in-memory delta of recent changes and an append-only log that
// makes every change durable, shared between concurrent writers (group
// commit). When the delta is full it is frozen and merged into a new key
// file in the background, beside the writers, in one walk of its sources.
// The index package owns the table; it keeps its filter in front of it.
//
// # Entries
//
// A key's record is a row: the key, its columns (Cols: unix seconds, 0 for
// unset) and a reference to its value. A key-only entry costs what a bare
// key did before columns: 32 bytes a key in a file of key-only rows, and
// the same lookup. Columns cost only in the files that hold them (4 bytes
// a column, as an offset from the file's base, when its times span less
// than 136 years); a lookup reads a row's columns with its key, in the
// same pread. Values live in value files (package valuefile, one beside
// each key file that has values: NNNNNN.values), compressed in blocks
// (zstd, without a dictionary, of Options.ValueBlockSize: see
// DefaultValueBlockSize), or stored uncompressed (Options.StoredValues),
// written in key order; lookups never read them,
// GetBatch reads them in ordinal order and ScanEntries and rewriting
// merges through windows (see valueWindow), each block once. A merge
// copies the blocks of files it keeps as they are, so a file merged many
// times holds its values in as many runs of ordinals.
//
// # Values and their garbage
//
// A merge keeps the value files of the key files it merges as they are:
// it copies their blocks (compressed) into its own value file and writes
// the merged delta's values after them, so that a value is compressed
// once, not at every merge of its key. A value replaced, deleted or
// expired stays in its value file until a merge finds the file's rows
// refer to less than half its values (the key file's header counts the
// values its rows refer to, the value file's the values it holds); that
// merge decodes the values still referred to and compresses them again,
// and drops the rest. A value file goes with its key file, once the
// manifest no longer lists it.
//
// Writes (Write, and Add for key-only batches) carry key-only adds (if
// absent), deletes, and sets (Set: columns and a value, or KeepValue to
// keep the value the key has), with opaque bytes the caller wants durable
// with them (an idempotency record), in one log record. Each write reports
// what it found (Prev), so that the caller keeps exact counts.
//
// # Expiry
//
// The table has a clock (Options.Now). A record whose expiry second has
// come is absent to every lookup, scan and write (an add replaces it), but
// stays in the table, counted by Len, until a merge drops it, reports it
// (Options.Expired: counts by expiry second) and writes a file without it;
// or until a write replaces or deletes it, which reports it in its Prev. A
// write over an expired record that the running merge drops leaves it to
// the merge: each record leaves the count once.
//
// # Deletes and the order of sources
//
// A key is in at most one place that decides: the newest source (delta,
// frozen delta, then files from newest to oldest) that holds it, as a row
// or a tombstone. A row written over an older row comes with a tombstone
// that hides the older one, so that the records are the files' rows less
// their tombstones; tombstones stay until a merge reaches the oldest file.
//
// # Checksums
//
// A key file's rows are in pages of 16, each with a CRC-32C that every
// read checks (the lookup's own pread covers it); its header, bucket array
// and tombstones are checked at open, a value file's header, dictionary
// and block index too, and each value block before it is decoded. A
// mismatch is an error wrapping store.ErrCorrupt that names the file,
// never a wrong "absent" or a wrong value. Merges check every page, block
// and version 1 file (whose keys have one checksum) they read, and fail
// on damage: they never write damaged input into a new file.
//
// # Durability
//
// A change is in the operating system's hands when Write returns and
// durable once SyncTo returns. Every file the table writes is fsynced
// before anything refers to it (a key file and its value file before the
// manifest that lists them, a log segment before a newer one is written),
// and the directory after files are created or renamed. SYNCED records the
// last record a sync made durable: a log that lost it after a crash makes
// Open refuse the table (ErrLost) and name what is lost.
//
// # Formats
//
// Key files of version 1 (bare keys, one checksum) and log segments of
// versions 1 and 2 (key-only records) are read; merges rewrite version 1
// files in version 2, and a writable Open starts one when a table holds
// any. See format.go, log.go, manifest.go, synced.go and package valuefile.
package keytable
