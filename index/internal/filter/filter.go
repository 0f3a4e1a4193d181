package filter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Filter width limits. The filter keeps the leading k bits of every full
// entry, with k = bitLen(N) + headroom, so that about N/2^k <= 1/1024 of
// absent keys are answered "maybe".
const (
	// MinBits is the narrowest filter, in bits of a full entry's hash.
	MinBits = 20
	// MaxBits is the widest filter: the 8 leading bytes.
	MaxBits  = 64
	headroom = 10
)

// BitsFor returns the filter width for n full entries.
func BitsFor(n uint64) uint8 {
	k := bits.Len64(n) + headroom
	return uint8(min(max(k, MinBits), MaxBits))
}

// A Filter is the in-memory membership filter. It may answer "maybe" for an
// absent key, never "absent" for a stored one. Callers synchronise: the
// methods that add are writes, the others reads.
//
// The full entries' values live in one form at a time: a roaring64 bitmap
// while they are too sparse for a flat set (a new filter sized for a load
// ahead of it, a wider one being filled), and the flat set with its
// overlay once they are dense enough, which the filter switches to as soon
// as it can. Holding both cost 3.4..4.2 bytes a value for the bitmap beside
// the flat set's 2.1 (see BenchmarkFormsHeap).
type Filter struct {
	k     uint8
	full  *roaring64.Bitmap // leading k bits of every full entry, or nil once flat
	short *roaring.Bitmap   // leading 32 bits of every prefix entry

	// flat, once non-nil, holds the full entries' values together with
	// its overlay, the values added since its last merge (none of them in
	// flat): tail, ascending and above all others (a load adds its keys
	// in order: they append), and recent, the rest, with lo..hi the range
	// of its values (a probe outside it skips the set).
	flat   *flatSet
	tail   []uint64
	recent valueSet
	lo, hi uint64
	// unchecked counts the values added to full since its last density
	// check (counting its values costs a pass over its containers).
	unchecked int
	// expect is how many values the filter expects to hold (see Expect).
	expect uint64
}

// New returns an empty filter of width k (see BitsFor).
func New(k uint8) *Filter {
	return &Filter{k: k, full: roaring64.New(), short: roaring.New()}
}

// Wider returns an empty filter of width k for the full entries that
// shares f's bitmap of the prefix entries (their values do not depend on
// the width): the filter a growth fills from the keys while writers add
// to both.
func (f *Filter) Wider(k uint8) *Filter {
	return &Filter{k: k, full: roaring64.New(), short: f.short}
}

// Bits returns the filter's width k.
func (f *Filter) Bits() uint8 { return f.k }

// IsTooNarrowFor reports whether n full entries outgrew the filter: a
// wider one would keep its false positives near 1/1024.
func (f *Filter) IsTooNarrowFor(n uint64) bool {
	return f.k < MaxBits && n > 1<<(f.k-headroom)
}

// lead returns the leading k bits of h.
func (f *Filter) lead(h *hashkey.Hash) uint64 {
	return binary.BigEndian.Uint64(h[:8]) >> (64 - uint(f.k))
}

// Expect tells the filter that it is about to hold about n full entries
// (a load's): the flat form then makes room for them once, rather than
// growing by copies (each holding the old values and the new beside them).
func (f *Filter) Expect(n uint64) {
	f.expect = n
	if f.flat != nil && n > uint64(cap(f.flat.low)) && n < 1<<32 {
		f.flat.low = slices.Grow(f.flat.low, int(n)-len(f.flat.low))
	}
}

// AddFull adds the full entry h.
func (f *Filter) AddFull(h *hashkey.Hash) { f.add(f.lead(h)) }

// checkEvery is how many values are added to the bitmap between two
// checks of whether it is dense enough for the flat set.
const checkEvery = 1 << 12

// add adds the value v.
func (f *Filter) add(v uint64) {
	if f.flat == nil {
		f.full.Add(v)
		if f.unchecked++; f.unchecked >= checkEvery {
			f.maybeFlatten()
		}
		return
	}
	if f.flat.has(v) || f.overlayHas(v) {
		return
	}
	if v >= f.flat.top && (len(f.tail) == 0 || v > f.tail[len(f.tail)-1]) && (f.recent.len() == 0 || v > f.hi) {
		f.tail = append(f.tail, v)
	} else {
		if f.recent.len() == 0 {
			f.lo, f.hi = v, v
		}
		f.lo, f.hi = min(f.lo, v), max(f.hi, v)
		f.recent.add(v)
	}
	if f.recent.len()+len(f.tail) > f.recentMax() {
		f.mergeRecent(nil)
	}
}

// overlayHas reports whether the overlay holds v.
func (f *Filter) overlayHas(v uint64) bool {
	if len(f.tail) > 0 && v >= f.tail[0] && v <= f.tail[len(f.tail)-1] {
		if _, ok := slices.BinarySearch(f.tail, v); ok {
			return true
		}
	}
	if f.recent.len() == 0 || v < f.lo || v > f.hi {
		return false
	}
	return f.recent.has(v)
}

// recentMax is how many values the overlay holds before a merge into the
// flat set. A merge costs a pass over the set: one each time it grew by a
// sixteenth keeps that to a few passes per value added, and the overlay
// (a valueSet: 16 to 32 bytes a value; the tail 8) near two bytes per value at
// most.
func (f *Filter) recentMax() int { return max(1<<12, f.flat.len()/16) }

// mergeRecent merges the overlay and the values extra (any order, repeats
// allowed; sorted in place) into the flat set. Past what a flat set can
// hold (2^32 values) the filter returns to the bitmap.
func (f *Filter) mergeRecent(extra []uint64) {
	if len(extra) == 0 && f.recent.len() == 0 && uint64(f.flat.len()+len(f.tail)) < 1<<32 {
		f.flat.appendTail(f.tail, f.expect) // in place: no pass over the set
		f.tail = nil
		return
	}
	extra = append(extra, f.tail...)
	extra = f.recent.appendTo(extra)
	f.tail = nil
	f.recent.reset()
	if m := f.flat.merged(f.k, extra, f.expect); m != nil {
		f.flat = m
		return
	}
	full := roaring64.New()
	f.flat.each(func(v uint64) { full.Add(v) })
	full.AddMany(extra)
	f.full, f.flat, f.recent = full, nil, valueSet{}
}

// maybeFlatten replaces the bitmap by the flat set when its values are
// dense enough for one.
func (f *Filter) maybeFlatten() {
	f.unchecked = 0
	flat := buildFlat(f.full, f.k, f.expect)
	if flat == nil {
		return
	}
	f.full, f.flat, f.recent = nil, flat, valueSet{}
}

// AddPrefix adds the prefix entry p (at least 4 bytes).
func (f *Filter) AddPrefix(p []byte) { f.short.Add(binary.BigEndian.Uint32(p)) }

// AddPrefixes adds prefix entries by their first 4 bytes, big-endian.
func (f *Filter) AddPrefixes(firsts []uint32) { f.short.AddMany(firsts) }

// AddLeads adds full entries by the leading 8 bytes of their hashes,
// big-endian, ascending (a load's, a key-only pass's), with scratch as work
// space, which it returns. scratch may be leads[:0]: the values then
// replace the leads in place.
func (f *Filter) AddLeads(leads, scratch []uint64) []uint64 {
	shift := 64 - uint(f.k)
	scratch = scratch[:0]
	for _, l := range leads {
		scratch = append(scratch, l>>shift)
	}
	switch {
	case f.flat == nil:
		f.full.AddMany(scratch) // ascending: roaring appends
		f.maybeFlatten()
	case len(scratch) > f.recentMax():
		// Straight into the flat set: no overlay to hold them.
		f.mergeRecent(scratch)
	default:
		for _, v := range scratch {
			f.add(v)
		}
	}
	return scratch
}

// MayHaveFull reports whether a full entry h may be stored.
func (f *Filter) MayHaveFull(h *hashkey.Hash) bool {
	v := f.lead(h)
	if f.flat != nil {
		return f.flat.has(v) || f.overlayHas(v)
	}
	return f.full.Contains(v)
}

// MayHavePrefixOf reports whether a prefix entry that h starts with may be
// stored.
func (f *Filter) MayHavePrefixOf(h *hashkey.Hash) bool { return f.MayHavePrefix(h[:4]) }

// MayHavePrefix reports whether a prefix entry that starts with the first
// 4 bytes of p may be stored.
func (f *Filter) MayHavePrefix(p []byte) bool {
	return !f.short.IsEmpty() && f.short.Contains(binary.BigEndian.Uint32(p))
}

// MayHaveEntry reports whether the entry keyed by h (all of it, or a prefix
// of it when prefix is set) may be stored: every prefix entry is at least 4
// bytes, so the prefix bitmap over first 4 bytes answers for it.
func (f *Filter) MayHaveEntry(h *hashkey.Hash, prefix bool) bool {
	if prefix {
		return f.MayHavePrefixOf(h)
	}
	return f.MayHaveFull(h)
}

// MemBytes is the memory the filter holds.
func (f *Filter) MemBytes() uint64 {
	n := f.short.GetSizeInBytes() + f.recent.memBytes() + 8*uint64(cap(f.tail))
	if f.flat != nil {
		return n + f.flat.sizeBytes()
	}
	return n + f.full.GetSizeInBytes()
}

// SizeBytes is the serialized size of both bitmaps: exact for the bitmap
// form, and for the flat form the encoding of its set plus 2 bytes for each
// value of the overlay.
func (f *Filter) SizeBytes() uint64 {
	n := f.short.GetSerializedSizeInBytes()
	if f.flat != nil {
		return n + f.flat.encodedSize() + 2*uint64(f.recent.len()+len(f.tail))
	}
	return n + f.full.GetSerializedSizeInBytes()
}

// Marshal returns the portable encoding of both bitmaps (roaring's, the
// full entries' then the prefix entries') and their lengths. The flat form
// is encoded as the bitmap it stands for, one 32-bit bitmap at a time,
// without building the whole.
func (f *Filter) Marshal() (data []byte, fullLen, shortLen uint64, err error) {
	var buf bytes.Buffer
	buf.Grow(int(f.SizeBytes()))
	if fullLen, shortLen, err = f.Encode(&buf); err != nil {
		return nil, 0, 0, err
	}
	return buf.Bytes(), fullLen, shortLen, nil
}

// Encode writes what Marshal returns to w as it is made, never holding
// the whole encoding (at 100M keys about 210 MB, beside the filter), and
// returns the lengths of its two parts.
func (f *Filter) Encode(w io.Writer) (fullLen, shortLen uint64, err error) {
	cw := &countingWriter{w: w}
	if f.flat != nil {
		f.writeFlat(cw)
	} else {
		f.full.WriteTo(cw) // its error is cw's
	}
	fullLen = cw.n
	if cw.err == nil {
		f.short.WriteTo(cw)
	}
	if cw.err != nil {
		return 0, 0, fmt.Errorf("index: encode filter: %w", cw.err)
	}
	return fullLen, cw.n - fullLen, nil
}

// countingWriter counts the bytes written through it and keeps the first
// error, after which it writes nothing.
type countingWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += uint64(n)
	c.err = err
	return n, err
}

// writeFlat writes the values of the flat form and its overlay as
// roaring64's WriteTo writes the bitmap of the same values (TestFlatEncoding
// compares them): the count of 32-bit bitmaps, then each one's leading 32
// bits and roaring's encoding of the rest (a cookie, its count of 16-bit
// containers, each one's key and cardinality - 1, their offsets, then
// each container: up to 4096 values as an array of uint16, more as a
// bitmap of 8 KiB), all little-endian. A bucket of the flat set is one
// container. A write error stays in cw.
func (f *Filter) writeFlat(cw *countingWriter) {
	extra := append(f.recent.appendTo(nil), f.tail...)
	slices.Sort(extra)
	s := f.flat
	nb := len(s.offsets) - 1
	const perGroup = 1 << (32 - flatLowBits) // buckets of one 32-bit bitmap
	// inBucket returns how many of extra from i on are in bucket b.
	inBucket := func(i, b int) int {
		j := i
		for j < len(extra) && extra[j]>>flatLowBits == uint64(b) {
			j++
		}
		return j - i
	}
	groups := uint64(0)
	for g, i := 0, 0; g < nb; g += perGroup {
		end := min(g+perGroup, nb)
		j := i
		for j < len(extra) && extra[j]>>flatLowBits < uint64(end) {
			j++
		}
		if s.offsets[end] > s.offsets[g] || j > i {
			groups++
		}
		i = j
	}
	var scratch []byte
	scratch = binary.LittleEndian.AppendUint64(scratch[:0], groups)
	cw.Write(scratch)
	keys := make([]uint16, 0, perGroup)
	cards := make([]uint32, 0, perGroup)
	run := make([]uint16, 0, 1<<flatLowBits)
	for g, i := 0, 0; g < nb; g += perGroup {
		end := min(g+perGroup, nb)
		keys, cards = keys[:0], cards[:0]
		for b, j := g, i; b < end; b++ {
			n := inBucket(j, b)
			j += n
			if c := s.offsets[b+1] - s.offsets[b] + uint32(n); c > 0 {
				keys = append(keys, uint16(b-g))
				cards = append(cards, c)
			}
		}
		if len(keys) == 0 {
			continue
		}
		scratch = binary.LittleEndian.AppendUint32(scratch[:0], uint32(g/perGroup))
		scratch = binary.LittleEndian.AppendUint32(scratch, serialCookieNoRun)
		scratch = binary.LittleEndian.AppendUint32(scratch, uint32(len(keys)))
		for c := range keys {
			scratch = binary.LittleEndian.AppendUint16(scratch, keys[c])
			scratch = binary.LittleEndian.AppendUint16(scratch, uint16(cards[c]-1))
		}
		off := uint32(8 + 8*len(keys))
		for _, c := range cards {
			scratch = binary.LittleEndian.AppendUint32(scratch, off)
			off += containerBytes(c)
		}
		cw.Write(scratch)
		for c, key := range keys {
			b := g + int(key)
			n := inBucket(i, b)
			run = mergeRun(run[:0], s.low[s.offsets[b]:s.offsets[b+1]], extra[i:i+n])
			i += n
			scratch = scratch[:0]
			if cards[c] <= arrayMax {
				for _, x := range run {
					scratch = binary.LittleEndian.AppendUint16(scratch, x)
				}
			} else {
				var words [1 << flatLowBits / 64]uint64
				for _, x := range run {
					words[x/64] |= 1 << (x % 64)
				}
				for _, w := range words {
					scratch = binary.LittleEndian.AppendUint64(scratch, w)
				}
			}
			cw.Write(scratch)
		}
	}
}

// Roaring's portable format: the cookie of a bitmap without run
// containers, and the most values of an array container.
const (
	serialCookieNoRun = 12346
	arrayMax          = 4096
)

// containerBytes is the encoded size of a container of c values.
func containerBytes(c uint32) uint32 {
	if c <= arrayMax {
		return 2 * c
	}
	return 1 << flatLowBits / 8
}

// mergeRun appends to dst the ascending union of run and the low bits of
// extra (ascending, none in run).
func mergeRun(dst, run []uint16, extra []uint64) []uint16 {
	j := 0
	for _, v := range extra {
		x := uint16(v)
		for j < len(run) && run[j] < x {
			dst = append(dst, run[j])
			j++
		}
		dst = append(dst, x)
	}
	return append(dst, run[j:]...)
}

// Unmarshal decodes and validates a filter of width k written by Marshal.
// Damage is an error wrapping store.ErrCorrupt, never a panic.
func Unmarshal(k uint8, data []byte, fullLen, shortLen uint64) (*Filter, error) {
	if fullLen+shortLen != uint64(len(data)) {
		return nil, fmt.Errorf("%w: filter length", store.ErrCorrupt)
	}
	return Decode(k, bytes.NewReader(data), fullLen, shortLen)
}

// Decode reads, decodes and validates a filter of width k written by
// Marshal (fullLen and shortLen bytes) from r, which it reads a 32-bit
// bitmap at a time: the encoding is never held whole. Full-entry values
// dense enough for the flat form are decoded straight into it. Damage is
// an error wrapping store.ErrCorrupt, never a panic; so is an error of r
// (a caller whose reader can fail keeps its own errors apart).
func Decode(k uint8, r io.Reader, fullLen, shortLen uint64) (f *Filter, err error) {
	if fullLen < 8 {
		return nil, fmt.Errorf("%w: filter length", store.ErrCorrupt)
	}
	// The roaring decoders are not hardened against every malformed
	// input; a snapshot that makes them panic is corrupt.
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, r)
		}
	}()
	f = New(k)
	full := &io.LimitedReader{R: r, N: int64(min(fullLen, 1<<62))}
	// Values dense enough for the flat form are decoded straight into it;
	// its buckets are sized for the most values the data can hold (8 a
	// byte, in bitmap containers), which bounds what hostile data costs.
	if buckets := flatBucketsFor(k, min(8*fullLen, 1<<32-1)); buckets > 0 {
		s := newFlatSet(buckets, min(fullLen/2, 1<<32-1))
		next := uint64(0)
		n, err := eachRun(k, full, fullLen, func(run []uint64) { next = s.appendSorted(run, next) })
		if err != nil {
			return nil, err
		}
		s.finish(next)
		if flatBucketsFor(k, n) > 0 {
			f.full, f.flat, f.recent = nil, s, valueSet{}
		} else {
			s.each(func(v uint64) { f.full.Add(v) })
		}
	} else {
		if _, err := eachRun(k, full, fullLen, f.full.AddMany); err != nil {
			return nil, err
		}
	}
	if full.N != 0 {
		return nil, fmt.Errorf("%w: filter: %d bytes after its bitmaps", store.ErrCorrupt, full.N)
	}
	short := &io.LimitedReader{R: r, N: int64(min(shortLen, 1<<62))}
	if _, err := f.short.ReadFrom(short); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, err)
	}
	if short.N != 0 {
		return nil, fmt.Errorf("%w: filter: %d bytes after its prefix bitmap", store.ErrCorrupt, short.N)
	}
	if err := f.short.Validate(); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, err)
	}
	return f, nil
}

// eachRun decodes the roaring64 encoding of k-bit values, size bytes
// from r, one 32-bit bitmap at a time, validates each (their leading bits
// ascending, their values below 2^k), calls fn with its values in
// ascending runs of at most flatRun (fn must not keep the slice), and
// returns the number of values.
func eachRun(k uint8, r io.Reader, size uint64, fn func(run []uint64)) (uint64, error) {
	run := make([]uint64, 0, flatRun)
	lows := make([]uint32, flatRun)
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, err)
	}
	// roaring64's portable format starts with the number of 32-bit
	// bitmaps, each at least 12 bytes; roaring64.ReadFrom (v2.30.0) panics
	// on a huge count (found by FuzzSnapshot), so check it first.
	count := binary.LittleEndian.Uint64(b[:])
	if count > size/12 {
		return 0, fmt.Errorf("%w: filter of %d bitmaps in %d bytes", store.ErrCorrupt, count, size)
	}
	n := uint64(0)
	bm := roaring.New()
	for i := range count {
		if _, err := io.ReadFull(r, b[:4]); err != nil {
			return 0, fmt.Errorf("%w: filter: bitmap %d: %v", store.ErrCorrupt, i, err)
		}
		hi := uint64(binary.LittleEndian.Uint32(b[:4]))
		if i > 0 && hi <= uint64(binary.LittleEndian.Uint32(b[4:])) {
			return 0, fmt.Errorf("%w: filter: bitmap %d out of order", store.ErrCorrupt, i)
		}
		copy(b[4:], b[:4])
		bm.Clear()
		if _, err := bm.ReadFrom(r); err != nil {
			return 0, fmt.Errorf("%w: filter: bitmap %d: %v", store.ErrCorrupt, i, err)
		}
		if err := bm.Validate(); err != nil {
			return 0, fmt.Errorf("%w: filter: bitmap %d: %v", store.ErrCorrupt, i, err)
		}
		if bm.IsEmpty() {
			continue // holds nothing, harmless
		}
		if k < 64 && hi<<32|uint64(bm.Maximum()) >= 1<<k {
			return 0, fmt.Errorf("%w: filter value beyond %d bits", store.ErrCorrupt, k)
		}
		n += bm.GetCardinality()
		for it := bm.ManyIterator(); ; {
			got := it.NextMany(lows)
			if got == 0 {
				break
			}
			run = run[:0]
			for _, lo := range lows[:got] {
				run = append(run, hi<<32|uint64(lo))
			}
			fn(run)
		}
	}
	return n, nil
}

// IsFlat reports whether the flat form holds the full entries' values.
func (f *Filter) IsFlat() bool { return f.flat != nil }
