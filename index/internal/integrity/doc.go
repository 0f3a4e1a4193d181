// Package integrity reads an index directory's Badger files without
// Badger, to find damage before Badger can lose data over it: Badger
// deletes every table its MANIFEST does not list, kills the process on a
// truncated table inside badger.Open, answers "absent" for a table block
// that fails its checksum, and replays a log only up to its first bad
// record (see index's TestBadgerDamageBehaviour).
//
//   - Inspect lists a directory and Check checks it before badger.Open:
//     the MANIFEST replays, every listed table is present and its index
//     opens (in the caller's goroutines, where a panic is recovered), no
//     table is unlisted (after a crash a writable Open
//     moves them to OrphanDir instead), the logs are damaged at most
//     where a crash tears them, a newest value log a power loss left
//     without its header gets it (older ones without one are damage), and
//     CheckKeyRegistry checks Badger's key
//     registry. Damage is an error wrapping store.ErrCorrupt that names
//     the files and ends with RecoverHint.
//   - A Guard verifies the checksums of every block of the tables an
//     index opened with, lazily (the tables of a key range, at most once
//     per process) and in parallel; once it is done a check is an atomic
//     load.
//   - WithTable, VerifyBlocks and ReadBlocks open a table file read-only
//     through a memory map, turning Badger's panics and faults into
//     errors; LogRecords, LogRecord and CheckLog read memtable and value
//     logs record by record (Recover uses them to copy what is readable).
//
// It knows Badger's file formats and nothing of the index's keys: what
// is a cache (the filter snapshot's records) the index says through
// Check's and CheckLog's isCache.
package integrity
