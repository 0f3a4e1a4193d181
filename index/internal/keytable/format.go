package keytable

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"

	"github.com/urlhash/urlhash/store"
)

// A key file (NNNNNN.keys) is immutable once written. Version 2 (written
// since values and columns moved into the table):
//
//	header    128 bytes (below)
//	rows      count rows in pages of 1<<pageShift rows (16), each page
//	          followed by a CRC-32C of its rows seeded with its number
//	          (pageSum): a lookup reads whole pages, so that its own pread
//	          covers the checksum it checks
//	deleted   tombstones × 32 bytes, strictly ascending (CRC-32C in the
//	          header; read and checked at open)
//	buckets   (1<<bits + 1) × u32: buckets[b] is the index of the first row
//	          whose key's leading bits are ≥ b; buckets[1<<bits] = count
//
// A row is the key (32 bytes), then the file's columns in order: first
// seen, last seen, expiry (each 0, 4 or 8 bytes wide, by file), then the
// value reference (0 or 4 bytes: the value's ordinal in the file's value
// file NNNNNN.values, plus one; 0: none). A column 4 bytes wide holds the
// offset of the time from the file's base for the column (0: unset); 8
// bytes wide, the time (base 0). A file of key-only rows has rows of 32
// bytes, as version 1: a page's checksum is a quarter of a byte a row.
//
// The header:
//
//	  0  magic "UHKTKEYS"
//	  8  version (2), bucket bits, page shift, zero byte
//	 12  widths: first, last, expiry, value reference (a byte each)
//	 16  rows (u64)
//	 24  tombstones (u64)
//	 32  rows with a value: the values of the value file (u64)
//	 40  pairing number of the value file (u64; 0: none)
//	 48  base of each column (3 × u64)
//	 72  largest time of each column (3 × u64; 0: the column is unset
//	     in every row)
//	 96  CRC-32C of the tombstones (u32)
//	100  20 zero bytes
//	120  CRC-32C of bytes 0..120 and of the bucket array (u32)
//	124  end magic "UHKT"
//
// Version 1 (read, and rewritten by merges):
//
//	header   64 bytes: magic "UHKTKEYS", version byte, bucket bits byte,
//	         6 zero bytes, key count (u64), tombstone count (u64), CRC-32C
//	         of the keys and tombstones (u32), CRC-32C of the header's first
//	         32 bytes and the bucket array (u32), 20 zero bytes, "UHKT"
//	keys     count × 32 bytes, strictly ascending
//	deleted  tombstones × 32 bytes
//	buckets  as version 2
//
// Integers are little-endian. A key in deleted hides the same key in every
// older file: the file holds a newer state of it (a row, or none). A key
// may be in both: written over an older row (which the tombstone hides).
// Tombstones are only written over a row below, so that the table's count
// of records is the files' rows less their tombstones.
const (
	fileMagic     = "UHKTKEYS"
	fileVersion1  = 1
	fileVersion   = 2
	headerSize1   = 64
	headerSize    = 128
	maxBucketBits = 26
	keysPerBucket = 8
	// maxFileEntries bounds a file's rows and tombstones: bucket offsets
	// and value ordinals are u32.
	maxFileEntries = 1<<32 - 2
	// defaultPageShift: pages of 16 rows. A lookup reads the page of its
	// candidate (512 bytes of key-only rows), a bucket (8 rows) one or two.
	defaultPageShift = 4
	maxPageShift     = 12
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Column numbers, in row order.
const (
	colFirst = iota
	colLast
	colExpires
	nCols
)

// bucketBitsFor returns the bucket bits for n keys: about keysPerBucket
// keys per bucket, so a lookup reads one or two pages.
func bucketBitsFor(n uint64) uint8 {
	b := 0
	if n > keysPerBucket {
		b = bits.Len64(n/keysPerBucket - 1)
	}
	return uint8(min(b, maxBucketBits))
}

// layout is how a file's rows hold their columns and value reference.
type layout struct {
	width [nCols + 1]uint8 // bytes of first, last, expiry, value reference
	base  [nCols]int64
	max   [nCols]int64
	off   [nCols + 1]int // offsets in a row
	rw    int            // row width
}

// keyOnly is the layout of a file of bare keys.
var keyOnly = layoutOf(colRange{}, false)

// colRange is the range of each column's set times (0: none set).
type colRange struct{ min, max [nCols]int64 }

// add widens r by c.
func (r *colRange) add(c *Cols) {
	for i, v := range [nCols]int64{c.First, c.Last, c.Expires} {
		if v == 0 {
			continue
		}
		if r.min[i] == 0 || v < r.min[i] {
			r.min[i] = v
		}
		r.max[i] = max(r.max[i], v)
	}
}

// join widens r by o.
func (r *colRange) join(o *colRange) {
	for i := range nCols {
		if o.max[i] == 0 {
			continue
		}
		if r.min[i] == 0 || o.min[i] < r.min[i] {
			r.min[i] = o.min[i]
		}
		r.max[i] = max(r.max[i], o.max[i])
	}
}

// rangeOf returns the range a file's layout admits (its base + 1 to its
// max, for each column with one).
func (l *layout) rangeOf() colRange {
	var r colRange
	for i := range nCols {
		if l.max[i] != 0 {
			r.min[i], r.max[i] = l.base[i]+1, l.max[i]
		}
	}
	return r
}

// layoutOf returns the narrowest layout for the times of r, with a value
// reference when values.
func layoutOf(r colRange, values bool) layout {
	var l layout
	for i := range nCols {
		if r.max[i] == 0 {
			continue
		}
		l.max[i] = r.max[i]
		if r.max[i]-(r.min[i]-1) <= 1<<32-1 {
			l.width[i] = 4
			l.base[i] = r.min[i] - 1
		} else {
			l.width[i] = 8
		}
	}
	if values {
		l.width[nCols] = 4
	}
	l.setOffsets()
	return l
}

func (l *layout) setOffsets() {
	o := KeySize
	for i, w := range l.width {
		l.off[i] = o
		o += int(w)
	}
	l.rw = o
}

// check refuses a layout no writer makes (a damaged or hostile header that
// passed its checksum must not make a reader misbehave).
func (l *layout) check() error {
	for i := range nCols {
		w, b, m := l.width[i], l.base[i], l.max[i]
		ok := false
		switch w {
		case 0:
			ok = b == 0 && m == 0
		case 4:
			ok = b >= 0 && m > b && m <= MaxTime && m-b <= 1<<32-1
		case 8:
			ok = b == 0 && m > 0 && m <= MaxTime
		}
		if !ok {
			return fmt.Errorf("column %d: width %d, base %d, largest %d", i, w, b, m)
		}
	}
	if w := l.width[nCols]; w != 0 && w != 4 {
		return fmt.Errorf("value reference width %d", w)
	}
	return nil
}

// putRow encodes a row of l into p (l.rw bytes).
func (l *layout) putRow(p []byte, k *Key, c *Cols, ref uint32) {
	copy(p, k[:])
	for i, v := range [nCols]int64{c.First, c.Last, c.Expires} {
		switch l.width[i] {
		case 4:
			s := uint32(0)
			if v != 0 {
				s = uint32(v - l.base[i])
			}
			binary.LittleEndian.PutUint32(p[l.off[i]:], s)
		case 8:
			binary.LittleEndian.PutUint64(p[l.off[i]:], uint64(v))
		}
	}
	if l.width[nCols] != 0 {
		binary.LittleEndian.PutUint32(p[l.off[nCols]:], ref)
	}
}

// fits reports whether l holds c's times.
func (l *layout) fits(c *Cols) bool {
	for i, v := range [nCols]int64{c.First, c.Last, c.Expires} {
		if v != 0 && (l.width[i] == 0 || v <= l.base[i] || v > l.max[i]) {
			return false
		}
	}
	return true
}

// col returns column i of row p.
func (l *layout) col(p []byte, i int) int64 {
	switch l.width[i] {
	case 4:
		if s := binary.LittleEndian.Uint32(p[l.off[i]:]); s != 0 {
			return l.base[i] + int64(s)
		}
	case 8:
		return int64(binary.LittleEndian.Uint64(p[l.off[i]:]))
	}
	return 0
}

// cols returns the columns of row p.
func (l *layout) cols(p []byte) Cols {
	if l.rw == KeySize {
		return Cols{}
	}
	return Cols{First: l.col(p, colFirst), Last: l.col(p, colLast), Expires: l.col(p, colExpires)}
}

// expires returns the expiry of row p.
func (l *layout) expires(p []byte) int64 { return l.col(p, colExpires) }

// ref returns the value reference of row p (ordinal + 1; 0: none).
func (l *layout) ref(p []byte) uint32 {
	if l.width[nCols] == 0 {
		return 0
	}
	return binary.LittleEndian.Uint32(p[l.off[nCols]:])
}

// fileHeader is the decoded header of a key file.
type fileHeader struct {
	version   uint8
	bits      uint8
	pageShift uint8 // 0: version 1, no pages
	count     uint64
	deleted   uint64
	values    uint64
	pair      uint64
	lay       layout
	tombCRC   uint32 // version 2
	dataCRC   uint32 // version 1
	indexCRC  uint32
}

func (h *fileHeader) hsize() uint64 {
	if h.version == fileVersion1 {
		return headerSize1
	}
	return headerSize
}

func (h *fileHeader) bucketBytes() uint64 { return 4 * ((1 << h.bits) + 1) }

// pageRows returns the rows of a page (version 1: the whole file is one
// page, without a checksum).
func (h *fileHeader) pageRows() uint64 {
	if h.pageShift == 0 {
		return max(h.count, 1)
	}
	return 1 << h.pageShift
}

// pages returns the number of pages.
func (h *fileHeader) pages() uint64 {
	if h.pageShift == 0 {
		return 0
	}
	return (h.count + h.pageRows() - 1) >> h.pageShift
}

// pageBytes returns the bytes of a full page, checksum included.
func (h *fileHeader) pageBytes() uint64 { return h.pageRows()*uint64(h.lay.rw) + 4 }

// rowsBytes returns the bytes of the row section.
func (h *fileHeader) rowsBytes() uint64 {
	if h.pageShift == 0 {
		return h.count * KeySize
	}
	return h.count*uint64(h.lay.rw) + 4*h.pages()
}

// pageOff returns the file offset of page p (version 2), or of row p
// (version 1).
func (h *fileHeader) pageOff(p uint64) int64 {
	if h.pageShift == 0 {
		return int64(headerSize1 + p*KeySize)
	}
	return int64(headerSize + p*h.pageBytes())
}

// size returns the file size the header implies.
func (h *fileHeader) size() uint64 {
	return h.hsize() + h.rowsBytes() + KeySize*h.deleted + h.bucketBytes()
}

// appendTo appends the encoded header (version 2; indexCRC as set).
func (h *fileHeader) appendTo(b []byte) []byte {
	start := len(b)
	b = append(b, fileMagic...)
	b = append(b, fileVersion, h.bits, h.pageShift, 0)
	b = append(b, h.lay.width[:]...)
	b = binary.LittleEndian.AppendUint64(b, h.count)
	b = binary.LittleEndian.AppendUint64(b, h.deleted)
	b = binary.LittleEndian.AppendUint64(b, h.values)
	b = binary.LittleEndian.AppendUint64(b, h.pair)
	for _, v := range h.lay.base {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range h.lay.max {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint32(b, h.tombCRC)
	b = append(b, make([]byte, 20)...)
	b = binary.LittleEndian.AppendUint32(b, h.indexCRC)
	b = append(b, "UHKT"...)
	_ = b[start+headerSize-1]
	return b
}

// indexSum returns the checksum of the header's fixed part and the bucket
// array (the header's indexCRC field).
func (h *fileHeader) indexSum(hdr []byte, buckets []byte) uint32 {
	n := 32 // version 1
	if h.version != fileVersion1 {
		n = 120
	}
	return crc32.Update(crc32.Checksum(hdr[:n], castagnoli), castagnoli, buckets)
}

// decodeHeader decodes and checks the fixed fields of a header: the first
// 64 bytes of a file, or 128 for version 2 (b holds at least 64).
func decodeHeader(b []byte) (fileHeader, error) {
	var h fileHeader
	switch {
	case len(b) < headerSize1:
		return h, fmt.Errorf("%w: %d bytes, shorter than a header", store.ErrCorrupt, len(b))
	case string(b[:8]) != fileMagic:
		return h, fmt.Errorf("%w: not a key file (bad magic)", store.ErrCorrupt)
	case b[8] > fileVersion:
		return h, fmt.Errorf("%w: key file version %d, this program reads up to %d", store.ErrFormat, b[8], fileVersion)
	case b[8] != fileVersion && b[8] != fileVersion1:
		return h, fmt.Errorf("%w: key file version %d", store.ErrCorrupt, b[8])
	}
	h.version, h.bits = b[8], b[9]
	if h.version == fileVersion1 {
		if string(b[60:64]) != "UHKT" {
			return h, fmt.Errorf("%w: not a key file (bad magic)", store.ErrCorrupt)
		}
		h.count = binary.LittleEndian.Uint64(b[16:])
		h.deleted = binary.LittleEndian.Uint64(b[24:])
		h.dataCRC = binary.LittleEndian.Uint32(b[32:])
		h.indexCRC = binary.LittleEndian.Uint32(b[36:])
		h.lay = keyOnly
	} else {
		if len(b) < headerSize {
			return h, fmt.Errorf("%w: %d bytes, shorter than a header", store.ErrCorrupt, len(b))
		}
		if string(b[124:128]) != "UHKT" {
			return h, fmt.Errorf("%w: not a key file (bad magic)", store.ErrCorrupt)
		}
		h.pageShift = b[10]
		copy(h.lay.width[:], b[12:16])
		h.count = binary.LittleEndian.Uint64(b[16:])
		h.deleted = binary.LittleEndian.Uint64(b[24:])
		h.values = binary.LittleEndian.Uint64(b[32:])
		h.pair = binary.LittleEndian.Uint64(b[40:])
		for i := range nCols {
			h.lay.base[i] = int64(binary.LittleEndian.Uint64(b[48+8*i:]))
			h.lay.max[i] = int64(binary.LittleEndian.Uint64(b[72+8*i:]))
		}
		h.tombCRC = binary.LittleEndian.Uint32(b[96:])
		h.indexCRC = binary.LittleEndian.Uint32(b[120:])
		h.lay.setOffsets()
		if h.pageShift == 0 || h.pageShift > maxPageShift {
			return h, fmt.Errorf("%w: key file page shift %d", store.ErrCorrupt, h.pageShift)
		}
		if err := h.lay.check(); err != nil {
			return h, fmt.Errorf("%w: key file layout: %v", store.ErrCorrupt, err)
		}
		if h.values > 0 && h.lay.width[nCols] == 0 || h.values > h.count || (h.values == 0) != (h.pair == 0) {
			return h, fmt.Errorf("%w: key file header: %d values (pairing %d) with a reference %d bytes wide", store.ErrCorrupt, h.values, h.pair, h.lay.width[nCols])
		}
	}
	if h.bits > maxBucketBits || h.count > maxFileEntries || h.deleted > maxFileEntries {
		return h, fmt.Errorf("%w: key file header out of range (bits %d, keys %d, tombstones %d)", store.ErrCorrupt, h.bits, h.count, h.deleted)
	}
	return h, nil
}

// pageSum returns the checksum of page p's rows: their CRC-32C, seeded
// with the page's number (so that a page read from elsewhere in the file
// fails it).
func pageSum(p uint64, rows []byte) uint32 {
	return crc32.Update(uint32(p)*0x9e3779b9+1, castagnoli, rows)
}
