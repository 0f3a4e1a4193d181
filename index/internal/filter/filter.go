package filter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

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
type Filter struct {
	k     uint8
	full  *roaring64.Bitmap // leading k bits of every full entry
	short *roaring.Bitmap   // leading 32 bits of every prefix entry

	// flat, once built (see Freeze), answers full-entry probes in place
	// of full, together with recent: the values added since.
	flat *flatSet
	// recent is nil until a flat build starts; from then on every value
	// added to full is recorded here too, until a merge into flat.
	recent map[uint64]struct{}
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

// AddFull adds the full entry h.
func (f *Filter) AddFull(h *hashkey.Hash) {
	v := f.lead(h)
	f.full.Add(v)
	if f.recent == nil || (f.flat != nil && f.flat.has(v)) {
		return
	}
	f.recent[v] = struct{}{}
	// Merging costs a pass over flat: doing it once its size grew by an
	// eighth keeps that to a few passes per value added, and recent small.
	if f.flat != nil && len(f.recent) > max(1<<12, f.flat.len()/8) {
		extra := make([]uint64, 0, len(f.recent))
		for v := range f.recent {
			extra = append(extra, v)
		}
		if m := f.flat.merged(f.k, extra); m != nil {
			f.flat = m
			clear(f.recent)
		}
	}
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
	if f.recent != nil {
		// The flat form is built or being built (any index that has
		// answered a lookup): through addFull, which keeps flat and
		// recent right.
		var h hashkey.Hash
		for _, l := range leads {
			binary.BigEndian.PutUint64(h[:8], l)
			f.AddFull(&h)
		}
		return scratch
	}
	shift := 64 - uint(f.k)
	scratch = scratch[:0]
	for _, l := range leads {
		scratch = append(scratch, l>>shift)
	}
	f.full.AddMany(scratch) // ascending: roaring appends
	return scratch
}

// MayHaveFull reports whether a full entry h may be stored.
func (f *Filter) MayHaveFull(h *hashkey.Hash) bool {
	v := f.lead(h)
	if f.flat != nil {
		if f.flat.has(v) {
			return true
		}
		_, ok := f.recent[v]
		return ok
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
	n := f.full.GetSizeInBytes() + f.short.GetSizeInBytes() + 16*uint64(len(f.recent))
	if f.flat != nil {
		n += f.flat.sizeBytes()
	}
	return n
}

// SizeBytes is the serialized size of both bitmaps.
func (f *Filter) SizeBytes() uint64 {
	return f.full.GetSerializedSizeInBytes() + f.short.GetSerializedSizeInBytes()
}

// Marshal returns the portable encoding of both bitmaps (roaring's, the
// full entries' then the prefix entries') and their lengths.
func (f *Filter) Marshal() (data []byte, fullLen, shortLen uint64, err error) {
	var buf bytes.Buffer
	buf.Grow(int(f.SizeBytes()))
	n, err := f.full.WriteTo(&buf)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("index: encode filter: %w", err)
	}
	m, err := f.short.WriteTo(&buf)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("index: encode filter: %w", err)
	}
	return buf.Bytes(), uint64(n), uint64(m), nil
}

// Unmarshal decodes and validates a filter of width k written by Marshal.
// Damage is an error wrapping store.ErrCorrupt, never a panic.
func Unmarshal(k uint8, data []byte, fullLen, shortLen uint64) (f *Filter, err error) {
	if fullLen+shortLen != uint64(len(data)) || fullLen < 8 {
		return nil, fmt.Errorf("%w: filter length", store.ErrCorrupt)
	}
	// roaring64's portable format starts with the number of 32-bit
	// bitmaps, each at least 12 bytes; roaring64.ReadFrom (v2.30.0) panics
	// on a huge count (found by FuzzSnapshot), so check it first.
	if n := binary.LittleEndian.Uint64(data); n > fullLen/12 {
		return nil, fmt.Errorf("%w: filter of %d bitmaps in %d bytes", store.ErrCorrupt, n, fullLen)
	}
	// The roaring decoders are not hardened against every malformed
	// input; a snapshot that makes them panic is corrupt.
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, r)
		}
	}()
	f = New(k)
	if _, err := f.full.ReadFrom(bytes.NewReader(data[:fullLen])); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, err)
	}
	if _, err := f.short.ReadFrom(bytes.NewReader(data[fullLen:])); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, err)
	}
	if err := f.full.Validate(); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, err)
	}
	if err := f.short.Validate(); err != nil {
		return nil, fmt.Errorf("%w: filter: %v", store.ErrCorrupt, err)
	}
	if k < 64 && !f.full.IsEmpty() && f.full.Maximum() >= 1<<k {
		return nil, fmt.Errorf("%w: filter value beyond %d bits", store.ErrCorrupt, k)
	}
	return f, nil
}

// IsFlat reports whether the flat form (see Freeze) answers the probes.
func (f *Filter) IsFlat() bool { return f.flat != nil }

// BeginFreeze prepares Freeze and reports whether it should run: false
// when the flat form is built or being built. From then on every value
// added is also recorded, so that none added while Freeze runs is missed.
// The caller holds the lock that guards f, as a writer.
func (f *Filter) BeginFreeze() bool {
	if f.flat != nil || f.recent != nil {
		return false
	}
	f.recent = make(map[uint64]struct{})
	return true
}

// Freeze builds the flat form of the full entries (see flatSet) after
// BeginFreeze, holding mu (the lock that guards f) as a reader only while
// it reads a run of values, so that writers go on between runs, and as a
// writer to install it. Probes use the roaring form until then. stop is
// polled between runs: when it reports true, or the values are too sparse
// for a flat form, Freeze gives up and the filter stays as it was.
func (f *Filter) Freeze(mu *sync.RWMutex, stop func() bool) {
	flat := buildFlat(f.full, f.k, mu.RLocker(), stop)
	mu.Lock()
	defer mu.Unlock()
	if flat == nil {
		f.recent = nil
		return
	}
	for v := range f.recent {
		if flat.has(v) {
			delete(f.recent, v)
		}
	}
	f.flat = flat
}
