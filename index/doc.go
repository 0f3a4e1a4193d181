// Package index is the persistent store of urlhash: tens of millions of
// 32-byte identities (hashkey.Hash) in one Badger v4 database, with an
// in-memory roaring filter that answers most lookups of absent keys
// without reading the database. It knows hashes and bytes only, never
// URLs.
//
// # Basics
//
// Open a directory (created unless Options.ReadOnly or Options.MustExist;
// a non-empty directory holding no index is refused with
// store.ErrNotIndex) or an in-memory index, use it from any number of goroutines, and Close
// it:
//
//	db, err := index.Open(dir, nil)
//	...
//	added, err := db.Add(ctx, h, store.Value{})
//	ok, err := db.Has(ctx, h)
//	err = db.Close()
//
// A DB is a store.Backend, the interface package query works on, and
// speaks the store package's vocabulary (store.Entry, store.Value,
// store.Match, store.Stats; DetailedStats adds its filter's and Badger's own
// figures, index.Stats). Writes: Put, PutBatch and PutPrefix
// overwrite; Add and AddBatch add if absent (atomic with respect to every
// other write in the process: each key is reported new once), and AddKeys
// adds bare keys without an entry each (a seen-set's batches); VisitBatch
// (add if absent or due for a revisit); Delete and DeletePrefix; and
// Load for bulk imports (see Bulk loads). The batch writes sort and keep
// one entry per key, check which keys are stored (filter, then one ordered
// pass), admit the new keys to the filter, write, count; Load does the
// same on an external sort. Reads: Get, Has, HasBatch (one ordered iterator
// pass over the keys the filter lets through), Match (the full entry or
// the longest stored prefix entry a hash starts with), Scan by a bit
// prefix (half bytes allowed), Count, ForEach, Stats and Verify.
//
// Inside, DB keeps the locks, the filter and the counts, and one owner of
// placement (stores.go) holds the two stores, Badger and the key table,
// decides which of them holds an entry, looks keys up in one order and
// moves entries between them (see Key table). open.go lists, in order,
// the steps an Open takes to trust a directory. The mechanisms are
// internal packages: index/internal/filter (the membership filter, see
// Filter), index/internal/extsort (Load's external sort, see Bulk loads),
// index/internal/integrity (Badger's files read without Badger, see
// Integrity), index/internal/keytable (sorted key files, a delta and a
// log, see Key table) and index/internal/syncmark (the one format of both
// stores' sync marks, see Durability). What is left at the top level is
// the public API, the key and value encodings, the counts, the locks,
// backups, Verify and Recover.
//
// Errors are the store package's sentinels, possibly wrapped: use
// errors.Is. No Badger type or error escapes the package, except the expert
// Options.Badger. Conditions are told apart by error values and the
// index's own checks, never by Badger's message text (one exception:
// Badger refuses a damaged key registry with text alone, which
// isKeyRegistryError matches): "locked" comes from
// the index's own flock (urlhash.lock, taken before Badger's), "not closed
// cleanly" and "damaged" from the checks of the directory before Badger
// opens it (see Integrity), and TestBadgerBehaviour and
// TestBadgerDamageBehaviour pin the Badger behaviour the package relies
// on.
//
// # Keyspaces
//
// Every Badger key starts with a one-byte tag:
//
//	0x00 name         metadata: "format" (uvarint FormatVersion),
//	                  "profile", "snapshot" (filter header), "filter/"+u32
//	                  (filter chunks of version 1 snapshots, read, no
//	                  longer written), "record/"+key (idempotency
//	                  records, see Record: opaque bytes with a Badger TTL,
//	                  outside counts, Verify and backups)
//	0x01 hash[32]     full entries
//	0x02 prefix[4:31] prefix entries (Safe Browsing prefixes, short hashes)
//
// A value is empty (zero bytes, the common case) or 0x01, uvarint
// len(Text), Text, Data (see store.Value); a value that records seen times
// is 0x02, varint FirstSeen, uvarint LastSeen-FirstSeen (unix seconds),
// then uvarint len(Text), Text, Data. An expiry is not in the value: it is
// the Badger entry's own ExpiresAt. testdata/format.golden pins these
// encodings; indexes written before 0x02 existed read unchanged. Keys are sorted, so every hash starting with a given short or
// very-short hash is found by a seek in the full keyspace; no second copy
// is kept.
//
// # Recency and expiry
//
// VisitBatch is add-if-absent with a clock (the wall clock; the package's
// tests and the module's, through internal/clockhook, set a fake one; no
// Option does): an entry is new
// when absent, stored without times, or last reported new revisitAfter
// ago or longer; it runs under the same stripe locks as AddBatch, so each
// sighting is reported new once among concurrent callers. An entry with
// store.Value.Expires is written with Badger's ExpiresAt: Badger hides it
// once the wall clock reaches it and its compactions drop it; every read
// and every existence check of a write also applies the index's clock (to
// the second), so a fake clock governs tests. The filter keeps an expired
// key's bits ("maybe") until it is rebuilt, never "absent" for a live one.
// The kept counts count versions: an expired entry stays counted (Badger
// drops it only at a compaction) until a key-only pass counts again, and
// a count per expiry second of the versions with an expiry, kept by every
// write path (each existence check also reads the old expiry), gives the
// live and expiring counts without reading a key: live = kept - expired
// by the index's clock. Seconds more than an hour past are folded into one
// count, so Stats costs the distinct expiry seconds from an hour ago on
// (86,400 for a day of TTLs), never the entries. Verify compares the live
// counts with the keys.
// DeletePrefix deletes a key range with ranged deletes under every stripe
// lock (writers wait, readers do not), keeping the counts exact.
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
// until the next rebuild (package index/internal/filter). Measured
// (BenchmarkIndex; TestFilterFigures in the filter package):
// about 2.1 B/entry at 0.06-0.1% false positives; roaring over the first 4
// bytes costs 6 B/entry at 1M keys and roaring64 over the 8-byte
// very-short hash 22 B/entry (far more in memory).
//
// Close writes the filter in roaring's portable format, with the counts,
// the expiry counts and the Badger version it reflects, in one
// transaction. Open loads it when that version is still the newest in the
// database, validating the bitmaps and a CRC, and otherwise (a crash, or
// writes by another program) rebuilds it, the counts and the expiry counts
// by key-only iteration (a snapshot without expiry counts in an index that
// holds entries with an expiry, as an earlier version wrote, likewise).
// A current snapshot's counts are taken at Open and its filter loads in
// the background (2.1 bytes a key, seconds at 100M keys), the filter being
// only ever a shortcut: meanwhile a lookup that finds its key in the
// stores answers at once, one that does not waits for the filter, Stats
// gives the snapshot's figures, and writes wait (they admit their keys to
// the filter first). A rebuild at Open (no current snapshot) of a key
// table of 2^20 keys or more runs in the background too (a pass over every
// key: about 0.4 s a million): meanwhile every lookup answers from the
// stores alone, verifying what it does not find, and writes and Stats wait
// for the pass, and so does Close on a writable index (to write the
// snapshot the pass makes). A Close that writes nothing leaves the
// snapshot current.
//
// # Bulk loads
//
// Load takes any number of entries in bounded memory (Options.LoadMemory,
// package index/internal/extsort doing the sort;
// 256 MiB by default; the CLI's import --memory sets it and the Go memory
// limit): it gathers the input in two chunks of half of it each, a
// key-only full entry as its 32 bytes and any other entry with its
// encoded value, and checks every entry as it comes. A full chunk is
// sorted (a radix pass on the leading 16 bits, then the buckets on every
// core) and de-duplicated, the first of repeated keys winning, in a
// goroutine that writes it as a sorted run to a temporary file in the
// index directory (urlhash.load-*.run: the same disk, under the
// free-space gate) while the next chunk fills. The last chunk stays in
// memory. Only when the input has ended, holding every other operation
// off, does Load write to the index: it merges the runs (a heap; the
// earliest run wins a key several hold), checks each key against the
// filter and then against one forward pass of an iterator over the
// stored keys (a few Next calls, or a Seek when the next stored key is
// further on), admits the new keys to the filter in batches before
// Badger sees them, and writes them with Badger's StreamWriter in key
// order. A bad entry therefore fails the load with nothing written into
// the index, and run files are removed when Load returns; a load killed
// by a crash leaves run files that the next writable Open removes (only
// names matching urlhash.load-*.run; a read-only Open changes nothing).
//
// Into an index with no entries whose tables are empty (a new index: its
// metadata is still in the memtable), a load of 100 MiB of tables or more
// (about 2.5 million keys) empties the tree and streams the metadata (in
// a table of its own) and the entries into the last level, where Badger
// keeps its data: there is nothing left to compact, and the first command
// after the import is as fast as the next ones. (Below that size level 0
// would compact straight into the last level, which drops the deletion
// markers incremental backups carry; a smaller load goes above, and
// Badger's later rewrite of it costs little.)
// (StreamWriter's incremental mode would put them one level above a
// table holding only the metadata, and the first writable Open would
// rewrite them all.) Should the process die in that window, the index
// reopens without its format and profile records, which the next Open
// writes again; it held no entries. Into a non-empty index the new tables
// go one level above the existing ones (Badger merges them down later,
// as it would any write), after a reopen that flushes the memtables when
// they hold data; an in-memory index takes a write batch.
//
// Badger maps every table file it writes and the pages stay resident, so
// on Linux Load takes the complete tables' pages out of the process's
// resident set as it goes (madvise; they stay in the page cache). The
// StreamWriter builds tables of BaseTableSize x 32 = 16 MiB in memory.
// Measured with the CLI (go run ./bench/scale, 2 cores, other work on the
// machine): 10 million random hashes import in 8.3 s with a peak RSS of
// 737 MiB, 30 million in 25 s (778 MiB), 100 million in 102 s (1009 MiB:
// then the filter alone takes 340 MiB of heap, 206 MiB serialized).
//
// # Key table
//
// A new index (unless Options.NoKeyTable), and one upgraded with
// Options.KeyTable, keeps its key-only full entries — no text, data, seen
// times or expiry: a seen-set's — in DIR/keytable rather than in Badger:
// immutable files of sorted 32-byte keys with a bucket-offset array over
// their leading bits (a lookup is one or two reads of a mapped file), a
// bounded in-memory delta of recent changes, and an append-only log of
// checksummed entries whose fsyncs are shared between concurrent writers.
// A full delta is merged into a new file in the background. Deletions are
// tombstones until a merge reaches the oldest file. About 33 bytes an
// entry on disk, against 53 in Badger.
//
// One owner decides placement (stores): a key-only full entry lives in
// the key table, whichever write stores it (Put, Add, AddKeys, Load);
// every other entry, prefix entries, the metadata and the idempotency
// records live in Badger. A key is stored in one of the two. Lookups ask
// the key table, then Badger. An entry that gains a value moves to
// Badger, one that loses it moves back: a move writes the entry at its
// new home, then deletes it from the old one. A key both stores hold (a
// crash, or a failed write, between the two) is Badger's: the next
// writable Open finishes a move into Badger and takes back a move out of
// it (reconciliation, a step of Open, when the last process did not close
// cleanly), Close finishes the moves its own process left, a read-only
// Open answers Badger's copy without writing, and Verify reports the
// copy. Reads, scans, counts, Verify and Recover see both stores, in key
// order. Load writes a load's new key-only entries straight into one new
// file. The filter stays in front of both and its snapshot covers both
// (the first key-table write after a snapshot marks it stale in Badger,
// durably). An index with a key table records format 2, which older
// programs refuse; one without keeps format 1. Its backups are version 3
// (see Backup). An idempotency record of a batch of key-only entries
// rides in the key table's log entry with the keys (see Record).
// Recovery: the log is replayed at Open; an entry cut short or failing
// its checksum at the end of the newest segment is a torn write never
// acknowledged and is dropped; damage anywhere else, a missing file or a
// checksum mismatch is store.ErrCorrupt naming the file. The log's
// entries are numbered, and keytable/SYNCED (a sync mark, the format
// urlhash.synced shares) holds the last one an fsync covered: a log that
// leaves a gap or ends before it lost acknowledged writes (a segment cut
// or removed after a crash), and Open refuses the index, as it does when
// Badger's memtable logs lost them (urlhash.synced), naming the segment
// and urlhash recover; removing SYNCED accepts the loss.
// Recover copies the key table's keys and the idempotency records of its
// log.
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
// import again (already present keys are counted as present). Each store
// records, in a sync mark of one shared format (urlhash.synced for
// Badger, keytable/SYNCED for the key table; package
// index/internal/syncmark), the last write an fsync made durable, and an
// Open that finds acknowledged writes missing refuses the index (see Key
// table).
//
// # Integrity
//
// Never lose, never misreport: damage is an error that names it, nothing
// is deleted that the caller did not ask to delete, a full disk is an
// error, and the filter is a cache (the checks of files are package
// index/internal/integrity; the index calls them). Badger alone falls short of each
// (TestBadgerDamageBehaviour): it deletes every table its MANIFEST does
// not list, also when opened read-only and when the MANIFEST is missing or
// cut short; a truncated table kills the process inside badger.Open; a
// table block that fails its checksum reads as "not here", and an
// iteration stops at it without an error; damaged uncompressed data can
// panic in the caller's goroutine; a full disk is SIGBUS, its files being
// sparse and written through memory maps. So the index:
//
//   - Checks the directory before Badger opens it, read-only or
//     writable, without writing to it: data files without a MANIFEST, a
//     MANIFEST that does not replay, a listed table missing, a table file
//     not listed, a table whose footer and index do not open (each table's
//     index is opened, not its data: 3 ms for ten million entries in 46
//     tables, of a 33 ms read-only Open). Each is an error wrapping
//     store.ErrCorrupt that names the
//     files and says to run "urlhash recover --db DIR --to NEW" (Recover).
//     Open never deletes a file that holds data. After a crash (memtable
//     logs or Badger's LOCK pid file left), a writable Open moves the
//     tables the MANIFEST does not list (merged compaction inputs, or
//     outputs it had not recorded: their data is in the listed tables or
//     the logs) into OrphanDir rather than let Badger delete them, and
//     removes memtable logs of zero bytes (created, never written), which
//     Badger cannot open past.
//   - Refuses a read-only Open of an index a process did not close with
//     store.ErrNeedsRecovery: a writable Open recovers it, after checking
//     that each log is damaged at most where a crash tears it (its last
//     record; Badger would cut a log at its first bad record).
//   - Verifies every table before a writable Open: Badger compacts as soon
//     as it opens writable, and a compaction keeps what it could read of a
//     damaged table and deletes the table (seen: 64 bytes of damage cost
//     290,000 entries). About 0.2 s per ten million entries, once per
//     writer.
//   - Verifies the checksum of every table block read from disk (Badger's
//     OnBlockRead, always on), and of value-log records. Because Badger
//     still answers "absent" for a damaged block, a lookup the filter lets
//     through but Badger does not find (Get, Has, HasBatch, Match, the
//     existence checks of Add*, Delete and Load) verifies every block of
//     the tables whose key range covers the key, each table at most once
//     per process: a damaged one turns the answer into an error naming
//     the file. The filter answers most absent keys before Badger, at no
//     cost; about 0.1% of them (its false positives) pay for the check,
//     which is an atomic load once the tables they touch are verified.
//     Scan, ForEach, Count and filter rebuilds verify the tables of their
//     key range before they start, so that no partial result is ever a
//     success; a Scan with a limit verifies the range it read after it (fn
//     may have seen entries before the error). A writable index verifies
//     every table before its first write, because the compactions that
//     writes lead to (Close compacts too) read damaged tables without an
//     error and write what they could read as if it were all (0.2 s for
//     ten million entries, about 0.5 s/GiB from the page cache). Table files
//     never change once written; the tables this process writes are
//     trusted until Verify.
//   - Checks the value log too. Badger answers a value it cannot read
//     from it (a record that fails its checksum) with an empty value and
//     no error; every value the index stores that is not empty is
//     encoded, so an empty answer for a value that has a size is an error
//     wrapping store.ErrCorrupt naming the damaged value-log file. A
//     writable Open would cut the newest value log at its first bad
//     record: it is refused when that would lose more than filter
//     snapshot chunks.
//   - Turns a panic in Badger's code, in any exported method, into an
//     error wrapping store.ErrCorrupt that names the damaged table (it
//     verifies the tables of the key range to find it).
//   - Verify checks everything it can (MANIFEST against the files, every
//     block of every table, every value-log record, every key and value,
//     the counts, the filter) and lists every problem found, not the
//     first.
//   - Recover copies every readable entry of a damaged index into a new
//     one, never writing to the damaged directory, and reports what it
//     could not read (RecoverReport).
//   - Rebuilds a filter snapshot that is missing, stale or damaged; it is
//     never a reason to refuse an index. The snapshot's encoding is in the
//     file filter.snapshot, written (temporary file, fsync, rename, fsync
//     of the directory) before its header in Badger names its size, state
//     and CRC: a crash between the two leaves a pair that does not match,
//     which Open rebuilds. It is read with read(), not mapped, so it
//     leaves no pages in the process's resident set. A read-only index rebuilds it in
//     memory and changes no byte of its directory (it takes the shared
//     lock and writes no snapshot), also on a read-only filesystem.
//   - Refuses a write (Put*, Add*, Delete, Load, SetProfile; Close's
//     snapshot is skipped) with store.ErrDiskFull, naming the directory
//     and the bytes free and needed, while the free space would fall
//     below a reserve that lets Badger flush, compact and close:
//     (NumMemtables+1) x 1.25 MemTableSize + 2 x ValueLogFileSize (64 MiB
//     by default) + max(10% of the tables, 64 MiB), 312 MiB at least with
//     the defaults (5 memtables of 16 MiB; 222 MiB with a key table's
//     memtables of 4 MiB). The reserve is sound while the
//     index is the only writer of its filesystem. Another process filling it is read within 20 ms,
//     and Badger's memory-mapped logs get their blocks (fallocate) at each
//     reading, so that appending to them never faults (SIGBUS); a flush or
//     compaction at that moment still may: give a large index its own
//     filesystem or quota.
//
// Limits. Only an "absent" answer is verified: a damaged block of a newer
// table can hide a newer version (a Put over an entry, a Delete) of a key
// an older table still holds, and the answer is then the older version.
// Damage that appears on disk while a writer runs can still be compacted
// away silently; Verify finds it while it is there. Tables Badger encrypts
// (Options.Badger with an encryption key) are not verified by the index.
//
// # Caveats
//
//   - Load needs free disk space for its runs (32 bytes a key-only entry)
//     besides the new tables, and holds every other operation off while
//     it merges and writes (not while it gathers and sorts). Into a
//     non-empty index it first flattens level 0 (and, if this process
//     wrote since Open, reopens Badger to flush its memtables) so the new
//     sorted tables can go on a level above the old ones; this works
//     around a level-overlap bug in Badger 4.9.6's incremental
//     StreamWriter.
//   - Verify, Load and Close take the index exclusively: lookups wait
//     (Load and Verify also wait for a filter growth in progress).
//   - Tables are not compressed by default (about 53 B/entry on disk for
//     keys without values): hash keys are random, and a codec would cost
//     a decompression on every present-key lookup whose block is not in
//     the block cache. Options.Compression chooses snappy (about 42
//     B/entry) or zstd (about 40 B/entry, slower loads).
//   - Memory: the filter (about 2 B/entry), the block cache and the index
//     cache (64 MiB each by default) and Badger's memtables (up to 5 x
//     64 MiB while writing).
//   - One process at a time: a second Open of the directory, in this
//     process or another, fails with store.ErrLocked.
package index
