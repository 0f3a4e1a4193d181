package valuefile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/urlhash/urlhash/store"
)

// The header, 64 bytes:
//
//	 0  magic "UHVALUES"
//	 8  version byte, 7 zero bytes
//	16  values (u64)
//	24  blocks (u64)
//	32  dictionaries (u32)
//	36  4 zero bytes
//	40  offset of the block index (u64); the dictionaries follow it
//	48  pairing number (u64): the key file written with this file holds the
//	    same, so that a file swapped or left from another table is refused
//	56  CRC-32C of bytes 0..56 (u32)
//	60  end magic "UHVF"
const (
	magic    = "UHVALUES"
	endMagic = "UHVF"
	// A file that holds a stored (uncompressed) block is version 2, any
	// other version 1, so that it stays readable by readers of version 1;
	// version is the newest read.
	versionCompressed = 1
	versionStored     = 2
	version           = versionStored
	HeaderSize        = 64
	// indexEntry is the size of a block's index entry.
	indexEntry = 24
	// MaxValues bounds the values of one file: the key table refers to a
	// value by its ordinal plus one in 32 bits.
	MaxValues = 1<<32 - 2
	// maxBlock bounds a block's decoded length (and what a damaged index
	// can make a reader allocate): a value is at most 64 MiB (the key
	// table's log record limit), and a block holds one value past its
	// target size.
	maxBlock = 80 << 20
	// maxDict bounds a dictionary's length, maxDicts their number.
	maxDict  = 1 << 20
	maxDicts = 64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the decoded header of a value file.
type header struct {
	version byte
	values  uint64
	blocks  uint64
	dicts   uint32
	index   uint64
	pair    uint64
}

func (h *header) appendTo(b []byte) []byte {
	start := len(b)
	b = append(b, magic...)
	b = append(b, h.version, 0, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, h.values)
	b = binary.LittleEndian.AppendUint64(b, h.blocks)
	b = binary.LittleEndian.AppendUint32(b, h.dicts)
	b = append(b, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, h.index)
	b = binary.LittleEndian.AppendUint64(b, h.pair)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
	return append(b, endMagic...)
}

// decodeHeader decodes and checks a header: magic, version, checksum and
// bounds against the file's size.
func decodeHeader(b []byte, size int64) (header, error) {
	var h header
	switch {
	case len(b) < HeaderSize || size < HeaderSize:
		return h, fmt.Errorf("%w: %d bytes, shorter than a header", store.ErrCorrupt, size)
	case string(b[:8]) != magic || string(b[60:64]) != endMagic:
		return h, fmt.Errorf("%w: not a value file (bad magic)", store.ErrCorrupt)
	case b[8] > version:
		return h, fmt.Errorf("%w: value file version %d, this program reads up to %d", store.ErrFormat, b[8], version)
	case b[8] == 0:
		return h, fmt.Errorf("%w: value file version %d", store.ErrCorrupt, b[8])
	case crc32.Checksum(b[:56], castagnoli) != binary.LittleEndian.Uint32(b[56:]):
		return h, fmt.Errorf("%w: value file header checksum mismatch", store.ErrCorrupt)
	}
	h.version = b[8]
	h.values = binary.LittleEndian.Uint64(b[16:])
	h.blocks = binary.LittleEndian.Uint64(b[24:])
	h.dicts = binary.LittleEndian.Uint32(b[32:])
	h.index = binary.LittleEndian.Uint64(b[40:])
	h.pair = binary.LittleEndian.Uint64(b[48:])
	if h.values > MaxValues || h.blocks > h.values || h.dicts > maxDicts ||
		h.index < HeaderSize || h.index > uint64(size) || (uint64(size)-h.index)/indexEntry < h.blocks {
		return h, fmt.Errorf("%w: value file header out of range (values %d, blocks %d, dictionaries %d, index at %d of %d bytes)",
			store.ErrCorrupt, h.values, h.blocks, h.dicts, h.index, size)
	}
	return h, nil
}

// blockCRC returns the checksum of block number i's frame: its CRC-32C
// seeded with the block's number (so that a block read from elsewhere in
// the file fails it).
func blockCRC(i uint32, frame []byte) uint32 {
	return crc32.Update(i*0x9e3779b9+1, castagnoli, frame)
}
