package filter

import (
	"math/bits"
	"math/rand/v2"
)

// valueSet is the overlay's set of the values added out of order: open
// addressing with linear probing, 8 bytes a slot, at most half full. A
// probe is about one cache miss where a Go map's took several: the served
// add probes the overlay for every key the flat set does not hold, and the
// map cost 3 s of the server's 68 in a 10M run (go run ./bench/shared -n
// 10000000, a CPU profile). Values are hashed with a random seed, so that
// keys chosen without it cannot make the probes long.
type valueSet struct {
	slots   []uint64 // the values but 0; 0 marks an empty slot
	n       int      // values in slots
	hasZero bool
	seed    uint64
	shift   uint8 // 64 - log2(len(slots))
}

// minValueSlots is the first allocation: twice the smallest overlay.
const minValueSlots = 1 << 13

func (s *valueSet) len() int {
	if s.hasZero {
		return s.n + 1
	}
	return s.n
}

// home returns the first slot probed for v (slots must not be empty): the
// leading bits of a multiplicative hash of v and the seed.
func (s *valueSet) home(v uint64) int {
	return int(((v ^ s.seed) * 0x9e3779b97f4a7c15) >> s.shift)
}

func (s *valueSet) has(v uint64) bool {
	if v == 0 {
		return s.hasZero
	}
	if s.n == 0 {
		return false
	}
	mask := len(s.slots) - 1
	for i := s.home(v); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return true
		case 0:
			return false
		}
	}
}

// add adds v; it reports whether v was new.
func (s *valueSet) add(v uint64) bool {
	if v == 0 {
		added := !s.hasZero
		s.hasZero = true
		return added
	}
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := len(s.slots) - 1
	for i := s.home(v); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return false
		case 0:
			s.slots[i] = v
			s.n++
			return true
		}
	}
}

// grow doubles the slots (or allocates the first ones) and re-adds the
// values.
func (s *valueSet) grow() {
	old := s.slots
	if len(old) == 0 {
		s.seed = rand.Uint64()
	}
	s.slots = make([]uint64, max(minValueSlots, 2*len(old)))
	s.shift = uint8(64 - bits.TrailingZeros(uint(len(s.slots))))
	s.n = 0
	for _, v := range old {
		if v != 0 {
			s.add(v)
		}
	}
}

// appendTo appends the values, in no order, to dst.
func (s *valueSet) appendTo(dst []uint64) []uint64 {
	if s.hasZero {
		dst = append(dst, 0)
	}
	for _, v := range s.slots {
		if v != 0 {
			dst = append(dst, v)
		}
	}
	return dst
}

// reset empties the set and keeps its slots: an overlay fills up to the
// same size again.
func (s *valueSet) reset() {
	clear(s.slots)
	s.n, s.hasZero = 0, false
}

// memBytes is the memory the set holds.
func (s *valueSet) memBytes() uint64 { return 8 * uint64(cap(s.slots)) }
