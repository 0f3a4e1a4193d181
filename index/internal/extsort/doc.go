// Package extsort is the external sort of the index's bulk loads
// (index.DB.Load): any number of entries in bounded memory, sorted into
// key order with repeated keys removed, the first added winning.
//
// A Sorter gathers its input in two chunks of half of Config.Budget each:
// a key-only full entry as its 32 bytes, any other entry with the value
// Config.AppendValue encodes. A full chunk is sorted (a radix pass on the
// leading byte, then the buckets on every core by the second byte and by
// comparison) and de-duplicated in a goroutine that writes it as a sorted
// run to a temporary file in Config.Dir (RunPrefix*RunSuffix; Config.Room
// is asked for its bytes first) while the next chunk fills. The last
// chunk stays in memory unless the input spilled. Merge then reads every
// run in key order through a heap, the earliest run winning a key several
// hold, and yields each key with its tag (Config.FullTag, PrefixTag).
// Close removes the run files; RemoveRuns removes those a crash left.
//
// A run file is its magic ("uhrun\x00\x00\x01"), the number of key-only
// entries, the number of other entries and the byte length of their
// records (three big-endian uint64), the 32-byte keys, then the records
// (key length byte, key, uvarint value length, value), each part in key
// order. Runs live only as long as one load: the layout is not a stored
// format. A run that cannot be read back is an error naming the file.
//
// The package knows entries, hashes and files; nothing of Badger.
package extsort
