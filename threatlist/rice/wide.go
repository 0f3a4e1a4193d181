package rice

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// u256 is an unsigned integer of up to 256 bits: w[0] holds the least
// significant 64 bits.
type u256 [4]uint64

// add sets u to u+v and reports whether it overflowed width bits.
func (u *u256) add(v *u256, width int) bool {
	var c uint64
	for i := range u {
		u[i], c = bits.Add64(u[i], v[i], c)
	}
	if c != 0 {
		return true
	}
	for i := width / 64; i < 4; i++ {
		if u[i] != 0 {
			return true
		}
	}
	return false
}

func (u *u256) less(v *u256) bool {
	for i := 3; i >= 0; i-- {
		if u[i] != v[i] {
			return u[i] < v[i]
		}
	}
	return false
}

func (u *u256) sub(v *u256) u256 {
	var d u256
	var b uint64
	for i := range u {
		d[i], b = bits.Sub64(u[i], v[i], b)
	}
	return d
}

// shr returns u >> k.
func (u *u256) shr(k int) u256 {
	var d u256
	wo, bo := k/64, uint(k%64)
	for i := 0; i+wo < 4; i++ {
		d[i] = u[i+wo] >> bo
		if bo != 0 && i+wo+1 < 4 {
			d[i] |= u[i+wo+1] << (64 - bo)
		}
	}
	return d
}

// fromBytes reads a big-endian value of len(b) (16 or 32) bytes.
func fromBytes(b []byte) u256 {
	var u u256
	n := len(b) / 8
	for i := range n {
		u[i] = binary.BigEndian.Uint64(b[len(b)-8*(i+1):])
	}
	return u
}

// appendBytes appends u as size big-endian bytes.
func (u *u256) appendBytes(dst []byte, size int) []byte {
	for i := size/8 - 1; i >= 0; i-- {
		dst = binary.BigEndian.AppendUint64(dst, u[i])
	}
	return dst
}

// DecodeWide decodes count deltas of size-byte values (16: 128 bits, 32:
// 256 bits) with parameter k (1..8*size-1) after first (size bytes,
// big-endian) and returns the count+1 values, each size big-endian bytes,
// concatenated.
func DecodeWide(size int, first []byte, k, count int, data []byte) ([]byte, error) {
	if size != 16 && size != 32 {
		return nil, fmt.Errorf("%w: %d-byte values", ErrParameter, size)
	}
	if len(first) != size {
		return nil, fmt.Errorf("%w: first value of %d bytes, want %d", ErrOverflow, len(first), size)
	}
	width := 8 * size
	if count == 0 {
		if len(data) > 0 {
			return nil, fmt.Errorf("%w: %d bytes with no entries", ErrTrailing, len(data))
		}
		return append([]byte(nil), first...), nil
	}
	if err := checkParameter(k, width); err != nil {
		return nil, err
	}
	if err := checkCount(k, count, data); err != nil {
		return nil, err
	}
	// q<<k must fit the width: q < 2^(width-k), and q costs a bit each,
	// so the data's length bounds it too.
	maxQ := uint64(1)<<min(width-k, 63) - 1
	out := make([]byte, 0, size*(count+1))
	out = append(out, first...)
	v := fromBytes(first)
	r := reader{data: data}
	for i := range count {
		q, err := r.unary(maxQ)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		var d u256
		for got := 0; got < k; got += 64 {
			n := min(64, k-got)
			low, err := r.bits64(n)
			if err != nil {
				return nil, fmt.Errorf("entry %d: %w", i+1, err)
			}
			d[got/64] = low
		}
		// d |= q << k
		wo, bo := k/64, uint(k%64)
		d[wo] |= q << bo
		if bo != 0 && wo+1 < 4 {
			d[wo+1] |= q >> (64 - bo)
		}
		if v.add(&d, width) {
			return nil, fmt.Errorf("entry %d: %w", i+1, ErrOverflow)
		}
		out = v.appendBytes(out, size)
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// EncodeWide encodes values, size-byte (16 or 32) big-endian values
// concatenated in ascending order, with parameter k (1..8*size-1), and
// returns the first value, the entry count and the encoded data.
func EncodeWide(size int, values []byte, k int) (first []byte, count int, data []byte, err error) {
	if size != 16 && size != 32 {
		return nil, 0, nil, fmt.Errorf("%w: %d-byte values", ErrParameter, size)
	}
	if len(values) == 0 || len(values)%size != 0 {
		return nil, 0, nil, fmt.Errorf("%w: %d bytes of %d-byte values", ErrCount, len(values), size)
	}
	n := len(values) / size
	first = append([]byte(nil), values[:size]...)
	if n == 1 {
		return first, 0, nil, nil
	}
	if err := checkParameter(k, 8*size); err != nil {
		return nil, 0, nil, err
	}
	var w writer
	prev := fromBytes(values[:size])
	for i := 1; i < n; i++ {
		v := fromBytes(values[i*size : (i+1)*size])
		if v.less(&prev) {
			return nil, 0, nil, fmt.Errorf("%w: value %d", ErrUnsorted, i)
		}
		d := v.sub(&prev)
		q := d.shr(k)
		if q[1]|q[2]|q[3] != 0 || q[0] > maxQuotient {
			return nil, 0, nil, fmt.Errorf("%w: delta %d needs too large a quotient with k=%d", ErrParameter, i, k)
		}
		w.ones(q[0])
		for got := 0; got < k; got += 64 {
			w.bits64(d[got/64], min(64, k-got))
		}
		prev = v
	}
	return first, n - 1, w.data, nil
}
