package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// FormatVersion is the on-disk format this package writes and the newest it
// reads.
const FormatVersion = 1

// Prefix entry lengths.
// Keyspace tags: the first byte of every Badger key the index writes.
const (
	tagMeta   = 0x00
	tagFull   = 0x01
	tagPrefix = 0x02
)

// Metadata keys (after tagMeta).
const (
	metaFormat   = "format"   // uvarint FormatVersion
	metaProfile  = "profile"  // profile bytes
	metaSnapshot = "snapshot" // snapshotHeader
	metaFilter   = "filter/"  // + 4-byte big-endian chunk number
)

const fullKeyLen = 1 + hashkey.Size

func fullKey(h *hashkey.Hash) [fullKeyLen]byte {
	var k [fullKeyLen]byte
	k[0] = tagFull
	copy(k[1:], h[:])
	return k
}

func prefixKey(p []byte) []byte {
	k := make([]byte, 1+len(p))
	k[0] = tagPrefix
	copy(k[1:], p)
	return k
}

func metaKey(name string) []byte { return append([]byte{tagMeta}, name...) }

func filterChunkKey(i uint32) []byte {
	return binary.BigEndian.AppendUint32(metaKey(metaFilter), i)
}

// valueVersion is the first byte of a non-empty encoded store.Value.
const valueVersion = 0x01

// appendValue encodes v: nothing for an empty value, else valueVersion,
// uvarint len(Text), Text, Data.
// valueLen is the length of v's encoding.
func valueLen(v store.Value) int {
	if v.IsZero() {
		return 0
	}
	n := 2 // the version byte and the length's last byte
	for x := len(v.Text); x >= 0x80; x >>= 7 {
		n++
	}
	return n + len(v.Text) + len(v.Data)
}

func appendValue(b []byte, v store.Value) []byte {
	if v.IsZero() {
		return b
	}
	b = append(b, valueVersion)
	b = binary.AppendUvarint(b, uint64(len(v.Text)))
	b = append(b, v.Text...)
	return append(b, v.Data...)
}

// decodeValue decodes b; the returned slices alias b.
func decodeValue(b []byte) (store.Value, error) {
	if len(b) == 0 {
		return store.Value{}, nil
	}
	if b[0] != valueVersion {
		return store.Value{}, fmt.Errorf("%w: value version %d", store.ErrFormat, b[0])
	}
	n, w := binary.Uvarint(b[1:])
	if w <= 0 || n > uint64(len(b)-1-w) {
		return store.Value{}, fmt.Errorf("%w: bad value length", store.ErrCorrupt)
	}
	rest := b[1+w:]
	v := store.Value{Text: rest[:n:n], Data: rest[n:]}
	if len(v.Text) == 0 {
		v.Text = nil
	}
	if len(v.Data) == 0 {
		v.Data = nil
	}
	return v, nil
}

// snapshotHeader describes the persisted filter and counts, and the Badger
// version they reflect.
type snapshotHeader struct {
	State         uint64 // Badger max version once the snapshot is committed
	Entries       uint64
	PrefixEntries uint64
	Bits          uint8 // filter k
	Chunks        uint32
	FullLen       uint64 // bytes of the full-entry bitmap (roaring64 portable)
	ShortLen      uint64 // bytes of the prefix-entry bitmap (roaring portable)
	CRC           uint32 // CRC-32C of the concatenated bitmaps
}

const snapshotMagic = "uhsnap\x01"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *snapshotHeader) appendBinary(b []byte) []byte {
	b = append(b, snapshotMagic...)
	b = binary.BigEndian.AppendUint64(b, s.State)
	b = binary.BigEndian.AppendUint64(b, s.Entries)
	b = binary.BigEndian.AppendUint64(b, s.PrefixEntries)
	b = append(b, s.Bits)
	b = binary.BigEndian.AppendUint32(b, s.Chunks)
	b = binary.BigEndian.AppendUint64(b, s.FullLen)
	b = binary.BigEndian.AppendUint64(b, s.ShortLen)
	return binary.BigEndian.AppendUint32(b, s.CRC)
}

const snapshotHeaderLen = len(snapshotMagic) + 8*3 + 1 + 4 + 8*2 + 4

func (s *snapshotHeader) decode(b []byte) error {
	if len(b) != snapshotHeaderLen || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return fmt.Errorf("%w: snapshot header", store.ErrFormat)
	}
	b = b[len(snapshotMagic):]
	s.State = binary.BigEndian.Uint64(b)
	s.Entries = binary.BigEndian.Uint64(b[8:])
	s.PrefixEntries = binary.BigEndian.Uint64(b[16:])
	s.Bits = b[24]
	s.Chunks = binary.BigEndian.Uint32(b[25:])
	s.FullLen = binary.BigEndian.Uint64(b[29:])
	s.ShortLen = binary.BigEndian.Uint64(b[37:])
	s.CRC = binary.BigEndian.Uint32(b[45:])
	if s.Bits < minFilterBits || s.Bits > maxFilterBits {
		return fmt.Errorf("%w: filter bits %d", store.ErrCorrupt, s.Bits)
	}
	return nil
}
