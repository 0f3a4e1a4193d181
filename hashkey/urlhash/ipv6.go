package urlhash

import (
	"errors"
	"strconv"
)

// This file implements the URL Standard's IPv6 parser and serialiser.
//
// https://url.spec.whatwg.org/#concept-ipv6-parser

var errInvalidIPv6 = errors.New("invalid ipv6 address")

// parseIPv6 parses the text between the brackets of an IPv6 host.
func parseIPv6(in []rune) ([8]uint16, error) {
	var addr [8]uint16
	piece, compress := 0, -1
	p := 0
	at := func(i int) rune {
		if i < len(in) {
			return in[i]
		}
		return -1 // EOF
	}
	if at(p) == ':' {
		if at(p+1) != ':' {
			return addr, errInvalidIPv6
		}
		p += 2
		piece++
		compress = piece
	}
	for at(p) != -1 {
		if piece == 8 {
			return addr, errInvalidIPv6
		}
		if at(p) == ':' {
			if compress != -1 {
				return addr, errInvalidIPv6
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := 0, 0
		for length < 4 && at(p) != -1 && isASCIIHex(at(p)) {
			value = value*16 + int(hexVal(byte(at(p))))
			p++
			length++
		}
		if at(p) == '.' {
			if length == 0 {
				return addr, errInvalidIPv6
			}
			p -= length
			if piece > 6 {
				return addr, errInvalidIPv6
			}
			numbersSeen := 0
			for at(p) != -1 {
				ipv4Piece := -1
				if numbersSeen > 0 {
					if at(p) == '.' && numbersSeen < 4 {
						p++
					} else {
						return addr, errInvalidIPv6
					}
				}
				if !isASCIIDigit(at(p)) {
					return addr, errInvalidIPv6
				}
				for isASCIIDigit(at(p)) {
					n := int(at(p) - '0')
					switch ipv4Piece {
					case -1:
						ipv4Piece = n
					case 0:
						return addr, errInvalidIPv6
					default:
						ipv4Piece = ipv4Piece*10 + n
					}
					if ipv4Piece > 255 {
						return addr, errInvalidIPv6
					}
					p++
				}
				addr[piece] = uint16(addr[piece])*0x100 + uint16(ipv4Piece)
				numbersSeen++
				if numbersSeen == 2 || numbersSeen == 4 {
					piece++
				}
			}
			if numbersSeen != 4 {
				return addr, errInvalidIPv6
			}
			break
		} else if at(p) == ':' {
			p++
			if at(p) == -1 {
				return addr, errInvalidIPv6
			}
		} else if at(p) != -1 {
			return addr, errInvalidIPv6
		}
		addr[piece] = uint16(value)
		piece++
	}
	if compress != -1 {
		swaps := piece - compress
		piece = 7
		for piece != 0 && swaps > 0 {
			addr[piece], addr[compress+swaps-1] = addr[compress+swaps-1], addr[piece]
			piece--
			swaps--
		}
	} else if piece != 8 {
		return addr, errInvalidIPv6
	}
	return addr, nil
}

// appendIPv6 appends the bracketed, compressed form of addr.
func appendIPv6(dst []byte, addr [8]uint16) []byte {
	// The first longest run of two or more zero pieces is compressed.
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if addr[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && addr[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	dst = append(dst, '[')
	for i := 0; i < 8; i++ {
		if i == best {
			if i == 0 {
				dst = append(dst, "::"...)
			} else {
				dst = append(dst, ':')
			}
			i += bestLen - 1
			continue
		}
		dst = strconv.AppendUint(dst, uint64(addr[i]), 16)
		if i < 7 {
			dst = append(dst, ':')
		}
	}
	return append(dst, ']')
}
