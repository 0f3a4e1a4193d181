package uts46

import (
	"math"
	"slices"
	"unicode/utf8"
)

// This file implements Punycode (RFC 3492) in O(n log n) for a label of n
// code points. The textbook encoder rescans the label once per distinct
// non-ASCII code point and the textbook decoder inserts into an array,
// both O(n²); here a Fenwick tree over positions counts the code points
// below the current one (encoder) and finds the final position of every
// insertion (decoder). punycode_test.go keeps the textbook versions to
// check these against.

const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	pcMaxInt      = math.MaxInt32 // RFC 3492 overflow bound, as implementations use
)

func adapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

func threshold(k, bias int) int {
	switch t := k - bias; {
	case t < pcTMin:
		return pcTMin
	case t > pcTMax:
		return pcTMax
	default:
		return t
	}
}

func encodeDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func decodeDigit(c byte) (int, bool) {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c - 'a'), true
	case c >= 'A' && c <= 'Z':
		return int(c - 'A'), true
	case c >= '0' && c <= '9':
		return int(c-'0') + 26, true
	}
	return 0, false
}

// fenwick is a binary indexed tree of counts over positions 0..n-1.
type fenwick []int32

func (f fenwick) add(i int, v int32) {
	for i++; i < len(f)+1; i += i & -i {
		f[i-1] += v
	}
}

// prefix returns the sum over positions [0, i).
func (f fenwick) prefix(i int) int {
	s := 0
	for ; i > 0; i -= i & -i {
		s += int(f[i-1])
	}
	return s
}

// kth returns the smallest position p with prefix(p+1) >= k (k >= 1), for
// a tree of non-negative counts.
func (f fenwick) kth(k int) int {
	pos := 0
	step := 1
	for step*2 <= len(f) {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if next := pos + step; next <= len(f) && int(f[next-1]) < k {
			pos = next
			k -= int(f[next-1])
		}
	}
	return pos
}

// encodePunycode appends the Punycode encoding of s (without "xn--").
func encodePunycode(dst []byte, s []rune) ([]byte, error) {
	b := 0
	for _, r := range s {
		if r < 0x80 {
			dst = append(dst, byte(r))
			b++
		}
	}
	if b > 0 {
		dst = append(dst, '-')
	}
	if b == len(s) {
		return dst, nil
	}
	// Occurrences of the non-basic code points, by code point then
	// position.
	occ := make([]uint64, 0, len(s)-b)
	for i, r := range s {
		if r >= 0x80 {
			if r > utf8.MaxRune {
				return dst, errPunycode
			}
			occ = append(occ, uint64(r)<<32|uint64(i))
		}
	}
	slices.Sort(occ)
	// below marks the positions whose code point is below the one being
	// encoded.
	below := make(fenwick, len(s))
	for i, r := range s {
		if r < 0x80 {
			below.add(i, 1)
		}
	}
	h, n, delta, bias := b, pcInitialN, 0, pcInitialBias
	for k := 0; k < len(occ); {
		m := int(occ[k] >> 32)
		if m-n > (pcMaxInt-delta)/(h+1) {
			return dst, errPunycode
		}
		delta += (m - n) * (h + 1)
		n = m
		prev := 0 // count up to the last position emitted, exclusive
		j := k
		for ; j < len(occ) && int(occ[j]>>32) == m; j++ {
			p := int(uint32(occ[j]))
			delta += below.prefix(p) - prev
			if delta > pcMaxInt {
				return dst, errPunycode
			}
			prev = below.prefix(p + 1)
			// Emit delta as a generalized variable-length integer.
			q := delta
			for kk := pcBase; ; kk += pcBase {
				t := threshold(kk, bias)
				if q < t {
					break
				}
				dst = append(dst, encodeDigit(t+(q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			dst = append(dst, encodeDigit(q))
			bias = adapt(delta, h+1, h == b)
			delta = 0
			h++
		}
		delta += below.prefix(len(s)) - prev
		for ; k < j; k++ {
			below.add(int(uint32(occ[k])), 1)
		}
		delta++
		n++
	}
	return dst, nil
}

// decodePunycode decodes s (without "xn--"), appending to dst. It fails
// once the output would exceed max code points, before doing the work.
func decodePunycode(dst []rune, s string, max int) ([]rune, error) {
	b := 0
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '-' {
			b = i
			break
		}
	}
	start := 0
	if b > 0 {
		start = b + 1
	}
	if b > max {
		return dst, errLabelTooLong
	}
	for i := 0; i < b; i++ {
		if s[i] >= 0x80 {
			return dst, errPunycode
		}
	}
	// Run the decoder, recording each insertion: code point and index.
	type insertion struct {
		r   rune
		pos int32
	}
	var ins []insertion
	outLen, i, n, bias := b, 0, pcInitialN, pcInitialBias
	for in := start; in < len(s); {
		oldi, w := i, 1
		for k := pcBase; ; k += pcBase {
			if in >= len(s) {
				return dst, errPunycode
			}
			d, ok := decodeDigit(s[in])
			in++
			if !ok {
				return dst, errPunycode
			}
			if d > (pcMaxInt-i)/w {
				return dst, errPunycode
			}
			i += d * w
			t := threshold(k, bias)
			if d < t {
				break
			}
			if w > pcMaxInt/(pcBase-t) {
				return dst, errPunycode
			}
			w *= pcBase - t
		}
		outLen++
		if outLen > max {
			return dst, errLabelTooLong
		}
		bias = adapt(i-oldi, outLen, oldi == 0)
		if i/outLen > pcMaxInt-n {
			return dst, errPunycode
		}
		n += i / outLen
		i %= outLen
		if n > utf8.MaxRune || n >= 0xD800 && n <= 0xDFFF {
			return dst, errPunycode
		}
		ins = append(ins, insertion{rune(n), int32(i)})
		i++
	}
	// Place the insertions, last first: each goes to the (pos+1)-th slot
	// not taken by a later one. The basic code points fill the rest.
	base := len(dst)
	dst = slices.Grow(dst, outLen)[:base+outLen]
	out := dst[base:]
	free := make(fenwick, outLen)
	for p := range outLen {
		free.add(p, 1)
	}
	taken := make([]bool, outLen)
	for j := len(ins) - 1; j >= 0; j-- {
		p := free.kth(int(ins[j].pos) + 1)
		out[p] = ins[j].r
		taken[p] = true
		free.add(p, -1)
	}
	k := 0
	for p := range outLen {
		if !taken[p] {
			out[p] = rune(s[k])
			k++
		}
	}
	return dst, nil
}
