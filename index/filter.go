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
}

func newFilter(k uint8) *filter {
	return &filter{k: k, full: roaring64.New(), short: roaring.New()}
}

// lead returns the leading k bits of h.
func (f *filter) lead(h *hashkey.Hash) uint64 {
	return binary.BigEndian.Uint64(h[:8]) >> (64 - uint(f.k))
}

func (f *filter) addFull(h *hashkey.Hash) { f.full.Add(f.lead(h)) }

func (f *filter) addPrefix(p []byte) { f.short.Add(binary.BigEndian.Uint32(p)) }

// mayHaveFull reports whether a full entry h may be stored.
func (f *filter) mayHaveFull(h *hashkey.Hash) bool { return f.full.Contains(f.lead(h)) }

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
