// Package syncmark is the one format of the index's sync marks: the small
// files in which a store records, after an fsync, the last write that
// fsync made durable, so that an Open can tell acknowledged writes that
// went missing (a log deleted or cut) from writes never acknowledged.
// Badger's side of the index writes DIR/urlhash.synced, the key table
// DIR/keytable/SYNCED; both are Marks in this format.
//
// A mark is 28 bytes, written in place (one sector):
//
//	"UHSYNC02"   magic and version
//	uint64 Seg   the log segment holding write Seq (0: the store's log has
//	             no segments of its own)
//	uint64 Seq   the number of the last write made durable
//	uint32       CRC-32C of the 24 bytes before
//
// all big-endian. Marks written before this format still read: Badger's
// side wrote "UHSYNC01", Seq and the CRC big-endian (20 bytes), the key
// table "UHKTSYN1", Seg, Seq and the CRC little-endian (28 bytes). An
// empty file (created, never written) is the zero Mark: nothing
// acknowledged yet.
package syncmark
