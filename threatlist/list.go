package threatlist

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"

	"github.com/urlhash/urlhash/hashkey/safebrowsing"
)

// Lengths of a list's entries in bytes: Safe Browsing and Web Risk hash
// prefixes are 4 to 32 bytes long (32: a full SHA-256), the lengths
// package safebrowsing makes prefixes of.
const (
	MinEntryLen = safebrowsing.MinPrefixLen
	MaxEntryLen = safebrowsing.MaxPrefixLen
)

// List is a set of hash prefixes (MinEntryLen..MaxEntryLen bytes each) in
// the lexicographic order of their bytes, the order the update protocols
// index removals in and checksum. A List is immutable once built; its
// methods are safe for concurrent use.
//
// The entries of each length are kept concatenated in one sorted slice: a
// million 4-byte prefixes take 4 MB.
type List struct {
	bySize [MaxEntryLen + 1][]byte
	n      int
}

// NewList returns the list of entries, in any order; a repeated entry is
// kept once. An entry of a length outside MinEntryLen..MaxEntryLen is an
// error.
func NewList(entries [][]byte) (*List, error) {
	var b Builder
	for _, e := range entries {
		if err := b.Add(e); err != nil {
			return nil, err
		}
	}
	return b.List(), nil
}

// Builder gathers entries for a List. The zero value is ready to use.
type Builder struct {
	bySize [MaxEntryLen + 1][]byte
}

// Add adds a copy of e.
func (b *Builder) Add(e []byte) error {
	if len(e) < MinEntryLen || len(e) > MaxEntryLen {
		return fmt.Errorf("%w: %d-byte entry %x", ErrEntryLen, len(e), e)
	}
	b.bySize[len(e)] = append(b.bySize[len(e)], e...)
	return nil
}

// AddConcat adds the size-byte entries concatenated in raw.
func (b *Builder) AddConcat(size int, raw []byte) error {
	if size < MinEntryLen || size > MaxEntryLen {
		return fmt.Errorf("%w: prefix size %d", ErrEntryLen, size)
	}
	if len(raw)%size != 0 {
		return fmt.Errorf("%w: %d bytes are no whole number of %d-byte hashes", ErrMalformed, len(raw), size)
	}
	b.bySize[size] = append(b.bySize[size], raw...)
	return nil
}

// List sorts the entries, drops repeats, and returns the list. The
// Builder is empty afterwards.
func (b *Builder) List() *List {
	l := &List{}
	for size, raw := range b.bySize {
		if len(raw) == 0 {
			continue
		}
		l.bySize[size] = sortUnique(raw, size)
		l.n += len(l.bySize[size]) / size
		b.bySize[size] = nil
	}
	return l
}

// sortUnique sorts the size-byte entries of raw in place and drops repeats.
func sortUnique(raw []byte, size int) []byte {
	n := len(raw) / size
	if size == 4 {
		// The common case: sort the prefixes as big-endian integers,
		// whose numeric order is their byte order.
		vs := make([]uint32, n)
		for i := range vs {
			vs[i] = binary.BigEndian.Uint32(raw[4*i:])
		}
		slices.Sort(vs)
		vs = slices.Compact(vs)
		out := raw[:0]
		for _, v := range vs {
			out = binary.BigEndian.AppendUint32(out, v)
		}
		return out
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	at := func(i int) []byte { return raw[i*size : (i+1)*size] }
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(at(a), at(b)) })
	out := make([]byte, 0, len(raw))
	for j, i := range idx {
		if j > 0 && bytes.Equal(at(i), at(idx[j-1])) {
			continue
		}
		out = append(out, at(i)...)
	}
	return out
}

// Len returns the number of entries.
func (l *List) Len() int { return l.n }

// Sizes returns the entry lengths the list holds, ascending.
func (l *List) Sizes() []int {
	var s []int
	for size, raw := range l.bySize {
		if len(raw) > 0 {
			s = append(s, size)
		}
	}
	return s
}

// Concat returns the list's size-byte entries, concatenated in order. The
// slice belongs to the list: do not modify it.
func (l *List) Concat(size int) []byte {
	if size < 0 || size > MaxEntryLen {
		return nil
	}
	return l.bySize[size]
}

// Has reports whether the list holds entry e.
func (l *List) Has(e []byte) bool {
	if len(e) < MinEntryLen || len(e) > MaxEntryLen {
		return false
	}
	_, ok := l.find(e)
	return ok
}

// find returns the position of e among the entries of its length.
func (l *List) find(e []byte) (int, bool) {
	raw, size := l.bySize[len(e)], len(e)
	n := len(raw) / size
	i, j := 0, n
	for i < j {
		h := int(uint(i+j) >> 1)
		if bytes.Compare(raw[h*size:(h+1)*size], e) < 0 {
			i = h + 1
		} else {
			j = h
		}
	}
	return i, i < n && bytes.Equal(raw[i*size:(i+1)*size], e)
}

// All yields every entry in lexicographic order. The slices belong to the
// list: do not modify them.
func (l *List) All() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		l.walk(func(size, pos int, e []byte) bool { return yield(e) })
	}
}

// walk calls fn with each entry in lexicographic order, its length and its
// position among the entries of its length, until fn returns false.
func (l *List) walk(fn func(size, pos int, e []byte) bool) {
	type head struct{ size, pos int }
	var heads []head
	for size, raw := range l.bySize {
		if len(raw) > 0 {
			heads = append(heads, head{size, 0})
		}
	}
	if len(heads) == 1 {
		size, raw := heads[0].size, l.bySize[heads[0].size]
		for i := 0; i < len(raw)/size; i++ {
			if !fn(size, i, raw[i*size:(i+1)*size]) {
				return
			}
		}
		return
	}
	for len(heads) > 0 {
		best := 0
		for i := 1; i < len(heads); i++ {
			a := l.bySize[heads[i].size][heads[i].pos*heads[i].size:][:heads[i].size]
			b := l.bySize[heads[best].size][heads[best].pos*heads[best].size:][:heads[best].size]
			if bytes.Compare(a, b) < 0 {
				best = i
			}
		}
		h := &heads[best]
		e := l.bySize[h.size][h.pos*h.size:][:h.size]
		if !fn(h.size, h.pos, e) {
			return
		}
		h.pos++
		if h.pos*h.size == len(l.bySize[h.size]) {
			heads = slices.Delete(heads, best, best+1)
		}
	}
}

// Checksum returns the SHA-256 of the concatenation of the entries in
// lexicographic order: the checksum both protocols send with an update.
func (l *List) Checksum() [sha256.Size]byte {
	h := sha256.New()
	if sizes := l.Sizes(); len(sizes) == 1 {
		h.Write(l.bySize[sizes[0]])
	} else {
		l.walk(func(_, _ int, e []byte) bool { h.Write(e); return true })
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// Equal reports whether l and m hold the same entries.
func (l *List) Equal(m *List) bool {
	for size := range l.bySize {
		if !bytes.Equal(l.bySize[size], m.bySize[size]) {
			return false
		}
	}
	return true
}

// Change is what an update did to a list: the entries it removed and the
// entries it added (an entry both removed and added again is in neither).
type Change struct {
	Removed, Added *List
}

// Apply returns the list after removing the entries at the removal indices
// (positions in l's lexicographic order, in any order) and adding
// additions, and the change. An index out of range or repeated is an
// error wrapping ErrMalformed; an addition l already holds (and does not
// remove) is kept once.
func (l *List) Apply(removals []int32, additions *List) (*List, Change, error) {
	removed := make([]bool, l.n)
	for _, r := range removals {
		if r < 0 || int(r) >= l.n {
			return nil, Change{}, fmt.Errorf("%w: removal index %d of a list of %d entries", ErrMalformed, r, l.n)
		}
		if removed[r] {
			return nil, Change{}, fmt.Errorf("%w: removal index %d repeated", ErrMalformed, r)
		}
		removed[r] = true
	}
	if additions == nil {
		additions = &List{}
	}
	// The positions, per length, of the removed entries.
	var gone [MaxEntryLen + 1][]bool
	if sizes := l.Sizes(); len(removals) > 0 && len(sizes) == 1 {
		// One length: the lexicographic order is that length's order.
		gone[sizes[0]] = removed
	} else if len(removals) > 0 {
		i := 0
		l.walk(func(size, pos int, e []byte) bool {
			if removed[i] {
				if gone[size] == nil {
					gone[size] = make([]bool, len(l.bySize[size])/size)
				}
				gone[size][pos] = true
			}
			i++
			return true
		})
	}
	out := &List{}
	var chRemoved, chAdded Builder
	for size := range l.bySize {
		old, add := l.bySize[size], additions.bySize[size]
		if len(old) == 0 && len(add) == 0 {
			continue
		}
		merged := make([]byte, 0, len(old)+len(add))
		i, j := 0, 0
		for i < len(old) || j < len(add) {
			var c int
			switch {
			case i == len(old):
				c = 1
			case j == len(add):
				c = -1
			default:
				c = bytes.Compare(old[i:i+size], add[j:j+size])
			}
			switch {
			case c < 0: // only in the old list
				if gone[size] != nil && gone[size][i/size] {
					chRemoved.bySize[size] = append(chRemoved.bySize[size], old[i:i+size]...)
				} else {
					merged = append(merged, old[i:i+size]...)
				}
				i += size
			case c > 0: // only added
				merged = append(merged, add[j:j+size]...)
				chAdded.bySize[size] = append(chAdded.bySize[size], add[j:j+size]...)
				j += size
			default: // in both: removed and added again, or added twice
				merged = append(merged, add[j:j+size]...)
				i += size
				j += size
			}
		}
		if len(merged) > 0 {
			out.bySize[size] = merged
			out.n += len(merged) / size
		}
	}
	return out, Change{Removed: chRemoved.sorted(), Added: chAdded.sorted()}, nil
}

// sorted returns the builder's entries as a list, for entries appended in
// order already.
func (b *Builder) sorted() *List {
	l := &List{}
	for size, raw := range b.bySize {
		l.bySize[size] = raw
		if size > 0 {
			l.n += len(raw) / size
		}
	}
	return l
}

// Diff returns the change that turns l into m: the removal indices (into
// l's lexicographic order, ascending) and the additions. It is one merge
// pass over the two lists.
func (l *List) Diff(m *List) (removals []int32, additions *List) {
	// The entries of each length are visited in order, so a cursor per
	// length into m finds whether m holds each entry of l.
	var at [MaxEntryLen + 1]int
	i := int32(0)
	l.walk(func(size, _ int, e []byte) bool {
		raw := m.bySize[size]
		j := at[size]
		for j < len(raw) && bytes.Compare(raw[j:j+size], e) < 0 {
			j += size
		}
		at[size] = j
		if j == len(raw) || !bytes.Equal(raw[j:j+size], e) {
			removals = append(removals, i)
		}
		i++
		return true
	})
	var add Builder
	for size, raw := range m.bySize {
		old := l.bySize[size]
		j := 0
		for k := 0; k < len(raw); k += size {
			e := raw[k : k+size]
			for j < len(old) && bytes.Compare(old[j:j+size], e) < 0 {
				j += size
			}
			if j == len(old) || !bytes.Equal(old[j:j+size], e) {
				add.bySize[size] = append(add.bySize[size], e...)
			}
		}
	}
	return removals, add.sorted()
}

// change returns the change that turns l into m, as entries.
func (l *List) change(m *List) Change {
	removals, additions := l.Diff(m)
	var removed Builder
	i := int32(0)
	l.walk(func(size, _ int, e []byte) bool {
		if len(removals) > 0 && removals[0] == i {
			removed.bySize[size] = append(removed.bySize[size], e...)
			removals = removals[1:]
		}
		i++
		return true
	})
	return Change{Removed: removed.sorted(), Added: additions}
}
