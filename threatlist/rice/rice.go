// Package rice encodes and decodes the Rice-Golomb delta coding of Google's
// threat-list updates: Web Risk and Safe Browsing v4 (RiceDeltaEncoding,
// 32-bit values) and Safe Browsing v5 (RiceDeltaEncoded32Bit, 64Bit, 128Bit
// and 256Bit).
//
// A sorted list of unsigned integers travels as its first value and the
// deltas between consecutive values. Each delta d is written as the
// quotient q = d >> k in unary (q one-bits, then a zero-bit) followed by the
// k low bits of d, least significant first; bits fill each byte from its
// least significant bit, and the last byte is padded with zero-bits. k is the
// Rice parameter; the entry count counts the deltas, not the first value.
//
// The decoder trusts nothing it is given: the entry count is checked against
// the data's length before anything is allocated (each delta takes at least
// k+1 bits), a quotient is bounded by the bits left and by the width, a sum
// that overflows the width is an error, and so is a whole unused byte at the
// end (as the official Go clients refuse it).
//
// The package knows integers, not hashes: how a hash prefix becomes an
// integer (little-endian in Web Risk and v4, big-endian in v5) is the
// caller's business.
package rice

import (
	"errors"
	"fmt"
	"math/bits"
)

// Errors of the decoder. They are wrapped with the details: use errors.Is.
var (
	// ErrParameter is returned for a Rice parameter out of range.
	ErrParameter = errors.New("rice: bad parameter")
	// ErrCount is returned for a negative entry count, or one that the
	// data is too short to hold.
	ErrCount = errors.New("rice: bad entry count")
	// ErrTruncated is returned when the data ends inside an entry.
	ErrTruncated = errors.New("rice: data ends inside an entry")
	// ErrOverflow is returned when a delta or a value does not fit the
	// width.
	ErrOverflow = errors.New("rice: value overflows")
	// ErrTrailing is returned when the data has a whole unused byte after
	// the last entry.
	ErrTrailing = errors.New("rice: unused trailing data")
	// ErrUnsorted is returned by an encoder given values that are not in
	// ascending order.
	ErrUnsorted = errors.New("rice: values not in ascending order")
)

// maxQuotient bounds the unary quotient an encoder writes (a caller's
// parameter far too small for its deltas): 2 MiB of one-bits.
const maxQuotient = 1 << 24

// checkCount refuses a count that data cannot hold with parameter k: every
// delta costs at least k+1 bits.
func checkCount(k, count int, data []byte) error {
	if count < 0 {
		return fmt.Errorf("%w: %d", ErrCount, count)
	}
	if count > 0 && int64(count) > int64(len(data))*8/int64(k+1) {
		return fmt.Errorf("%w: %d entries of at least %d bits do not fit %d bytes", ErrCount, count, k+1, len(data))
	}
	return nil
}

func checkParameter(k, width int) error {
	if k < 1 || k >= width {
		return fmt.Errorf("%w: %d for %d-bit values", ErrParameter, k, width)
	}
	return nil
}

// reader reads the bit stream: least significant bit of each byte first.
type reader struct {
	data []byte
	pos  int // in bits
}

func (r *reader) left() int { return 8*len(r.data) - r.pos }

// unary reads one-bits up to the first zero-bit and returns their count,
// failing when it would exceed max.
func (r *reader) unary(max uint64) (uint64, error) {
	var q uint64
	for {
		if r.pos >= 8*len(r.data) {
			return 0, ErrTruncated
		}
		i, off := r.pos>>3, uint(r.pos&7)
		// The ones left in this byte, from the current bit on.
		b := uint(r.data[i]) >> off
		n := uint(bits.TrailingZeros(^b)) // ones before the first zero
		avail := 8 - off
		if n < avail {
			q += uint64(n)
			r.pos += int(n) + 1
			if q > max {
				return 0, ErrOverflow
			}
			return q, nil
		}
		q += uint64(avail)
		r.pos += int(avail)
		if q > max {
			return 0, ErrOverflow
		}
	}
}

// bits64 reads n <= 64 bits, the first read the least significant.
func (r *reader) bits64(n int) (uint64, error) {
	if n > r.left() {
		return 0, ErrTruncated
	}
	var v uint64
	got := 0
	for got < n {
		i, off := r.pos>>3, r.pos&7
		take := 8 - off
		if take > n-got {
			take = n - got
		}
		b := uint64(r.data[i]>>uint(off)) & (1<<uint(take) - 1)
		v |= b << uint(got)
		got += take
		r.pos += take
	}
	return v, nil
}

// end checks that no whole byte is left unread.
func (r *reader) end() error {
	if r.left() >= 8 {
		return fmt.Errorf("%w: %d bits", ErrTrailing, r.left())
	}
	return nil
}

// Decode32 decodes count deltas with parameter k (1..31) after first and
// returns the count+1 values. A value that does not fit 32 bits is an error.
func Decode32(first uint32, k, count int, data []byte) ([]uint32, error) {
	vs, err := decode(uint64(first), k, count, data, 32)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, len(vs))
	for i, v := range vs {
		out[i] = uint32(v)
	}
	return out, nil
}

// Decode64 is Decode32 for 64-bit values, with parameter k 1..63.
func Decode64(first uint64, k, count int, data []byte) ([]uint64, error) {
	return decode(first, k, count, data, 64)
}

func decode(first uint64, k, count int, data []byte, width int) ([]uint64, error) {
	if count == 0 {
		// No deltas: k is unset (zero) and the data empty.
		if len(data) > 0 {
			return nil, fmt.Errorf("%w: %d bytes with no entries", ErrTrailing, len(data))
		}
		if width == 32 && first > 1<<32-1 {
			return nil, fmt.Errorf("%w: first value %d", ErrOverflow, first)
		}
		return []uint64{first}, nil
	}
	if err := checkParameter(k, width); err != nil {
		return nil, err
	}
	if err := checkCount(k, count, data); err != nil {
		return nil, err
	}
	max := uint64(1)<<(width-1) - 1 | uint64(1)<<(width-1) // all ones of the width
	if first > max {
		return nil, fmt.Errorf("%w: first value %d", ErrOverflow, first)
	}
	maxQ := max >> uint(k) // the largest quotient whose q<<k fits the width
	out := make([]uint64, 0, count+1)
	out = append(out, first)
	r := reader{data: data}
	v := first
	for i := range count {
		q, err := r.unary(maxQ)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		low, err := r.bits64(k)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		d := q<<uint(k) | low
		if d > max-v {
			return nil, fmt.Errorf("entry %d: %w: %d + %d", i+1, ErrOverflow, v, d)
		}
		v += d
		out = append(out, v)
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// writer writes the bit stream.
type writer struct {
	data []byte
	n    int // bits written
}

func (w *writer) bit(b uint) {
	if w.n&7 == 0 {
		w.data = append(w.data, 0)
	}
	w.data[len(w.data)-1] |= byte(b) << uint(w.n&7)
	w.n++
}

func (w *writer) ones(q uint64) {
	for ; q > 0; q-- {
		w.bit(1)
	}
	w.bit(0)
}

func (w *writer) bits64(v uint64, n int) {
	for i := range n {
		w.bit(uint(v>>uint(i)) & 1)
	}
}

// Encode32 encodes values (ascending; equal neighbours allowed) with
// parameter k (1..31) and returns the first value, the entry count and the
// encoded data. No values is an error.
func Encode32(values []uint32, k int) (first uint32, count int, data []byte, err error) {
	f, count, data, err := encode(values, k, 32)
	return uint32(f), count, data, err
}

// Encode64 is Encode32 for 64-bit values, with parameter k 1..63.
func Encode64(values []uint64, k int) (first uint64, count int, data []byte, err error) {
	return encode(values, k, 64)
}

func encode[T uint32 | uint64](values []T, k, width int) (uint64, int, []byte, error) {
	if len(values) == 0 {
		return 0, 0, nil, fmt.Errorf("%w: no values", ErrCount)
	}
	if len(values) == 1 {
		return uint64(values[0]), 0, nil, nil
	}
	if err := checkParameter(k, width); err != nil {
		return 0, 0, nil, err
	}
	var w writer
	// About k+2 bits a delta with a parameter that fits the values.
	w.data = make([]byte, 0, (len(values)*(k+2))/8+8)
	for i := 1; i < len(values); i++ {
		if values[i] < values[i-1] {
			return 0, 0, nil, fmt.Errorf("%w: %d after %d", ErrUnsorted, values[i], values[i-1])
		}
		d := uint64(values[i] - values[i-1])
		if d>>uint(k) > maxQuotient {
			return 0, 0, nil, fmt.Errorf("%w: delta %d needs a quotient of %d bits with k=%d", ErrParameter, d, d>>uint(k), k)
		}
		w.ones(d >> uint(k))
		w.bits64(d, k)
	}
	return uint64(values[0]), len(values) - 1, w.data, nil
}

// Parameter returns a good Rice parameter for n deltas adding up to span
// (the last value less the first), within lo..hi: the one whose quotients
// average about one bit.
func Parameter(n int, span uint64, lo, hi int) int {
	k := lo
	if n > 0 && span/uint64(n) > 0 {
		k = bits.Len64(span/uint64(n)) - 1
	}
	return min(max(k, lo), hi)
}
