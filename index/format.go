package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/store"
)

// FormatVersion is the newest on-disk format this package reads and
// writes: 3 for an index with a key table (see Options.KeyTable), which
// holds every full entry with its values; 1 for one without (which it
// keeps recording, so that older programs still read it). An index of
// format 2 (a key table of key-only entries, the others in Badger) is
// read as it is and upgraded to 3 by a writable Open.
const FormatVersion = formatValues

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
	metaExpiry   = "expiry"   // expiryCounts.encode, written with the snapshot
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

// Value encodings: the first byte of a non-empty encoded store.Value.
// Expires is not part of the value: it is the Badger entry's ExpiresAt.
const (
	// valueVersion: uvarint len(Text), Text, Data.
	valueVersion = 0x01
	// valueTimes: varint FirstSeen, uvarint LastSeen-FirstSeen (unix
	// seconds), then as valueVersion.
	valueTimes = 0x02
)

// encodes reports whether v has an encoding: text, data or times (a plain
// set entry, expiring or not, stores zero bytes).
func encodes(v *store.Value) bool {
	return len(v.Text) > 0 || len(v.Data) > 0 || v.HasTimes()
}

// valueLen is the length of v's encoding.
func valueLen(v store.Value) int {
	if !encodes(&v) {
		return 0
	}
	n := 1 + uvarintLen(uint64(len(v.Text))) // the version byte, the text's length
	if v.HasTimes() {
		first, last := v.SeenUnix()
		n += uvarintLen(uint64(first<<1)^uint64(first>>63)) + uvarintLen(uint64(last-first))
	}
	return n + len(v.Text) + len(v.Data)
}

// uvarintLen is the length of x as an unsigned varint.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// appendValue encodes v: nothing for a value with no text, data or times,
// else valueVersion or valueTimes and the parts.
func appendValue(b []byte, v store.Value) []byte {
	if !encodes(&v) {
		return b
	}
	if v.HasTimes() {
		first, last := v.SeenUnix()
		b = append(b, valueTimes)
		b = binary.AppendVarint(b, first)
		b = binary.AppendUvarint(b, uint64(last-first))
	} else {
		b = append(b, valueVersion)
	}
	b = binary.AppendUvarint(b, uint64(len(v.Text)))
	b = append(b, v.Text...)
	return append(b, v.Data...)
}

// decodeValue decodes b; the returned slices alias b.
func decodeValue(b []byte) (store.Value, error) {
	var v store.Value
	if len(b) == 0 {
		return v, nil
	}
	rest := b[1:]
	switch b[0] {
	case valueVersion:
	case valueTimes:
		first, w := binary.Varint(rest)
		if w <= 0 {
			return store.Value{}, fmt.Errorf("%w: bad first-seen time", store.ErrCorrupt)
		}
		rest = rest[w:]
		d, w := binary.Uvarint(rest)
		if w <= 0 || d > 1<<62 || first > 1<<62 || first < -1<<62 {
			return store.Value{}, fmt.Errorf("%w: bad last-seen time", store.ErrCorrupt)
		}
		rest = rest[w:]
		last := first + int64(d)
		// Unix 0 is "none" in store.Unix: the other time stands for both,
		// as Value.SeenUnix gives them.
		switch {
		case first == 0:
			first = last
		case last == 0:
			last = first
		}
		v.FirstSeen, v.LastSeen = store.Unix(first), store.Unix(last)
	default:
		return store.Value{}, fmt.Errorf("%w: value version %d", store.ErrFormat, b[0])
	}
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		return store.Value{}, fmt.Errorf("%w: bad value length", store.ErrCorrupt)
	}
	rest = rest[w:]
	v.Text, v.Data = rest[:n:n], rest[n:]
	if len(v.Text) == 0 {
		v.Text = nil
	}
	if len(v.Data) == 0 {
		v.Data = nil
	}
	return v, nil
}

// snapshotHeader describes the persisted filter and counts, and the Badger
// version they reflect. Version 1 (File false) keeps the filter's encoding
// in Badger, as Chunks values of snapshotChunk bytes under filterChunkKey;
// version 2 (File true) keeps it in the file snapshotFileName of the index
// directory, Size bytes long (see snapfile.go), out of Badger's value log,
// which Badger maps: reading the snapshot from there put all of it in the
// process's resident set. This package writes version 2 and reads both.
type snapshotHeader struct {
	File          bool   // version 2: the encoding is in snapshotFileName
	State         uint64 // Badger max version once the snapshot is committed
	Entries       uint64
	PrefixEntries uint64
	Bits          uint8  // filter k
	Chunks        uint32 // version 1
	FullLen       uint64 // bytes of the full-entry bitmap (roaring64 portable)
	ShortLen      uint64 // bytes of the prefix-entry bitmap (roaring portable)
	Size          uint64 // version 2: bytes of the file
	// CRC is the CRC-32C of the concatenated bitmaps (version 1), or of
	// the file's bytes before its own copy of the CRC (version 2).
	CRC uint32
}

const (
	snapshotMagic   = "uhsnap\x01"
	snapshotMagicV2 = "uhsnap\x02"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *snapshotHeader) appendBinary(b []byte) []byte {
	if s.File {
		b = append(b, snapshotMagicV2...)
	} else {
		b = append(b, snapshotMagic...)
	}
	b = binary.BigEndian.AppendUint64(b, s.State)
	b = binary.BigEndian.AppendUint64(b, s.Entries)
	b = binary.BigEndian.AppendUint64(b, s.PrefixEntries)
	b = append(b, s.Bits)
	if !s.File {
		b = binary.BigEndian.AppendUint32(b, s.Chunks)
	}
	b = binary.BigEndian.AppendUint64(b, s.FullLen)
	b = binary.BigEndian.AppendUint64(b, s.ShortLen)
	if s.File {
		b = binary.BigEndian.AppendUint64(b, s.Size)
	}
	return binary.BigEndian.AppendUint32(b, s.CRC)
}

const (
	snapshotHeaderLen   = len(snapshotMagic) + 8*3 + 1 + 4 + 8*2 + 4
	snapshotHeaderV2Len = len(snapshotMagicV2) + 8*3 + 1 + 8*2 + 8 + 4
)

func (s *snapshotHeader) decode(b []byte) error {
	*s = snapshotHeader{}
	switch {
	case len(b) == snapshotHeaderLen && string(b[:len(snapshotMagic)]) == snapshotMagic:
	case len(b) == snapshotHeaderV2Len && string(b[:len(snapshotMagicV2)]) == snapshotMagicV2:
		s.File = true
	default:
		return fmt.Errorf("%w: snapshot header", store.ErrFormat)
	}
	b = b[len(snapshotMagic):]
	s.State = binary.BigEndian.Uint64(b)
	s.Entries = binary.BigEndian.Uint64(b[8:])
	s.PrefixEntries = binary.BigEndian.Uint64(b[16:])
	s.Bits = b[24]
	b = b[25:]
	if !s.File {
		s.Chunks = binary.BigEndian.Uint32(b)
		b = b[4:]
	}
	s.FullLen = binary.BigEndian.Uint64(b)
	s.ShortLen = binary.BigEndian.Uint64(b[8:])
	b = b[16:]
	if s.File {
		s.Size = binary.BigEndian.Uint64(b)
		b = b[8:]
	}
	s.CRC = binary.BigEndian.Uint32(b)
	if s.Bits < filter.MinBits || s.Bits > filter.MaxBits {
		return fmt.Errorf("%w: filter bits %d", store.ErrCorrupt, s.Bits)
	}
	if s.File && (s.FullLen > 1<<62 || s.ShortLen > 1<<62 || s.Size != snapshotFileLen(s.FullLen, s.ShortLen)) {
		return fmt.Errorf("%w: snapshot file size %d for bitmaps of %d and %d bytes", store.ErrCorrupt, s.Size, s.FullLen, s.ShortLen)
	}
	return nil
}
