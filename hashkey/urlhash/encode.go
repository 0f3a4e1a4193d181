package urlhash

import "unicode/utf8"

// This file holds the URL Standard's percent-encode sets and the decoding
// of input bytes into scalar values.
//
// https://url.spec.whatwg.org/#percent-encoded-bytes

// encodeSet is a percent-encode set: the ASCII bytes it holds are written as
// %XX; every code point above U+007E is always encoded, so only ASCII needs a
// table.
type encodeSet uint8

// The sets, as bits of encodeTable. Each is a superset of the one before it,
// except that specialQuerySet and pathSet both extend querySet.
const (
	c0ControlSet    encodeSet = 1 << iota // C0 controls and DEL
	fragmentSet                           // c0 + space " < > `
	querySet                              // c0 + space " # < >
	specialQuerySet                       // query + '
	pathSet                               // query + ? ^ ` { }
	userinfoSet                           // path + / : ; = @ [ \ ] |
)

// encodeTable[b]&set != 0 when ASCII byte b is in set.
var encodeTable = func() (t [128]encodeSet) {
	for b := 0; b < 128; b++ {
		var s encodeSet
		if b < 0x20 || b == 0x7f {
			s = c0ControlSet | fragmentSet | querySet | specialQuerySet | pathSet | userinfoSet
		}
		switch b {
		case ' ', '"', '<', '>':
			s |= fragmentSet | querySet | specialQuerySet | pathSet | userinfoSet
		case '`':
			s |= fragmentSet | pathSet | userinfoSet
		case '#':
			s |= querySet | specialQuerySet | pathSet | userinfoSet
		case '\'':
			s |= specialQuerySet
		case '?', '^', '{', '}':
			s |= pathSet | userinfoSet
		case '/', ':', ';', '=', '@', '[', '\\', ']', '|':
			s |= userinfoSet
		}
		t[b] = s
	}
	return t
}()

const upperHex = "0123456789ABCDEF"

// appendEncodedRune appends r, UTF-8 percent-encoded with set, to dst.
func appendEncodedRune(dst []byte, r rune, set encodeSet) []byte {
	if r < utf8.RuneSelf {
		if encodeTable[r]&set != 0 {
			return append(dst, '%', upperHex[r>>4], upperHex[r&15])
		}
		return append(dst, byte(r))
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, b := range buf[:n] {
		dst = append(dst, '%', upperHex[b>>4], upperHex[b&15])
	}
	return dst
}

// appendEncodedRunes appends every rune of rs, percent-encoded with set.
func appendEncodedRunes(dst []byte, rs []rune, set encodeSet) []byte {
	for _, r := range rs {
		dst = appendEncodedRune(dst, r, set)
	}
	return dst
}

// decodeLossy returns the scalar values of b, with each maximal ill-formed
// subsequence replaced by one U+FFFD, as the Encoding Standard's UTF-8
// decoder (and so a JavaScript USVString conversion, Rust's from_utf8_lossy
// and Python's "replace" handler) does. Go's own range loop differs: it
// yields one U+FFFD per byte of a truncated sequence.
func decodeLossy(dst []rune, b string) []rune {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, rune(c))
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(b[i:])
		if r != utf8.RuneError || n > 1 {
			dst = append(dst, r)
			i += n
			continue
		}
		dst = append(dst, utf8.RuneError)
		i += illFormedLen(b[i:])
	}
	return dst
}

// illFormedLen returns the length of the maximal subpart of an ill-formed
// UTF-8 sequence at the start of s (at least 1).
func illFormedLen(s string) int {
	c := s[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(s); n++ {
		if s[n] < lo || s[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// isASCIIAlpha reports whether r is an ASCII letter.
func isASCIIAlpha(r rune) bool { return r|0x20 >= 'a' && r|0x20 <= 'z' }

// isASCIIDigit reports whether r is an ASCII digit.
func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }

// isASCIIHex reports whether r is an ASCII hex digit.
func isASCIIHex(r rune) bool {
	return isASCIIDigit(r) || r|0x20 >= 'a' && r|0x20 <= 'f'
}

// hexVal returns the value of hex digit c.
func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// percentDecode returns the bytes of s (UTF-8 encoded) with every %XX
// sequence replaced by its byte.
func percentDecode(s []rune) []byte {
	var raw []byte
	for _, r := range s {
		raw = utf8.AppendRune(raw, r)
	}
	out := raw[:0]
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '%' && i+2 < len(raw) && isASCIIHex(rune(raw[i+1])) && isASCIIHex(rune(raw[i+2])) {
			out = append(out, hexVal(raw[i+1])<<4|hexVal(raw[i+2]))
			i += 2
			continue
		}
		out = append(out, c)
	}
	return out
}
