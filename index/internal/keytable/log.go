package keytable

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/urlhash/urlhash/store"
)

// A log segment (NNNNNN.log) starts with the 8 bytes "UHKTLOG" and a
// version byte, then holds records:
//
//	length   u32, little-endian: the payload's bytes (≤ maxRecord)
//	crc      u32: CRC-32C of the payload
//	payload  kind byte (recordBatch), uvarint sequence number (version 2
//	         only), uvarint added, uvarint deleted, uvarint opaque length,
//	         added × 32 bytes, deleted × 32 bytes, the opaque bytes
//
// Version 2 numbers the records: one more than the record before, across
// segments and reopenings, so that a record missing between two (a
// segment cut at a record's end, or removed) shows, and the file SYNCED
// can say which record the last fsync covered (see synced.go). Version 1
// segments (written before) are read, unnumbered.
//
// A record is applied whole or not at all. At the end of the newest
// segment, a record cut short or failing its checksum and followed only by
// zero bytes is a torn write (the crash came before it was acknowledged)
// and is dropped; anywhere else it is damage.
const (
	logMagic    = "UHKTLOG"
	logVersion  = 2
	logHeader   = 8
	recordBatch = 1
	// maxRecord bounds one record's payload (and what a damaged length
	// field can make a reader allocate).
	maxRecord = 64 << 20
)

// A Batch is one atomic log record: keys added, keys deleted, and opaque
// bytes the caller wants durable together with them (an idempotency
// record). Recovery hands the opaque bytes back (Options.Replay).
type Batch struct {
	Added   []Key
	Deleted []Key
	Opaque  []byte
	// seq is the record's number in the log (set by the table when it
	// appends it; 0 for a version 1 record read back).
	seq uint64
}

func (b *Batch) isEmpty() bool { return len(b.Added) == 0 && len(b.Deleted) == 0 && len(b.Opaque) == 0 }

// appendRecord appends the record of b to dst.
func appendRecord(dst []byte, b *Batch) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = append(dst, recordBatch)
	dst = binary.AppendUvarint(dst, b.seq)
	dst = binary.AppendUvarint(dst, uint64(len(b.Added)))
	dst = binary.AppendUvarint(dst, uint64(len(b.Deleted)))
	dst = binary.AppendUvarint(dst, uint64(len(b.Opaque)))
	for i := range b.Added {
		dst = append(dst, b.Added[i][:]...)
	}
	for i := range b.Deleted {
		dst = append(dst, b.Deleted[i][:]...)
	}
	dst = append(dst, b.Opaque...)
	n := len(dst) - start - 8
	if n > maxRecord {
		return dst[:start], fmt.Errorf("keytable: a batch of %d bytes exceeds the %d-byte record limit", n, maxRecord)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], castagnoli))
	return dst, nil
}

// decodePayload decodes a record's payload (checksum already checked) of
// a segment of the given version. The opaque bytes alias p.
func decodePayload(p []byte, version byte) (Batch, error) {
	var b Batch
	if len(p) == 0 || p[0] != recordBatch {
		return b, fmt.Errorf("%w: unknown record kind", store.ErrCorrupt)
	}
	p = p[1:]
	if version >= 2 {
		v, w := binary.Uvarint(p)
		if w <= 0 || v == 0 {
			return b, fmt.Errorf("%w: bad record number", store.ErrCorrupt)
		}
		b.seq, p = v, p[w:]
	}
	var n [3]uint64
	for i := range n {
		v, w := binary.Uvarint(p)
		if w <= 0 {
			return b, fmt.Errorf("%w: bad record counts", store.ErrCorrupt)
		}
		n[i], p = v, p[w:]
	}
	if n[0] > uint64(len(p))/KeySize || n[1] > uint64(len(p))/KeySize ||
		(n[0]+n[1])*KeySize+n[2] != uint64(len(p)) {
		return b, fmt.Errorf("%w: record counts (%d, %d, %d) disagree with its %d bytes", store.ErrCorrupt, n[0], n[1], n[2], len(p))
	}
	b.Added = keysOf(p[:n[0]*KeySize])
	p = p[n[0]*KeySize:]
	b.Deleted = keysOf(p[:n[1]*KeySize])
	if n[2] > 0 {
		b.Opaque = p[n[1]*KeySize:]
	}
	return b, nil
}

func keysOf(p []byte) []Key {
	ks := make([]Key, len(p)/KeySize)
	for i := range ks {
		copy(ks[i][:], p[i*KeySize:])
	}
	return ks
}

// readLog decodes the records of a segment's bytes, calling fn for each.
// It returns the offset after the last whole record. last says whether
// the segment is the newest, where a torn tail is tolerated.
func readLog(data []byte, last bool, fn func(Batch) error) (int64, error) {
	if len(data) < logHeader {
		if last && allZero(data) || last && len(data) < logHeader && string(data) == logMagic[:len(data)] {
			return 0, nil // created, header not yet written whole
		}
		return 0, fmt.Errorf("%w: log shorter than its header", store.ErrCorrupt)
	}
	if string(data[:7]) != logMagic {
		return 0, fmt.Errorf("%w: not a log segment (bad magic)", store.ErrCorrupt)
	}
	version := data[7]
	if version == 0 || version > logVersion {
		return 0, fmt.Errorf("%w: log version %d, this program reads 1 to %d", store.ErrFormat, version, logVersion)
	}
	off := int64(logHeader)
	for off < int64(len(data)) {
		rest := data[off:]
		bad := ""
		hard := false // damage whatever follows
		var n int64
		switch {
		case len(rest) < 8:
			bad = "record header cut short"
		default:
			n = int64(binary.LittleEndian.Uint32(rest))
			switch {
			case n == 0 && allZero(rest):
				bad = "zero tail"
			case n == 0 || n > maxRecord:
				bad, hard = fmt.Sprintf("record length %d out of range", n), true
			case n > int64(len(rest))-8:
				bad = "record cut short"
			case crc32.Checksum(rest[8:8+n], castagnoli) != binary.LittleEndian.Uint32(rest[4:]):
				bad = "record checksum mismatch"
			}
		}
		if bad != "" {
			end := int64(len(rest))
			if n > 0 && n <= int64(len(rest))-8 {
				end = 8 + n
			}
			if last && !hard && (end == int64(len(rest)) || allZero(rest[end:])) {
				return off, nil // torn tail
			}
			return off, fmt.Errorf("%w: %s at offset %d", store.ErrCorrupt, bad, off)
		}
		b, err := decodePayload(rest[8:8+n], version)
		if err != nil {
			return off, fmt.Errorf("%w at offset %d", err, off)
		}
		if err := fn(b); err != nil {
			return off, err
		}
		off += 8 + n
	}
	return off, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// createLog creates a new segment and writes its header.
func createLog(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	if _, err := f.Write(append([]byte(logMagic), logVersion)); err != nil {
		f.Close()
		return nil, fmt.Errorf("keytable: %w", err)
	}
	return f, nil
}
