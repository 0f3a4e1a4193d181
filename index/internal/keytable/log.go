package keytable

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/urlhash/urlhash/store"
)

// A log segment (NNNNNN.log) starts with the 7 bytes "UHKTLOG" and a
// version byte, then holds records:
//
//	length   u32, little-endian: the payload's bytes (≤ maxRecord)
//	crc      u32: CRC-32C of the payload
//	payload  kind byte (recordBatch), uvarint sequence number (version 2
//	         and 3), uvarint added, uvarint deleted, uvarint set (version
//	         3), uvarint opaque length, added × 32 bytes, deleted × 32
//	         bytes, the sets (version 3), the opaque bytes
//
// A set is a flags byte (opHides, opCond, opKeep, opCols, opValue), the
// key (32 bytes), with opCols three uvarints (first seen, last seen,
// expiry), with opValue a uvarint length and the value. Added keys are
// key-only rows over nothing (or over the delta's state of the key);
// deleted keys are tombstones over a row.
//
// Version 2 numbers the records: one more than the record before, across
// segments and reopenings, so that a record missing between two (a
// segment cut at a record's end, or removed) shows, and the file SYNCED
// can say which record the last fsync covered (see synced.go). Version 3
// adds the sets (columns, values, writes over an older record). Version 1
// and 2 segments (written before) are read.
//
// A record is applied whole or not at all. At the end of the newest
// segment, a record cut short or failing its checksum and followed only by
// zero bytes is a torn write (the crash came before it was acknowledged)
// and is dropped, unless SYNCED says it was acknowledged (then it is
// named as damaged); anywhere else it is damage.
const (
	logMagic    = "UHKTLOG"
	logVersion  = 3
	logHeader   = 8
	recordBatch = 1
	// maxRecord bounds one record's payload (and what a damaged length
	// field can make a reader allocate).
	maxRecord = 64 << 20
)

// A Batch is one atomic log record: keys added (if absent: key-only, or
// with the columns AddedCols, the same for each), keys deleted, entries
// set (columns and values, replacing what the keys had), and opaque bytes
// the caller wants durable together with them (an idempotency record).
// Recovery hands the opaque bytes back (Options.Replay). A key may be in
// one list only, and once in Set; repeated in Added or Deleted it counts
// once.
type Batch struct {
	Added []Key
	// AddedCols are the columns of the rows Added creates (a revisit's
	// first sightings: first and last seen now): zero, key-only rows.
	AddedCols Cols
	Deleted   []Key
	Set       []Set
	Opaque    []byte
}

func (b *Batch) isEmpty() bool {
	return len(b.Added) == 0 && len(b.Deleted) == 0 && len(b.Set) == 0 && len(b.Opaque) == 0
}

// A record is what a log record holds: the changes a batch made.
type record struct {
	// seq is the record's number in the log (set by the table when it
	// appends it; 0 for a version 1 record read back).
	seq   uint64
	added []Key
	// addedCols are the columns of every added row (Batch.AddedCols):
	// such rows are logged as sets with these columns (a record read
	// back has them in sets), and held here as keys, 32 bytes each.
	addedCols Cols
	deleted   []Key
	sets      []op
	opaque    []byte
}

func (r *record) isEmpty() bool {
	return len(r.added) == 0 && len(r.deleted) == 0 && len(r.sets) == 0 && len(r.opaque) == 0
}

// op is a row a record writes with columns, a value or over an older row.
type op struct {
	k     Key
	flags uint8
	cols  Cols
	value []byte
	// kept is the value an opKeep write found (not logged: a replay looks
	// it up again).
	kept dval
}

// Set flags.
const (
	// opHides: the row is written over a row below the delta (which a
	// tombstone of it hides).
	opHides = 1 << iota
	// opCond: the row is written over an expired row that the merge
	// running dropped: it hides it if it is still there when the record
	// is replayed.
	opCond
	// opKeep: the row keeps the value of the row it is written over.
	opKeep
	opCols
	opValue
	opAll = opHides | opCond | opKeep | opCols | opValue
)

// appendCols appends a set's columns as the log holds them.
func appendCols(dst []byte, c *Cols) []byte {
	dst = binary.AppendUvarint(dst, uint64(c.First))
	dst = binary.AppendUvarint(dst, uint64(c.Last))
	return binary.AppendUvarint(dst, uint64(c.Expires))
}

// appendRecord appends the record of r to dst.
func appendRecord(dst []byte, r *record) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = append(dst, recordBatch)
	dst = binary.AppendUvarint(dst, r.seq)
	added, addedSets := r.added, []Key(nil)
	if !r.addedCols.IsZero() {
		added, addedSets = nil, r.added
	}
	dst = binary.AppendUvarint(dst, uint64(len(added)))
	dst = binary.AppendUvarint(dst, uint64(len(r.deleted)))
	dst = binary.AppendUvarint(dst, uint64(len(addedSets)+len(r.sets)))
	dst = binary.AppendUvarint(dst, uint64(len(r.opaque)))
	for i := range added {
		dst = append(dst, added[i][:]...)
	}
	for i := range r.deleted {
		dst = append(dst, r.deleted[i][:]...)
	}
	for i := range addedSets {
		dst = append(dst, opCols)
		dst = append(dst, addedSets[i][:]...)
		dst = appendCols(dst, &r.addedCols)
	}
	for i := range r.sets {
		o := &r.sets[i]
		fl := o.flags &^ (opCols | opValue)
		if !o.cols.IsZero() {
			fl |= opCols
		}
		if len(o.value) > 0 && o.flags&opKeep == 0 {
			fl |= opValue
		}
		dst = append(dst, fl)
		dst = append(dst, o.k[:]...)
		if fl&opCols != 0 {
			dst = appendCols(dst, &o.cols)
		}
		if fl&opValue != 0 {
			dst = binary.AppendUvarint(dst, uint64(len(o.value)))
			dst = append(dst, o.value...)
		}
		if len(dst)-start > maxRecord+8 {
			break
		}
	}
	dst = append(dst, r.opaque...)
	n := len(dst) - start - 8
	if n > maxRecord {
		return dst[:start], fmt.Errorf("keytable: a batch of %d bytes or more exceeds the %d-byte record limit", n, maxRecord)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], castagnoli))
	return dst, nil
}

// decodePayload decodes a record's payload (checksum already checked) of
// a segment of the given version. The opaque bytes and values alias p.
func decodePayload(p []byte, version byte) (record, error) {
	var r record
	if len(p) == 0 || p[0] != recordBatch {
		return r, fmt.Errorf("%w: unknown record kind", store.ErrCorrupt)
	}
	p = p[1:]
	if version >= 2 {
		v, w := binary.Uvarint(p)
		if w <= 0 || v == 0 {
			return r, fmt.Errorf("%w: bad record number", store.ErrCorrupt)
		}
		r.seq, p = v, p[w:]
	}
	var n [4]uint64
	counts := n[:3]
	if version >= 3 {
		counts = n[:4]
	}
	for i := range counts {
		v, w := binary.Uvarint(p)
		if w <= 0 {
			return r, fmt.Errorf("%w: bad record counts", store.ErrCorrupt)
		}
		counts[i], p = v, p[w:]
	}
	nAdd, nDel := n[0], n[1]
	nSet, nOpaque := uint64(0), n[2]
	if version >= 3 {
		nSet, nOpaque = n[2], n[3]
	}
	size := uint64(len(p))
	if nAdd > size/KeySize || nDel > size/KeySize || (nAdd+nDel)*KeySize > size || nSet > size/(1+KeySize) || nOpaque > size {
		return r, fmt.Errorf("%w: record counts (%d, %d, %d, %d) disagree with its %d bytes", store.ErrCorrupt, nAdd, nDel, nSet, nOpaque, len(p))
	}
	r.added = keysOf(p[:nAdd*KeySize])
	p = p[nAdd*KeySize:]
	r.deleted = keysOf(p[:nDel*KeySize])
	p = p[nDel*KeySize:]
	if nSet > 0 {
		r.sets = make([]op, nSet)
	}
	for i := range r.sets {
		o := &r.sets[i]
		if len(p) < 1+KeySize {
			return r, fmt.Errorf("%w: record set %d cut short", store.ErrCorrupt, i)
		}
		o.flags = p[0]
		copy(o.k[:], p[1:1+KeySize])
		p = p[1+KeySize:]
		if o.flags&^opAll != 0 || o.flags&(opKeep|opValue) == opKeep|opValue {
			return r, fmt.Errorf("%w: record set %d: flags %#x", store.ErrCorrupt, i, o.flags)
		}
		if o.flags&opCols != 0 {
			var c [nCols]int64
			for j := range c {
				v, w := binary.Uvarint(p)
				if w <= 0 || v > MaxTime {
					return r, fmt.Errorf("%w: record set %d: bad columns", store.ErrCorrupt, i)
				}
				c[j], p = int64(v), p[w:]
			}
			o.cols = Cols{First: c[0], Last: c[1], Expires: c[2]}
		}
		if o.flags&opValue != 0 {
			v, w := binary.Uvarint(p)
			if w <= 0 || v == 0 || v > uint64(len(p)-w) {
				return r, fmt.Errorf("%w: record set %d: bad value length", store.ErrCorrupt, i)
			}
			o.value = p[w : w+int(v) : w+int(v)]
			p = p[w+int(v):]
		}
	}
	if uint64(len(p)) != nOpaque {
		return r, fmt.Errorf("%w: record of %d opaque bytes holds %d", store.ErrCorrupt, nOpaque, len(p))
	}
	if nOpaque > 0 {
		r.opaque = p
	}
	return r, nil
}

func keysOf(p []byte) []Key {
	if len(p) == 0 {
		return nil
	}
	ks := make([]Key, len(p)/KeySize)
	for i := range ks {
		copy(ks[i][:], p[i*KeySize:])
	}
	return ks
}

// tail is the end of a segment readLog dropped as torn: where, and why.
type tail struct {
	off int64
	why string
}

// readLog decodes the records of a segment's bytes, calling fn for each.
// It returns the offset after the last whole record, and what it dropped
// as a torn tail (why ""; none). last says whether the segment is the
// newest, where a torn tail is tolerated.
func readLog(data []byte, last bool, fn func(*record) error) (int64, tail, error) {
	if len(data) < logHeader {
		// Created, its header not written whole, or not made durable: a
		// power loss keeps the file and can drop the header. No record
		// of it was acknowledged (the sync would have made the header
		// durable with it), wherever it is in the log.
		if allZero(data) || string(data) == logMagic[:len(data)] {
			return 0, tail{}, nil
		}
		return 0, tail{}, fmt.Errorf("%w: log shorter than its header", store.ErrCorrupt)
	}
	if string(data[:7]) != logMagic {
		return 0, tail{}, fmt.Errorf("%w: not a log segment (bad magic)", store.ErrCorrupt)
	}
	version := data[7]
	if version == 0 || version > logVersion {
		return 0, tail{}, fmt.Errorf("%w: log version %d, this program reads 1 to %d", store.ErrFormat, version, logVersion)
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
				return off, tail{off: off, why: bad}, nil // torn tail
			}
			return off, tail{}, fmt.Errorf("%w: %s at offset %d", store.ErrCorrupt, bad, off)
		}
		r, err := decodePayload(rest[8:8+n], version)
		if err != nil {
			return off, tail{}, fmt.Errorf("%w at offset %d", err, off)
		}
		if err := fn(&r); err != nil {
			return off, tail{}, err
		}
		off += 8 + n
	}
	return off, tail{}, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// cutLog cuts the segment name at end, the end of its last whole record
// (before its header: it is given its header), and makes that durable.
func cutLog(fs fsys, name string, end int64) error {
	f, err := fs.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("keytable: %w", err)
	}
	if end < logHeader {
		end = logHeader
		_, err = f.WriteAt(append([]byte(logMagic), logVersion), 0)
	}
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keytable: %s: %w", name, err)
	}
	return nil
}

// createLog creates a new segment and writes its header.
func createLog(fs fsys, name string) (file, error) {
	f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	if _, err := f.Write(append([]byte(logMagic), logVersion)); err != nil {
		f.Close()
		return nil, fmt.Errorf("keytable: %w", err)
	}
	return f, nil
}
