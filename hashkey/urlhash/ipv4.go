package urlhash

import (
	"errors"
	"strconv"
)

// This file implements the URL Standard's IPv4 parser and serialiser.
//
// https://url.spec.whatwg.org/#concept-ipv4-parser

var errInvalidIPv4 = errors.New("invalid ipv4 address")

// endsInNumber reports whether the domain s must be parsed as an IPv4
// address: its last non-empty label is all digits or a valid IPv4 number.
func endsInNumber(s string) bool {
	end := len(s)
	if end > 0 && s[end-1] == '.' {
		if end == 1 {
			return false
		}
		end--
	}
	last := s[lastDot(s[:end])+1 : end]
	if last == "" {
		return false
	}
	digits := true
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// ipv4Overflow is a value larger than any valid part; parsed numbers
// saturate at it.
const ipv4Overflow = 1 << 40

// parseIPv4Number parses one part with the URL Standard's radix rules
// (0x hex, leading-0 octal, else decimal). ok is false on failure.
func parseIPv4Number(s string) (n uint64, ok bool) {
	if s == "" {
		return 0, false
	}
	radix := uint64(10)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, radix = s[2:], 16
	} else if len(s) >= 2 && s[0] == '0' {
		s, radix = s[1:], 8
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case radix == 16 && (c|0x20) >= 'a' && (c|0x20) <= 'f':
			d = uint64(c|0x20-'a') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		if n < ipv4Overflow {
			n = n*radix + d
		}
	}
	if n > ipv4Overflow {
		n = ipv4Overflow
	}
	return n, true
}

// parseIPv4 parses the ASCII domain s, which ends in a number, as an IPv4
// address.
func parseIPv4(s string) (uint32, error) {
	var parts [4]uint64
	np := 0
	if s != "" && s[len(s)-1] == '.' && len(s) > 1 {
		s = s[:len(s)-1]
	}
	for start := 0; ; {
		end := start
		for end < len(s) && s[end] != '.' {
			end++
		}
		if np == 4 {
			return 0, errInvalidIPv4
		}
		n, ok := parseIPv4Number(s[start:end])
		if !ok {
			return 0, errInvalidIPv4
		}
		parts[np] = n
		np++
		if end == len(s) {
			break
		}
		start = end + 1
	}
	for i := 0; i < np-1; i++ {
		if parts[i] > 255 {
			return 0, errInvalidIPv4
		}
	}
	last := parts[np-1]
	if last >= 1<<(8*(5-np)) {
		return 0, errInvalidIPv4
	}
	ip := last
	for i := 0; i < np-1; i++ {
		ip += parts[i] << (8 * (3 - i))
	}
	return uint32(ip), nil
}

// appendIPv4 appends the dotted-decimal form of ip.
func appendIPv4(dst []byte, ip uint32) []byte {
	for i := 3; i >= 0; i-- {
		dst = strconv.AppendUint(dst, uint64(ip>>(8*i)&0xff), 10)
		if i > 0 {
			dst = append(dst, '.')
		}
	}
	return dst
}
