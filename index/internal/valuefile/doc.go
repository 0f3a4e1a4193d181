// Package valuefile stores variable-length values (URL or IRI text, caller
// data: opaque bytes to it) apart from the keys they belong to, in
// immutable files of zstd-compressed blocks, so that key lookups never read
// them. The key table (package keytable) writes one value file beside each
// key file that holds values, and refers to a value by its ordinal: the
// number of values written before it.
//
// # Format
//
// A value file (NNNNNN.values) is
//
//	header       64 bytes (see header.go): magic, version, the value,
//	             block and dictionary counts, the index's offset, a pairing
//	             number shared with its key file, a CRC-32C
//	blocks       each a zstd frame (or the decoded block itself: a stored
//	             block), then its CRC-32C seeded with the block's number
//	index        per block: file offset (u64), frame length (u32), decoded
//	             length (u32), values in the block (u32), its dictionary
//	             (u32: number + 1 in the list below; 0: none; 2^32-1:
//	             stored, not compressed, its frame length its decoded
//	             length)
//	dictionaries each a length (u32) and a zstd dictionary trained on
//	             values
//	CRC-32C      of the index and the dictionaries
//
// A file that holds a stored block is version 2 (Options.Stored: a read
// of one value then costs a pread and a checksum, not a decode); any other
// is version 1, as before stored blocks, so that readers of version 1
// still read it.
//
// A decoded block is uvarint n, n uvarint value lengths, then the n values
// one after the other. Integers are little-endian.
//
// A file's blocks may come from other files as they are (CopyBlocks: a
// merge of key files keeps the values of the files it merges without
// decoding them), each with the dictionary it was compressed with; a
// file's values are then runs, each in key order.
//
// # Reading
//
// Open reads and checks the header, the dictionaries and the block index
// (28 bytes a block in memory, a few hundredths of a byte a value);
// blocks are read on demand with pread and checked against their CRC before
// they are decoded: a mismatch is an error wrapping store.ErrCorrupt that
// names the file and the block, never a wrong value. A Cursor reads values
// in ascending ordinals (or in a few ascending runs at once) and decodes
// each block once; single reads go through a Cache of decoded blocks
// bounded by bytes.
//
// # Writing
//
// A Writer takes values in order (the key table writes them in key order,
// so that a sorted batch of reads decodes each block once) and cuts a block
// once its values reach the block size (8 KiB by default: a block is the
// unit a single read decodes). Without a dictionary given, it buffers its
// first values and trains one on them (dict.BuildZstdDict); files written
// later may reuse it (Writer options).
package valuefile
