package keytable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"syscall"

	"github.com/urlhash/urlhash/store"
)

// A key file (NNNNNN.keys) is immutable once written:
//
//	header   64 bytes: magic "UHKTKEYS", version byte, bucket bits byte,
//	         6 zero bytes, live key count (u64), tombstone count (u64),
//	         CRC-32C of the keys and tombstones (u32), CRC-32C of the
//	         header's first 32 bytes and the bucket array (u32), 20 zero
//	         bytes, end magic "UHKT"
//	keys     count × 32 bytes, strictly ascending
//	deleted  tombstones × 32 bytes, strictly ascending
//	buckets  (1<<bits + 1) × u32: buckets[b] is the index of the first key
//	         whose leading bits are ≥ b; buckets[1<<bits] = count
//
// Integers are little-endian. A key in deleted hides the same key in every
// older file; a key in keys is live (a file may hold a key in both: deleted
// from an older file, then added again).
const (
	fileMagic      = "UHKTKEYS"
	fileVersion    = 1
	headerSize     = 64
	maxBucketBits  = 26
	keysPerBucket  = 8
	maxFileEntries = 1 << 32 // bucket offsets are u32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// bucketBitsFor returns the bucket bits for n keys: about keysPerBucket
// keys per bucket, so a lookup reads one or two cache lines of keys.
func bucketBitsFor(n uint64) uint8 {
	b := 0
	if n > keysPerBucket {
		b = bits.Len64(n/keysPerBucket - 1)
	}
	return uint8(min(b, maxBucketBits))
}

// fileHeader is the decoded header of a key file.
type fileHeader struct {
	bits     uint8
	count    uint64
	deleted  uint64
	dataCRC  uint32
	indexCRC uint32
}

func (h *fileHeader) bucketBytes() uint64 { return 4 * ((1 << h.bits) + 1) }

// size returns the file size the header implies.
func (h *fileHeader) size() uint64 {
	return headerSize + KeySize*(h.count+h.deleted) + h.bucketBytes()
}

func (h *fileHeader) appendTo(b []byte) []byte {
	b = append(b, fileMagic...)
	b = append(b, fileVersion, h.bits, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, h.count)
	b = binary.LittleEndian.AppendUint64(b, h.deleted)
	b = binary.LittleEndian.AppendUint32(b, h.dataCRC)
	b = binary.LittleEndian.AppendUint32(b, h.indexCRC)
	b = append(b, make([]byte, 20)...)
	return append(b, "UHKT"...)
}

// decodeHeader decodes and checks the fixed fields of a header.
func decodeHeader(b []byte) (fileHeader, error) {
	var h fileHeader
	switch {
	case len(b) < headerSize:
		return h, fmt.Errorf("%w: %d bytes, shorter than a header", store.ErrCorrupt, len(b))
	case string(b[:8]) != fileMagic || string(b[60:64]) != "UHKT":
		return h, fmt.Errorf("%w: not a key file (bad magic)", store.ErrCorrupt)
	case b[8] > fileVersion:
		return h, fmt.Errorf("%w: key file version %d, this program reads up to %d", store.ErrFormat, b[8], fileVersion)
	case b[8] != fileVersion:
		return h, fmt.Errorf("%w: key file version %d", store.ErrCorrupt, b[8])
	}
	h.bits = b[9]
	h.count = binary.LittleEndian.Uint64(b[16:])
	h.deleted = binary.LittleEndian.Uint64(b[24:])
	h.dataCRC = binary.LittleEndian.Uint32(b[32:])
	h.indexCRC = binary.LittleEndian.Uint32(b[36:])
	if h.bits > maxBucketBits || h.count >= maxFileEntries || h.deleted >= maxFileEntries {
		return h, fmt.Errorf("%w: key file header out of range (bits %d, keys %d, tombstones %d)", store.ErrCorrupt, h.bits, h.count, h.deleted)
	}
	return h, nil
}

// writeFile writes a key file of the sorted, distinct keys and
// tombstones to w, streaming: keys and dels are called once each and yield
// their keys in order. It returns the header written.
func writeFile(w io.WriterAt, count, deleted uint64, keys, dels func(yield func(*Key) bool)) (fileHeader, error) {
	h := fileHeader{bits: bucketBitsFor(count), count: count, deleted: deleted}
	if count >= maxFileEntries || deleted >= maxFileEntries {
		return h, fmt.Errorf("keytable: %d keys, %d tombstones: too many for one file", count, deleted)
	}
	buckets := make([]uint32, (1<<h.bits)+1)
	bw := &sectionWriter{w: w, off: headerSize, buf: make([]byte, 0, 1<<16)}
	crc := uint32(0)
	var prev Key
	var n uint64
	var werr error
	emit := func(seq func(yield func(*Key) bool), want uint64, counted bool) {
		i := uint64(0)
		for k := range seq {
			if i > 0 && bytes.Compare(k[:], prev[:]) <= 0 {
				werr = fmt.Errorf("keytable: keys out of order writing a file (%x after %x)", k[:], prev[:])
				return
			}
			if counted {
				b := leading(k, h.bits)
				for n <= uint64(b) { // buckets up to b start at or after this key
					buckets[n] = uint32(i)
					n++
				}
			}
			prev = *k
			crc = crc32.Update(crc, castagnoli, k[:])
			if err := bw.write(k[:]); err != nil {
				werr = err
				return
			}
			i++
		}
		if werr == nil && i != want {
			werr = fmt.Errorf("keytable: %d keys written, %d announced", i, want)
		}
	}
	emit(keys, count, true)
	if werr != nil {
		return h, werr
	}
	for ; n < uint64(len(buckets)); n++ {
		buckets[n] = uint32(count)
	}
	emit(dels, deleted, false)
	if werr != nil {
		return h, werr
	}
	h.dataCRC = crc
	bb := make([]byte, 0, 4*len(buckets))
	for _, o := range buckets {
		bb = binary.LittleEndian.AppendUint32(bb, o)
	}
	hdr := h.appendTo(nil)
	h.indexCRC = crc32.Update(crc32.Checksum(hdr[:32], castagnoli), castagnoli, bb)
	if err := bw.write(bb); err != nil {
		return h, err
	}
	if err := bw.flush(); err != nil {
		return h, err
	}
	_, err := w.WriteAt(h.appendTo(nil), 0)
	return h, err
}

// leading returns the leading b bits of k.
func leading(k *Key, b uint8) uint32 {
	if b == 0 {
		return 0
	}
	return uint32(binary.BigEndian.Uint64(k[:8]) >> (64 - b))
}

type sectionWriter struct {
	w   io.WriterAt
	off int64
	buf []byte
}

func (s *sectionWriter) write(p []byte) error {
	if len(s.buf)+len(p) > cap(s.buf) {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.buf = append(s.buf, p...)
	return nil
}

func (s *sectionWriter) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.w.WriteAt(s.buf, s.off)
	s.off += int64(len(s.buf))
	s.buf = s.buf[:0]
	return err
}

// A keyFile is an open key file, mapped read-only.
type keyFile struct {
	num     uint64
	name    string
	hdr     fileHeader
	data    []byte // the whole file (mmap)
	keys    []byte // count × 32
	deleted []byte // tombstones × 32
	buckets []byte // (1<<bits + 1) × u32
}

// openFile maps the key file name and checks its header, size and bucket
// array (not the keys: see verify).
func openFile(name string, num uint64) (*keyFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	if fi.Size() < headerSize {
		return nil, fmt.Errorf("%w: %s: %d bytes, shorter than a header", store.ErrCorrupt, name, fi.Size())
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("keytable: mmap %s: %w", name, err)
	}
	kf, err := parseFile(data)
	if err != nil {
		syscall.Munmap(data)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Lookups are random: no readahead, and no fault-around (which maps
	// the cached pages around a faulting one, 64 KiB of resident set for
	// one 32-byte key).
	syscall.Madvise(data, syscall.MADV_RANDOM)
	kf.num, kf.name = num, name
	return kf, nil
}

// parseFile checks the header, size and bucket array of a key file's
// bytes and returns the file over them.
func parseFile(data []byte) (*keyFile, error) {
	h, err := decodeHeader(data)
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) != h.size() {
		return nil, fmt.Errorf("%w: %d bytes, the header says %d", store.ErrCorrupt, len(data), h.size())
	}
	kf := &keyFile{hdr: h, data: data}
	end := headerSize + KeySize*h.count
	kf.keys = data[headerSize:end]
	kf.deleted = data[end : end+KeySize*h.deleted]
	kf.buckets = data[end+KeySize*h.deleted:]
	hdr := h.appendTo(nil)
	if crc32.Update(crc32.Checksum(hdr[:32], castagnoli), castagnoli, kf.buckets) != h.indexCRC {
		return nil, fmt.Errorf("%w: header or bucket array checksum mismatch", store.ErrCorrupt)
	}
	// The checksum matched; still refuse offsets that would read out of
	// bounds (a checksum collision must not become a panic).
	prev := uint32(0)
	nb := 1 << h.bits
	for b := 0; b <= nb; b++ {
		o := binary.LittleEndian.Uint32(kf.buckets[4*b:])
		if o < prev || uint64(o) > h.count || (b == nb && uint64(o) != h.count) {
			return nil, fmt.Errorf("%w: bucket %d offset %d out of order", store.ErrCorrupt, b, o)
		}
		prev = o
	}
	return kf, nil
}

// release takes the file's pages in [from, to) (byte offsets) out of the
// process's resident set: the mapping is shared and read-only, so they
// stay in the page cache and a later read faults them in again. Without
// it, every page a merge, a scan or the lookups touched would count in
// the resident set, up to the size of the files.
func (f *keyFile) release(from, to int) {
	const page = 4096
	from &^= page - 1
	if to > len(f.data) {
		to = len(f.data)
	}
	if from >= to || f.data == nil {
		return
	}
	syscall.Madvise(f.data[from:to], syscall.MADV_DONTNEED)
}

func (f *keyFile) close() error {
	if f.data == nil {
		return nil
	}
	err := syscall.Munmap(f.data)
	f.data = nil
	return err
}

// find returns the state of k in the file: 1 live, -1 deleted, 0 absent.
func (f *keyFile) find(k *Key) int {
	b := leading(k, f.hdr.bits)
	lo := int(binary.LittleEndian.Uint32(f.buckets[4*b:]))
	hi := int(binary.LittleEndian.Uint32(f.buckets[4*b+4:]))
	if searchKeys(f.keys, lo, hi, k) {
		return 1
	}
	if len(f.deleted) > 0 && searchKeys(f.deleted, 0, len(f.deleted)/KeySize, k) {
		return -1
	}
	return 0
}

// searchKeys reports whether k is among the sorted keys[lo:hi] (indexes
// of 32-byte keys).
func searchKeys(keys []byte, lo, hi int, k *Key) bool {
	lead := binary.BigEndian.Uint64(k[:8])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		e := keys[m*KeySize : m*KeySize+KeySize]
		l := binary.BigEndian.Uint64(e[:8])
		c := 0
		switch {
		case l < lead:
			c = -1
		case l > lead:
			c = 1
		default:
			c = bytes.Compare(e[8:], k[8:])
		}
		switch {
		case c == 0:
			return true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return false
}

// key returns the i-th live key.
func (f *keyFile) key(i int) *Key { return (*Key)(f.keys[i*KeySize : i*KeySize+KeySize]) }

// tombstone returns the i-th tombstone.
func (f *keyFile) tombstone(i int) *Key {
	return (*Key)(f.deleted[i*KeySize : i*KeySize+KeySize])
}

// verify checks the checksum of the keys and tombstones and their order.
func (f *keyFile) verify() error {
	crc := crc32.Update(0, castagnoli, f.keys)
	crc = crc32.Update(crc, castagnoli, f.deleted)
	if crc != f.hdr.dataCRC {
		return fmt.Errorf("%w: %s: key checksum mismatch", store.ErrCorrupt, f.name)
	}
	for _, s := range [][]byte{f.keys, f.deleted} {
		for i := KeySize; i < len(s); i += KeySize {
			if bytes.Compare(s[i-KeySize:i], s[i:i+KeySize]) >= 0 {
				return fmt.Errorf("%w: %s: keys out of order at %d", store.ErrCorrupt, f.name, i/KeySize)
			}
		}
	}
	return nil
}
