package keytable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"sync/atomic"

	"github.com/urlhash/urlhash/index/internal/valuefile"
	"github.com/urlhash/urlhash/store"
)

// fingerprint returns 8 bits of a hash of the whole of k. Keys that
// share their leading bytes, and so a bucket (a frontier queue's due keys
// share 8), still differ in it: bits of the lead alone would narrow such
// a bucket to nothing.
func fingerprint(k *Key) byte {
	h := binary.LittleEndian.Uint64(k[0:]) * 0x9e3779b97f4a7c15
	h = (h ^ binary.LittleEndian.Uint64(k[8:])) * 0xc2b2ae3d27d4eb4f
	h = (h ^ binary.LittleEndian.Uint64(k[16:])) * 0x165667b19e3779f9
	h = (h ^ binary.LittleEndian.Uint64(k[24:])) * 0x9e3779b97f4a7c15
	h ^= h >> 32
	return byte((h * 0xc2b2ae3d27d4eb4f) >> 56)
}

// leading returns the leading b bits of k.
func leading(k *Key, b uint8) uint32 {
	if b == 0 {
		return 0
	}
	return uint32(binary.BigEndian.Uint64(k[:8]) >> (64 - b))
}

// A keyFile is an open key file (and its value file, when it has values).
// Its header, bucket array (4 bytes a bucket, about half a byte a key) and
// tombstones are in memory; its rows are read on demand with pread, so
// that the pages lookups touch stay in the page cache and out of the
// process's resident set (a mapping counted every touched page in it:
// about 30 bytes a key once lookups had touched them all). A version 2
// file's rows are read by whole pages, each checked against its checksum
// as it is read.
//
// Once built, a byte a key more: the keys' fingerprints, 8 bits of a hash
// of each whole key. A lookup then reads only the rows of its bucket from
// the first to the last whose fingerprint is the key's: none, most of the
// time, in a file that does not hold the key (1 in 32 with 8 keys a bucket;
// a third in a bucket of 100 keys that share their lead), so that a
// present key costs one read wherever it is, not one in each file searched
// before. A merge builds them as it writes a file; a file opened from disk
// gets them once lookups have touched it enough (see fpAfter), by a read
// that checks every page (fingerprints are never taken from damaged rows).
//
// A file is counted (refs): by the table while it lists it, and by each
// reader or delta that uses it beyond the table's lock; the last release
// closes it, and removes it once the table no longer lists it (retired).
type keyFile struct {
	num     uint64
	name    string
	hdr     fileHeader
	r       io.ReaderAt // the file
	c       io.Closer   // closes r; nil: nothing to close
	deleted []byte      // tombstones × 32
	buckets []byte      // (1<<bits + 1) × u32
	vals    *valuefile.Reader
	vc      io.Closer // closes vals' file
	cache   *valuefile.Cache
	fs      fsys
	// gap and maxRead are coalesceGap and maxReadKeys (benchmarks vary
	// them).
	gap, maxRead int

	fp       atomic.Pointer[[]byte] // the keys' fingerprints, once built: count bytes
	lookups  atomic.Int64           // lookups that searched the file while fp was not built
	building atomic.Bool            // a build of fp was started

	refs    atomic.Int64
	retired atomic.Bool
}

// Fingerprints are scanned in buckets of at most maxFingerprintScan keys
// (a few hundred nanoseconds, against a read of up to 128 KiB); a larger
// bucket (its keys share their leading bits: a queue of thousands of
// URLs, or hostile keys) is searched as it was before fingerprints.
const maxFingerprintScan = 4096

// fpAfter is the number of lookups in a file without fingerprints after
// which they are built (by one sequential read of the file, about as much
// as 1 in 32 of those lookups' reads cost): a one-off command that looks
// up a few keys builds none.
func (f *keyFile) fpAfter() int64 { return max(int64(f.hdr.count/4), 4096) }

// acquire counts a user of f; the caller holds the table's lock (f is
// listed) or a count already.
func (f *keyFile) acquire() { f.refs.Add(1) }

// release drops a count; the last closes f, and removes its files when
// the table no longer lists it.
func (f *keyFile) release() {
	if f.refs.Add(-1) != 0 {
		return
	}
	f.close()
	if f.retired.Load() && f.fs != nil {
		f.fs.Remove(f.name)
		if f.vals != nil {
			f.fs.Remove(valueName(f.name))
		}
	}
}

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
		row := w.at(i)
		if row == nil {
			return
		}
		fps[i] = fingerprint((*Key)(row))
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

// candidates returns the range of row indexes [lo, hi) that may hold k:
// its bucket, narrowed by fps (f.fp's, or nil) to the rows with k's
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
	// Fingerprints are not ordered in a bucket: the candidates run from
	// the first match to the last (one row, but for a false match).
	want := fingerprint(k)
	first := bytes.IndexByte(fps[lo:hi], want)
	if first < 0 {
		return lo, lo
	}
	return lo + first, lo + bytes.LastIndexByte(fps[lo:hi], want) + 1
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

// openFile opens the key file name (and its value file) through fs and
// checks what it can without reading the rows: the header, the size, the
// bucket array, the tombstones and the value file's header and index (the
// rows are checked as they are read, and by verify).
func openFile(fs fsys, name string, num uint64, cache *valuefile.Cache) (*keyFile, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("keytable: %w", err)
	}
	kf, err := readFile(f, size, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	kf.num, kf.c, kf.fs, kf.cache = num, f, fs, cache
	if kf.hdr.values > 0 {
		if err := kf.openValues(fs, cache); err != nil {
			f.Close()
			return nil, err
		}
	}
	kf.refs.Store(1)
	return kf, nil
}

// valueName returns the name of the value file of key file name.
func valueName(name string) string {
	return name[:len(name)-len(".keys")] + ".values"
}

// openValues opens the file's value file, which must hold its values.
func (f *keyFile) openValues(fs fsys, cache *valuefile.Cache) error {
	name := valueName(f.name)
	vf, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return fmt.Errorf("%w: %s, the value file of %s, is missing", store.ErrCorrupt, name, f.name)
		}
		return fmt.Errorf("keytable: %w", err)
	}
	size, err := vf.Size()
	if err == nil {
		f.vals, err = valuefile.Open(vf, size, name, cache)
	}
	if err == nil && (f.vals.Len() < f.hdr.values || f.vals.Pair() != f.hdr.pair) {
		err = fmt.Errorf("%w: %s holds %d values (pairing %d), %s refers to %d (pairing %d)",
			store.ErrCorrupt, name, f.vals.Len(), f.vals.Pair(), f.name, f.hdr.values, f.hdr.pair)
	}
	if err != nil {
		vf.Close()
		f.vals = nil
		return err
	}
	f.vc = vf
	return nil
}

// readFile reads the header, the tombstones and the bucket array of the
// key file of size bytes that r reads, checks them and returns the file.
// name names it in errors.
func readFile(r io.ReaderAt, size int64, name string) (*keyFile, error) {
	if size < headerSize1 {
		return nil, fmt.Errorf("%w: %s: %d bytes, shorter than a header", store.ErrCorrupt, name, size)
	}
	hb := make([]byte, min(size, headerSize))
	if err := valuefile.ReadAt(r, hb, 0, name); err != nil {
		return nil, err
	}
	h, err := decodeHeader(hb)
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
	if err := valuefile.ReadAt(r, tail, int64(h.hsize()+h.rowsBytes()), name); err != nil {
		return nil, err
	}
	kf := &keyFile{name: name, hdr: h, r: r, deleted: tail[:nd:nd], buckets: tail[nd:], gap: coalesceGap, maxRead: maxReadKeys}
	if h.indexSum(hb, kf.buckets) != h.indexCRC {
		return nil, fmt.Errorf("%w: %s: header or bucket array checksum mismatch", store.ErrCorrupt, name)
	}
	if h.version != fileVersion1 && crc32.Checksum(kf.deleted, castagnoli) != h.tombCRC {
		return nil, fmt.Errorf("%w: %s: tombstone checksum mismatch", store.ErrCorrupt, name)
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

func (f *keyFile) close() error {
	if f.vals != nil && f.cache != nil {
		f.cache.Forget(f.vals)
	}
	if f.vc != nil {
		f.vc.Close()
		f.vc = nil
	}
	if f.c == nil {
		return nil
	}
	err := f.c.Close()
	f.c = nil
	return err
}

// Batch lookups read the rows of neighbouring buckets in one pread: a
// run of buckets joins while the rows between two of them (read and
// thrown away) are at most coalesceGap, and the whole run at most
// maxReadKeys. A read costs a system call (about 1 µs); a gap row costs
// copying its bytes from the page cache (a few ns): 256 keys, 8 KiB, cost
// about as much as a call. Only the pages that hold candidates are
// checked against their checksums.
const (
	coalesceGap = 256
	maxReadKeys = 4096 // 128 KiB of keys
)

// bucket returns the range of row indexes [lo, hi) that may hold k.
func (f *keyFile) bucket(k *Key) (lo, hi int) {
	b := leading(k, f.hdr.bits)
	return int(binary.LittleEndian.Uint32(f.buckets[4*b:])), int(binary.LittleEndian.Uint32(f.buckets[4*b+4:]))
}

// rows are the rows [first, end) of a file read into b: whole pages
// (version 2), first the first row of a page.
type rows struct {
	f          *keyFile
	b          []byte
	first, end int
}

// read reads the pages that hold rows [lo, hi) (lo < hi) into buf, grown
// if need be, unchecked (see check).
func (f *keyFile) read(buf []byte, lo, hi int) (rows, error) {
	h := &f.hdr
	first, end := lo, hi
	if h.pageShift != 0 {
		first = lo >> h.pageShift << h.pageShift
		end = int(min((uint64(hi-1)>>h.pageShift+1)<<h.pageShift, h.count))
	}
	off := h.pageOff(uint64(first) >> h.pageShift)
	n := int(f.rowsBytes(first, end))
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	rs := rows{f: f, b: buf, first: first, end: end}
	return rs, valuefile.ReadAt(f.r, buf, off, f.name)
}

// rowsBytes returns the bytes of the rows [first, end), first the first
// row of a page (version 2), checksums included.
func (f *keyFile) rowsBytes(first, end int) uint64 {
	h := &f.hdr
	if h.pageShift == 0 {
		return uint64(end-first) * KeySize
	}
	pages := uint64(end-first+int(h.pageRows())-1) >> h.pageShift
	return uint64(end-first)*uint64(h.lay.rw) + 4*pages
}

// row returns row i.
func (rs *rows) row(i int) []byte {
	h := &rs.f.hdr
	if h.pageShift == 0 {
		o := (i - rs.first) * KeySize
		return rs.b[o : o+KeySize]
	}
	j := i - rs.first
	o := (j>>h.pageShift)*int(h.pageBytes()) + (j&(1<<h.pageShift-1))*h.lay.rw
	return rs.b[o : o+h.lay.rw]
}

// check checks the checksums of the pages that hold rows [lo, hi);
// version 1 files have none.
func (rs *rows) check(lo, hi int) error {
	h := &rs.f.hdr
	if h.pageShift == 0 || lo >= hi {
		return nil
	}
	for p := lo >> h.pageShift; p <= (hi-1)>>h.pageShift; p++ {
		if err := rs.checkPage(p); err != nil {
			return err
		}
	}
	return nil
}

// checkPage checks page p's checksum.
func (rs *rows) checkPage(p int) error {
	h := &rs.f.hdr
	start := (p - rs.first>>h.pageShift) * int(h.pageBytes())
	n := int(min(h.pageRows(), h.count-uint64(p)<<h.pageShift)) * h.lay.rw
	pg := rs.b[start : start+n+4]
	if pageSum(uint64(p), pg[:n]) != binary.LittleEndian.Uint32(pg[n:]) {
		return fmt.Errorf("%w: %s: page %d (rows %d to %d, offset %d) checksum mismatch", store.ErrCorrupt, rs.f.name,
			p, p<<h.pageShift, p<<h.pageShift+n/h.lay.rw-1, h.pageOff(uint64(p)))
	}
	return nil
}

// search returns the index of the row among [lo, hi) whose key is k, or
// -1.
func (rs *rows) search(lo, hi int, k *Key) int {
	lead := binary.BigEndian.Uint64(k[:8])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := compareLead(rs.row(m), lead, k); {
		case c == 0:
			return m
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return -1
}

// narrow halves the row range [lo, hi) by reading single rows (their
// pages, into buf) until it holds at most maxRead rows (a bucket that
// large is hostile: its keys share their leading bits), or finds k at
// one of them (at >= 0, in rs).
func (f *keyFile) narrow(k *Key, lo, hi int, buf []byte) (_, _ int, rs rows, at int, err error) {
	rs.b = buf
	for hi-lo > f.maxRead {
		m := int(uint(lo+hi) >> 1)
		if rs, err = f.read(rs.b, m, m+1); err == nil {
			err = rs.check(m, m+1)
		}
		if err != nil {
			return lo, hi, rs, -1, err
		}
		switch c := bytes.Compare(rs.row(m)[:KeySize], k[:]); {
		case c == 0:
			return lo, hi, rs, m, nil
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, hi, rs, -1, nil
}

// isDeleted reports whether the file holds a tombstone of k.
func (f *keyFile) isDeleted(k *Key) bool {
	return len(f.deleted) > 0 && searchKeys(f.deleted, 0, len(f.deleted)/KeySize, k)
}

// The states of a key in a source.
const (
	stAbsent = 0
	stRow    = 1 // a row (perhaps over a tombstone)
	stDead   = 2 // a tombstone only
)

// find returns the state of k in the file and, for a row, its bytes (in
// buf, which find returns, perhaps grown).
func (f *keyFile) find(k *Key, buf []byte) (int, []byte, []byte, error) {
	lo, hi := f.candidates(k, f.fingerprints(1))
	if lo < hi {
		lo, hi, rs, at, err := f.narrow(k, lo, hi, buf)
		buf = rs.b
		if err != nil {
			return stAbsent, nil, buf, err
		}
		if at >= 0 {
			return stRow, rs.row(at), buf, nil
		}
		if rs, err = f.read(buf, lo, hi); err == nil {
			err = rs.check(lo, hi)
		}
		buf = rs.b
		if err != nil {
			return stAbsent, nil, buf, err
		}
		if at := rs.search(lo, hi, k); at >= 0 {
			return stRow, rs.row(at), buf, nil
		}
	}
	if f.isDeleted(k) {
		return stDead, nil, buf, nil
	}
	return stAbsent, nil, buf, nil
}

// lookupBufs is the memory a lookup works in, kept for the next: the
// rows read, a batch's candidate ranges and the pages checked.
type lookupBufs struct {
	keys    []byte
	spans   []span
	checked []uint64 // a bit a page of the run being read
}

// span is a range of row indexes [lo, hi) of a file.
type span struct{ lo, hi uint32 }

// findBatch looks up keys[i] for each i of pending, in that order, with
// coalesced reads (see coalesceGap; keys in ascending order read the file
// in order). It calls found(i, st, row) for each key the file holds, a row
// (row its bytes, valid during the call) or a tombstone, and returns the
// others in pending's order, in pending's memory. lb is its working
// memory.
func (f *keyFile) findBatch(keys []Key, pending []int, lb *lookupBufs, found func(i, st int, row []byte)) ([]int, error) {
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
	settle := func(i int, row []byte) {
		switch {
		case row != nil:
			found(i, stRow, row)
		case f.isDeleted(&keys[i]):
			found(i, stDead, nil)
		default:
			rest = append(rest, i)
		}
	}
	h := &f.hdr
	// The run: pending[start:j] read as the rows [runLo, runHi).
	start, runLo, runHi := 0, 0, 0
	flush := func(end int) error {
		if start == end {
			return nil
		}
		rs, err := f.read(buf, runLo, runHi)
		buf = rs.b
		if err != nil {
			return err
		}
		p0 := rs.first >> h.pageShift
		if h.pageShift != 0 {
			np := (rs.end-rs.first+int(h.pageRows())-1)>>h.pageShift + 1
			lb.checked = slices.Grow(lb.checked[:0], np/64+1)[:np/64+1]
			clear(lb.checked)
		}
		for j := start; j < end; j++ {
			i := pending[j]
			lo, hi := int(spans[j].lo), int(spans[j].hi)
			if lo >= hi {
				settle(i, nil)
				continue
			}
			if h.pageShift != 0 {
				for p := lo >> h.pageShift; p <= (hi-1)>>h.pageShift; p++ {
					b := p - p0
					if lb.checked[b/64]&(1<<(b%64)) != 0 {
						continue
					}
					if err := rs.checkPage(p); err != nil {
						return err
					}
					lb.checked[b/64] |= 1 << (b % 64)
				}
			}
			var row []byte
			if at := rs.search(lo, hi, &keys[i]); at >= 0 {
				row = rs.row(at)
			}
			settle(i, row)
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
		var row []byte
		if lo < hi {
			st, r, b, err := f.findLarge(&keys[i], lo, hi, buf)
			buf = b
			if err != nil {
				return pending, err
			}
			if st == stRow {
				row = r
			}
		}
		settle(i, row)
	}
	if err := flush(len(pending)); err != nil {
		return pending, err
	}
	return rest, nil
}

// findLarge looks k up among the rows [lo, hi), more than maxReadKeys.
func (f *keyFile) findLarge(k *Key, lo, hi int, buf []byte) (int, []byte, []byte, error) {
	lo, hi, rs, at, err := f.narrow(k, lo, hi, buf)
	if err != nil {
		return stAbsent, nil, rs.b, err
	}
	if at >= 0 {
		return stRow, rs.row(at), rs.b, nil
	}
	if rs, err = f.read(rs.b, lo, hi); err == nil {
		err = rs.check(lo, hi)
	}
	if err != nil {
		return stAbsent, nil, rs.b, err
	}
	if at := rs.search(lo, hi, k); at >= 0 {
		return stRow, rs.row(at), rs.b, nil
	}
	return stAbsent, nil, rs.b, nil
}

// compareLead compares the key that starts row e with k, whose leading 8
// bytes are lead (big-endian): the leading words first, the cheap compare
// that decides almost always.
func compareLead(e []byte, lead uint64, k *Key) int {
	switch l := binary.BigEndian.Uint64(e[:8]); {
	case l < lead:
		return -1
	case l > lead:
		return 1
	}
	return bytes.Compare(e[8:KeySize], k[8:])
}

// searchKeys reports whether k is among the sorted keys[lo:hi] (indexes
// of 32-byte keys).
func searchKeys(keys []byte, lo, hi int, k *Key) bool {
	lead := binary.BigEndian.Uint64(k[:8])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := compareLead(keys[m*KeySize:], lead, k); {
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

// windowKeys is how many rows a sequential reader (merges, scans,
// verify) reads at a time: 2,048 rows (64 KiB of keys).
const windowKeys = 2048

// A keyWindow reads a file's rows by index through a window of about
// windowKeys rows, checking every page it reads: cheap in order, one read
// a window. A read error or a checksum mismatch is sticky in err, and at
// returns nil from then on.
//
// For a version 1 file (no page checksums), a window read in order (a
// merge's, verify's) sums the keys as it goes: sum covers the rows
// [0, summed) once every row was read in order.
type keyWindow struct {
	f      *keyFile
	rs     rows
	err    error
	sum    uint32
	summed int
	// span is the rows a read covers when fewer than windowKeys (a
	// prefix scan's range: a frontier queue's few rows; 0: windowKeys).
	span int
}

// at returns row i, valid until the next call.
func (w *keyWindow) at(i int) []byte {
	if w.err != nil {
		return nil
	}
	if i < w.rs.first || i >= w.rs.end || w.rs.b == nil {
		n := windowKeys
		if w.span > 0 {
			n = w.span
		}
		hi := min(i+n, int(w.f.hdr.count))
		rs, err := w.f.read(w.rs.b, i, hi)
		if err == nil {
			err = rs.check(rs.first, rs.end)
		}
		w.rs = rs
		if err != nil {
			w.err = err
			w.rs.end = w.rs.first // empty
			return nil
		}
		if w.f.hdr.pageShift == 0 && rs.first == w.summed {
			w.sum = crc32.Update(w.sum, castagnoli, rs.b)
			w.summed = rs.end
		}
	}
	return w.rs.row(i)
}

// checkSum reports, for a version 1 file whose rows were all read in
// order, whether the rows and the tombstones match the header's checksum:
// what a merge checks before it installs what it wrote.
func (w *keyWindow) checkSum() error {
	f := w.f
	if f.hdr.pageShift != 0 || w.err != nil {
		return w.err
	}
	if w.summed != int(f.hdr.count) {
		return fmt.Errorf("keytable: %s: %d of %d keys summed", f.name, w.summed, f.hdr.count)
	}
	if crc32.Update(w.sum, castagnoli, f.deleted) != f.hdr.dataCRC {
		return fmt.Errorf("%w: %s: key checksum mismatch", store.ErrCorrupt, f.name)
	}
	return nil
}

// tombstone returns the i-th tombstone.
func (f *keyFile) tombstone(i int) *Key {
	return (*Key)(f.deleted[i*KeySize : i*KeySize+KeySize])
}

// verify checks every page's checksum (a version 1 file's whole-file
// one), the order of the keys and the tombstones, the value references
// and the value file's blocks.
func (f *keyFile) verify() error {
	w := &keyWindow{f: f}
	var prev Key
	lay := &f.hdr.lay
	// Each value referred to once: a bit a value of the value file.
	var refs []uint64
	var nrefs uint64
	if f.vals != nil {
		refs = make([]uint64, (f.vals.Len()+63)/64)
	}
	for i := range int(f.hdr.count) {
		row := w.at(i)
		if row == nil {
			return w.err
		}
		if i > 0 && bytes.Compare(prev[:], row[:KeySize]) >= 0 {
			return fmt.Errorf("%w: %s: keys out of order at %d", store.ErrCorrupt, f.name, i)
		}
		prev = Key(row[:KeySize])
		if r := uint64(lay.ref(row)); r != 0 {
			o := r - 1
			if f.vals == nil || o >= f.vals.Len() || refs[o/64]&(1<<(o%64)) != 0 {
				return fmt.Errorf("%w: %s: row %d refers to value %d, out of range or referred to twice", store.ErrCorrupt, f.name, i, o)
			}
			refs[o/64] |= 1 << (o % 64)
			nrefs++
		}
	}
	if err := w.checkSum(); err != nil {
		return err
	}
	if nrefs != f.hdr.values {
		return fmt.Errorf("%w: %s: rows refer to %d values, the header says %d", store.ErrCorrupt, f.name, nrefs, f.hdr.values)
	}
	s := f.deleted
	for i := KeySize; i < len(s); i += KeySize {
		if bytes.Compare(s[i-KeySize:i], s[i:i+KeySize]) >= 0 {
			return fmt.Errorf("%w: %s: tombstones out of order at %d", store.ErrCorrupt, f.name, i/KeySize)
		}
	}
	if f.vals != nil {
		return f.vals.Verify()
	}
	return nil
}
