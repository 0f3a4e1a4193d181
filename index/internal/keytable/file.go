package keytable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"slices"
	"sync/atomic"

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

// writeFile writes a key file to w in one pass over entries, which
// yields the file's keys in ascending order, each either live or a
// tombstone (a key may come as both: deleted from an older file, then
// added again). maxLive is the number of live keys expected, or more: it
// sizes the bucket array, which the keys fill as they are written. The
// tombstones are held in memory until the keys are written (an open file
// holds them in memory too). It returns the header written and the live
// keys' fingerprints (see keyFile.fp).
func writeFile(w io.WriterAt, maxLive uint64, entries func(yield func(k *Key, dead bool) bool)) (fileHeader, []byte, error) {
	h := fileHeader{bits: bucketBitsFor(maxLive)}
	buckets := make([]uint32, (1<<h.bits)+1)
	fps := make([]byte, 0, min(maxLive, maxFileEntries))
	bw := &sectionWriter{w: w, off: headerSize, buf: make([]byte, 0, 1<<16)}
	crc := uint32(0)
	var dels []byte
	var prev Key // the last live key
	var werr error
	n := uint64(0) // buckets filled
	for k, dead := range entries {
		if dead {
			if len(dels) > 0 && bytes.Compare(k[:], dels[len(dels)-KeySize:]) <= 0 {
				werr = fmt.Errorf("keytable: tombstones out of order writing a file (%x after %x)", k[:], dels[len(dels)-KeySize:])
				break
			}
			dels = append(dels, k[:]...)
			continue
		}
		if h.count > 0 && bytes.Compare(k[:], prev[:]) <= 0 {
			werr = fmt.Errorf("keytable: keys out of order writing a file (%x after %x)", k[:], prev[:])
			break
		}
		if h.count+1 >= maxFileEntries {
			werr = fmt.Errorf("keytable: %d keys: too many for one file", h.count+1)
			break
		}
		b := leading(k, h.bits)
		for n <= uint64(b) { // buckets up to b start at or after this key
			buckets[n] = uint32(h.count)
			n++
		}
		fps = append(fps, fingerprint(k, h.bits))
		crc = crc32.Update(crc, castagnoli, k[:])
		if err := bw.write(k[:]); err != nil {
			werr = err
			break
		}
		prev = *k
		h.count++
	}
	if werr != nil {
		return h, nil, werr
	}
	for ; n < uint64(len(buckets)); n++ {
		buckets[n] = uint32(h.count)
	}
	h.deleted = uint64(len(dels) / KeySize)
	if h.deleted >= maxFileEntries {
		return h, nil, fmt.Errorf("keytable: %d tombstones: too many for one file", h.deleted)
	}
	crc = crc32.Update(crc, castagnoli, dels)
	if err := bw.write(dels); err != nil {
		return h, nil, err
	}
	h.dataCRC = crc
	bb := make([]byte, 0, 4*len(buckets))
	for _, o := range buckets {
		bb = binary.LittleEndian.AppendUint32(bb, o)
	}
	hdr := h.appendTo(nil)
	h.indexCRC = crc32.Update(crc32.Checksum(hdr[:32], castagnoli), castagnoli, bb)
	if err := bw.write(bb); err != nil {
		return h, nil, err
	}
	if err := bw.flush(); err != nil {
		return h, nil, err
	}
	_, err := w.WriteAt(h.appendTo(nil), 0)
	return h, fps, err
}

// fingerprint returns the 8 bits of k that follow its leading b bits
// (its bucket's): in a bucket, sorted keys have ascending fingerprints.
func fingerprint(k *Key, b uint8) byte {
	return byte(binary.BigEndian.Uint64(k[:8]) << b >> 56)
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
	if len(p) > cap(s.buf) {
		_, err := s.w.WriteAt(p, s.off)
		s.off += int64(len(p))
		return err
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

// A keyFile is an open key file. Its header, bucket array (4 bytes a
// bucket, about half a byte a key) and tombstones are in memory; its keys
// are read on demand with pread, so that the pages lookups touch stay in
// the page cache and out of the process's resident set (a mapping counted
// every touched page in it: about 30 bytes a key once lookups had touched
// them all).
//
// Once built, a byte a key more: the keys' fingerprints, the 8 bits after
// each one's bucket bits. A lookup then reads only the keys of its bucket
// whose fingerprint is the key's: none, most of the time, in a file that
// does not hold the key (1 in 32 with 8 keys a bucket), so that a present
// key costs one read wherever it is, not one in each file searched
// before. A merge builds them as it writes a file; a file opened from
// disk gets them once lookups have touched it enough (see fpAfter).
type keyFile struct {
	num     uint64
	name    string
	hdr     fileHeader
	r       io.ReaderAt // the file
	c       io.Closer   // closes r; nil: nothing to close
	deleted []byte      // tombstones × 32
	buckets []byte      // (1<<bits + 1) × u32
	// gap and maxRead are coalesceGap and maxReadKeys (benchmarks vary
	// them).
	gap, maxRead int

	fp       atomic.Pointer[[]byte] // the keys' fingerprints, once built: count bytes
	lookups  atomic.Int64           // lookups that searched the file while fp was not built
	building atomic.Bool            // a build of fp was started
}

// Fingerprints are scanned in buckets of at most maxFingerprintScan keys;
// a larger bucket (hostile: its keys share their leading bits) is read
// as it was before fingerprints.
const maxFingerprintScan = 64

// fpAfter is the number of lookups in a file without fingerprints after
// which they are built (by one sequential read of the file, about as much
// as 1 in 32 of those lookups' reads cost): a one-off command that looks
// up a few keys builds none.
func (f *keyFile) fpAfter() int64 { return max(int64(f.hdr.count/4), 4096) }

// buildFingerprints reads the file's keys in order and installs their
// fingerprints, unless stop is set first or a read fails (lookups then go
// on reading whole buckets, and report the error themselves).
func (f *keyFile) buildFingerprints(stop *atomic.Bool) {
	fps := make([]byte, f.hdr.count)
	w := &keyWindow{f: f}
	for i := range fps {
		if i%windowKeys == 0 && stop.Load() {
			return
		}
		k := w.at(i)
		if k == nil {
			return
		}
		fps[i] = fingerprint(k, f.hdr.bits)
	}
	f.fp.Store(&fps)
}

// setFingerprints installs fps, the fingerprints writeFile returned for
// the file.
func (f *keyFile) setFingerprints(fps []byte) {
	if uint64(len(fps)) == f.hdr.count {
		f.fp.Store(&fps)
	}
}

// candidates returns the range of key indexes [lo, hi) that may hold k:
// its bucket, narrowed by fps (f.fp's, or nil) to the keys with k's
// fingerprint, empty when none has it.
func (f *keyFile) candidates(k *Key, fps []byte) (lo, hi int) {
	lo, hi = f.bucket(k)
	return f.narrowBy(fps, k, lo, hi)
}

// narrowBy narrows the bucket [lo, hi) of k by fps (see candidates).
func (f *keyFile) narrowBy(fps []byte, k *Key, lo, hi int) (int, int) {
	if fps == nil || hi-lo > maxFingerprintScan {
		return lo, hi
	}
	want := fingerprint(k, f.hdr.bits)
	for lo < hi && fps[lo] < want {
		lo++
	}
	end := lo
	for end < hi && fps[end] == want {
		end++
	}
	return lo, end
}

// fingerprints returns the file's fingerprints, or nil while they are
// not built; n is the number of keys about to be looked up (counted
// toward fpAfter).
func (f *keyFile) fingerprints(n int) []byte {
	if p := f.fp.Load(); p != nil {
		return *p
	}
	f.lookups.Add(int64(n))
	return nil
}

// wantsFingerprints reports whether the file has been looked up enough to
// build its fingerprints, once: the caller builds them.
func (f *keyFile) wantsFingerprints() bool {
	return f.fp.Load() == nil && f.lookups.Load() >= f.fpAfter() && f.building.CompareAndSwap(false, true)
}

// openFile opens the key file name and checks its header, size and
// bucket array (not the keys: see verify).
func openFile(name string, num uint64) (*keyFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("keytable: %w", err)
	}
	kf, err := readFile(f, fi.Size(), name)
	if err != nil {
		f.Close()
		return nil, err
	}
	kf.num, kf.c = num, f
	return kf, nil
}

// readFile reads the header, the tombstones and the bucket array of the
// key file of size bytes that r reads, checks them and returns the file.
// name names it in errors.
func readFile(r io.ReaderAt, size int64, name string) (*keyFile, error) {
	if size < headerSize {
		return nil, fmt.Errorf("%w: %s: %d bytes, shorter than a header", store.ErrCorrupt, name, size)
	}
	var hb [headerSize]byte
	if err := readAt(r, hb[:], 0, name); err != nil {
		return nil, err
	}
	h, err := decodeHeader(hb[:])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if uint64(size) != h.size() {
		return nil, fmt.Errorf("%w: %s: %d bytes, the header says %d", store.ErrCorrupt, name, size, h.size())
	}
	// The tombstones and the bucket array end the file: one read (its
	// size is bounded by the file's, checked above).
	nd := KeySize * h.deleted
	tail := make([]byte, nd+h.bucketBytes())
	if err := readAt(r, tail, int64(headerSize+KeySize*h.count), name); err != nil {
		return nil, err
	}
	kf := &keyFile{name: name, hdr: h, r: r, deleted: tail[:nd:nd], buckets: tail[nd:], gap: coalesceGap, maxRead: maxReadKeys}
	hdr := h.appendTo(nil)
	if crc32.Update(crc32.Checksum(hdr[:32], castagnoli), castagnoli, kf.buckets) != h.indexCRC {
		return nil, fmt.Errorf("%w: %s: header or bucket array checksum mismatch", store.ErrCorrupt, name)
	}
	// The checksum matched; still refuse offsets that would read out of
	// bounds (a checksum collision must not become a panic).
	prev := uint32(0)
	nb := 1 << h.bits
	for b := 0; b <= nb; b++ {
		o := binary.LittleEndian.Uint32(kf.buckets[4*b:])
		if o < prev || uint64(o) > h.count || (b == nb && uint64(o) != h.count) {
			return nil, fmt.Errorf("%w: %s: bucket %d offset %d out of order", store.ErrCorrupt, name, b, o)
		}
		prev = o
	}
	return kf, nil
}

// readAt fills p from r at off: a short read is an error naming the file,
// never a partial answer.
func readAt(r io.ReaderAt, p []byte, off int64, name string) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("keytable: read %s: %d bytes at %d: %w", name, len(p), off, err)
}

func (f *keyFile) close() error {
	if f.c == nil {
		return nil
	}
	err := f.c.Close()
	f.c = nil
	return err
}

// Batch lookups read the keys of neighbouring buckets in one pread: a
// run of buckets joins while the keys between two of them (read and
// thrown away) are at most coalesceGap, and the whole run at most
// maxReadKeys. A read costs a system call (about 1 µs); a gap key costs
// copying 32 bytes from the page cache (a few ns): 256 keys, 8 KiB, cost
// about as much as a call.
const (
	coalesceGap = 256
	maxReadKeys = 4096 // 128 KiB
)

// bucket returns the range of key indexes [lo, hi) that may hold k.
func (f *keyFile) bucket(k *Key) (lo, hi int) {
	b := leading(k, f.hdr.bits)
	return int(binary.LittleEndian.Uint32(f.buckets[4*b:])), int(binary.LittleEndian.Uint32(f.buckets[4*b+4:]))
}

// readKeys reads the keys [lo, hi) into buf, grown if need be.
func (f *keyFile) readKeys(buf []byte, lo, hi int) ([]byte, error) {
	n := (hi - lo) * KeySize
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	return buf, readAt(f.r, buf, int64(headerSize+lo*KeySize), f.name)
}

// narrow halves the key range [lo, hi) by reading single keys (into
// buf) until it holds at most maxRead keys (a bucket that large is
// hostile: its keys share their leading bits), or reports that k is at
// one of them.
func (f *keyFile) narrow(k *Key, lo, hi int, buf []byte) (int, int, bool, error) {
	for hi-lo > f.maxRead {
		m := int(uint(lo+hi) >> 1)
		kb, err := f.readKeys(buf, m, m+1)
		if err != nil {
			return lo, hi, false, err
		}
		switch c := bytes.Compare(kb, k[:]); {
		case c == 0:
			return lo, hi, true, nil
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, hi, false, nil
}

// isDeleted reports whether the file holds a tombstone of k.
func (f *keyFile) isDeleted(k *Key) bool {
	return len(f.deleted) > 0 && searchKeys(f.deleted, 0, len(f.deleted)/KeySize, k)
}

// find returns the state of k in the file: 1 live, -1 deleted, 0 absent.
// buf is a buffer to read into; find returns it, perhaps grown.
func (f *keyFile) find(k *Key, buf []byte) (int, []byte, error) {
	lo, hi := f.candidates(k, f.fingerprints(1))
	if lo < hi {
		lo, hi, ok, err := f.narrow(k, lo, hi, buf)
		if err != nil {
			return 0, buf, err
		}
		if ok {
			return 1, buf, nil
		}
		if buf, err = f.readKeys(buf, lo, hi); err != nil {
			return 0, buf, err
		}
		if searchKeys(buf, 0, hi-lo, k) {
			return 1, buf, nil
		}
	}
	if f.isDeleted(k) {
		return -1, buf, nil
	}
	return 0, buf, nil
}

// lookupBufs is the memory a lookup works in, kept for the next: the
// keys read, and a batch's candidate ranges.
type lookupBufs struct {
	keys  []byte
	spans []span
}

// span is a range of key indexes [lo, hi) of a file.
type span struct{ lo, hi uint32 }

// findBatch looks up keys[i] for each i of pending, in that order, with
// coalesced reads (see coalesceGap; keys in ascending order read the file
// in order). It calls found(i, live) for each key the file holds, live or
// deleted, and returns the others in pending's order, in pending's
// memory. lb is its working memory.
func (f *keyFile) findBatch(keys []Key, pending []int, lb *lookupBufs, found func(i int, live bool)) ([]int, error) {
	// The candidate ranges first, in loops of independent loads: the
	// bucket array and the fingerprints are larger than the caches, and
	// the processor overlaps the misses of loads that do not depend on
	// each other (a loop that also planned reads would take them one at
	// a time).
	spans := slices.Grow(lb.spans[:0], len(pending))[:len(pending)]
	lb.spans = spans
	for j, i := range pending {
		lo, hi := f.bucket(&keys[i])
		spans[j] = span{uint32(lo), uint32(hi)}
	}
	if fps := f.fingerprints(len(pending)); fps != nil {
		for j, i := range pending {
			lo, hi := f.narrowBy(fps, &keys[i], int(spans[j].lo), int(spans[j].hi))
			spans[j] = span{uint32(lo), uint32(hi)}
		}
	}
	buf := lb.keys
	defer func() { lb.keys = buf[:0] }()
	rest := pending[:0] // written behind the reads of pending
	settle := func(i int, hit bool) {
		switch {
		case hit:
			found(i, true)
		case f.isDeleted(&keys[i]):
			found(i, false)
		default:
			rest = append(rest, i)
		}
	}
	// The run: pending[start:j] read as the keys [runLo, runHi).
	start, runLo, runHi := 0, 0, 0
	flush := func(end int) error {
		if start == end {
			return nil
		}
		var err error
		if buf, err = f.readKeys(buf, runLo, runHi); err != nil {
			return err
		}
		for j := start; j < end; j++ {
			i := pending[j]
			settle(i, searchKeys(buf, int(spans[j].lo)-runLo, int(spans[j].hi)-runLo, &keys[i]))
		}
		return nil
	}
	for j := 0; j < len(pending); j++ {
		i := pending[j]
		lo, hi := int(spans[j].lo), int(spans[j].hi)
		if start < j && lo >= runLo && lo <= runHi+f.gap && max(hi, runHi)-runLo <= f.maxRead {
			runHi = max(hi, runHi)
			continue
		}
		if err := flush(j); err != nil {
			return pending, err
		}
		start, runLo, runHi = j, lo, hi
		if lo < hi && hi-lo <= f.maxRead {
			continue // starts a run
		}
		// No candidate, or a bucket too large for a read.
		start = j + 1
		hit := false
		if lo < hi {
			var err error
			if buf, hit, err = f.findLarge(&keys[i], lo, hi, buf); err != nil {
				return pending, err
			}
		}
		settle(i, hit)
	}
	if err := flush(len(pending)); err != nil {
		return pending, err
	}
	return rest, nil
}

// findLarge reports whether k is among the keys [lo, hi), more than
// maxReadKeys.
func (f *keyFile) findLarge(k *Key, lo, hi int, buf []byte) ([]byte, bool, error) {
	lo, hi, ok, err := f.narrow(k, lo, hi, buf)
	if err != nil || ok {
		return buf, ok, err
	}
	if buf, err = f.readKeys(buf, lo, hi); err != nil {
		return buf, false, err
	}
	return buf, searchKeys(buf, 0, hi-lo, k), nil
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

// windowKeys is how many keys a sequential reader (merges, scans,
// verify) reads at a time: 2,048 keys, 64 KiB.
const windowKeys = 2048

// A keyWindow reads a file's live keys by index through a window of
// windowKeys keys: cheap in order, one read a window. A read error is
// sticky in err, and at returns nil from then on.
type keyWindow struct {
	f        *keyFile
	buf      []byte
	start, n int // buf holds the keys [start, start+n)
	err      error
}

// at returns the i-th live key, valid until the next call.
func (w *keyWindow) at(i int) *Key {
	if w.err != nil {
		return nil
	}
	if i < w.start || i >= w.start+w.n {
		hi := min(i+windowKeys, int(w.f.hdr.count))
		w.buf, w.err = w.f.readKeys(w.buf, i, hi)
		if w.err != nil {
			w.n = 0
			return nil
		}
		w.start, w.n = i, hi-i
	}
	o := (i - w.start) * KeySize
	return (*Key)(w.buf[o : o+KeySize])
}

// tombstone returns the i-th tombstone.
func (f *keyFile) tombstone(i int) *Key {
	return (*Key)(f.deleted[i*KeySize : i*KeySize+KeySize])
}

// verify checks the checksum of the keys and tombstones and their order,
// reading the keys in order.
func (f *keyFile) verify() error {
	w := &keyWindow{f: f}
	crc := uint32(0)
	var prev Key
	for i := 0; i < int(f.hdr.count); i += windowKeys {
		if w.at(i) == nil {
			return w.err
		}
		b := w.buf[:w.n*KeySize]
		crc = crc32.Update(crc, castagnoli, b)
		for o := 0; o < len(b); o += KeySize {
			if (i > 0 || o > 0) && bytes.Compare(prev[:], b[o:o+KeySize]) >= 0 {
				return fmt.Errorf("%w: %s: keys out of order at %d", store.ErrCorrupt, f.name, i+o/KeySize)
			}
			prev = Key(b[o : o+KeySize])
		}
	}
	crc = crc32.Update(crc, castagnoli, f.deleted)
	if crc != f.hdr.dataCRC {
		return fmt.Errorf("%w: %s: key checksum mismatch", store.ErrCorrupt, f.name)
	}
	s := f.deleted
	for i := KeySize; i < len(s); i += KeySize {
		if bytes.Compare(s[i-KeySize:i], s[i:i+KeySize]) >= 0 {
			return fmt.Errorf("%w: %s: tombstones out of order at %d", store.ErrCorrupt, f.name, i/KeySize)
		}
	}
	return nil
}
