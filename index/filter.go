package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Filter width limits. The filter keeps the leading k bits of every full
// entry, with k = bitLen(N) + filterHeadroom, so that about N/2^k <= 1/1024 of
// absent keys are answered "maybe".
const (
	minFilterBits  = 20
	maxFilterBits  = 64
	filterHeadroom = 10
)

// filterBitsFor returns the filter width for n full entries.
func filterBitsFor(n uint64) uint8 {
	k := bits.Len64(n) + filterHeadroom
	return uint8(min(max(k, minFilterBits), maxFilterBits))
}

// filter is the in-memory membership filter. It may answer "maybe" for an
// absent key, never "absent" for a stored one. Callers synchronise.
type filter struct {
	k     uint8
	full  *roaring64.Bitmap // leading k bits of every full entry
	short *roaring.Bitmap   // leading 32 bits of every prefix entry

	// flat, once built (see DB.freeze), answers full-entry probes in
	// place of full, together with recent: the values added since.
	flat *flatSet
	// recent is nil until a flat build starts; from then on every value
	// added to full is recorded here too, until a merge into flat.
	recent map[uint64]struct{}
}

func newFilter(k uint8) *filter {
	return &filter{k: k, full: roaring64.New(), short: roaring.New()}
}

// lead returns the leading k bits of h.
func (f *filter) lead(h *hashkey.Hash) uint64 {
	return binary.BigEndian.Uint64(h[:8]) >> (64 - uint(f.k))
}

func (f *filter) addFull(h *hashkey.Hash) {
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

func (f *filter) addPrefix(p []byte) { f.short.Add(binary.BigEndian.Uint32(p)) }

// addLeads adds full entries by the leading 8 bytes of their hashes,
// ascending (a load's), with scratch as work space, which it returns.
func (f *filter) addLeads(leads, scratch []uint64) []uint64 {
	if f.recent != nil {
		// The flat form is built or being built (any index that has
		// answered a lookup): through addFull, which keeps flat and
		// recent right.
		var h hashkey.Hash
		for _, l := range leads {
			binary.BigEndian.PutUint64(h[:8], l)
			f.addFull(&h)
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

// mayHaveFull reports whether a full entry h may be stored.
func (f *filter) mayHaveFull(h *hashkey.Hash) bool {
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

// mayHavePrefixOf reports whether a prefix entry that h starts with may be
// stored.
func (f *filter) mayHavePrefixOf(h *hashkey.Hash) bool {
	return !f.short.IsEmpty() && f.short.Contains(binary.BigEndian.Uint32(h[:4]))
}

// mayHaveEntry reports whether the entry keyed by h (all of it, or a prefix
// of it when prefix is set) may be stored: every prefix entry is at least 4
// bytes, so the prefix bitmap over first 4 bytes answers for it.
func (f *filter) mayHaveEntry(h *hashkey.Hash, prefix bool) bool {
	if prefix {
		return f.mayHavePrefixOf(h)
	}
	return f.mayHaveFull(h)
}

// memBytes is the memory the filter holds.
func (f *filter) memBytes() uint64 {
	n := f.full.GetSizeInBytes() + f.short.GetSizeInBytes() + 16*uint64(len(f.recent))
	if f.flat != nil {
		n += f.flat.sizeBytes()
	}
	return n
}

// sizeBytes is the serialized size of both bitmaps.
func (f *filter) sizeBytes() uint64 {
	return f.full.GetSerializedSizeInBytes() + f.short.GetSerializedSizeInBytes()
}

// marshal returns the portable encoding of both bitmaps and their lengths.
func (f *filter) marshal() (data []byte, fullLen, shortLen uint64, err error) {
	var buf bytes.Buffer
	buf.Grow(int(f.sizeBytes()))
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

// unmarshalFilter decodes and validates a filter written by marshal.
func unmarshalFilter(k uint8, data []byte, fullLen, shortLen uint64) (f *filter, err error) {
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
	f = newFilter(k)
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
