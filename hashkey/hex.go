package hashkey

import "strconv"

// hexValue maps a byte to its hex digit value, or 0xff for a non-digit:
// one table load per digit instead of three range checks.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()

// decodeHex fills dst from exactly 2*len(dst) hex digits (either case) and
// reports whether s was such a string. dst may be partly written when it
// returns false.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, lo := hexValue[s[2*i]], hexValue[s[2*i+1]]
		if (hi|lo)&0xf0 != 0 { // 0xff marks a non-digit
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

// ParsePrefix reads a hash prefix written as 1..64 hex digits, either case;
// an odd number of digits is a half-byte prefix. It returns the prefix
// bytes (the low half of a final half byte is zero) and the prefix length
// in bits. Short and very-short hashes in the decimal form are read with
// ParseShort and ParseVeryShort. A malformed prefix is a *TextError.
func ParsePrefix(s string) (prefix []byte, bits int, err error) {
	if s == "" || len(s) > 2*Size {
		return nil, 0, &TextError{Kind: "prefix", Input: s, Reason: "want 1.." + strconv.Itoa(2*Size) + " hex digits"}
	}
	b := make([]byte, (len(s)+1)/2)
	for i := 0; i < len(s); i++ {
		v := hexValue[s[i]]
		if v == 0xff {
			return nil, 0, &TextError{Kind: "prefix", Input: s, Reason: strconv.QuoteRune(rune(s[i])) + " is not a hex digit"}
		}
		if i%2 == 0 {
			b[i/2] = v << 4
		} else {
			b[i/2] |= v
		}
	}
	return b, 4 * len(s), nil
}

// ParseKey reads a hash as ParseHash does or, when it is an even number of
// 2*minPrefix..2*(Size-1) hex digits, a prefix of that many bytes. It
// returns the bytes in a Hash (zero after the prefix) and how many of them
// the text gave: Size for a full hash. A malformed key is a *TextError.
func ParseKey(s string, minPrefix int) (h Hash, n int, err error) {
	if h, err := ParseHash(s); err == nil {
		return h, Size, nil
	}
	if len(s)%2 == 0 && len(s) >= 2*minPrefix && len(s) < 2*Size && decodeHex(h[:len(s)/2], s) {
		return h, len(s) / 2, nil
	}
	return Hash{}, 0, &TextError{Kind: "hash", Input: s, Reason: "want " + strconv.Itoa(2*Size) + " hex digits, the decimal form w0-w1-w2-w3, or an even " +
		strconv.Itoa(2*minPrefix) + ".." + strconv.Itoa(2*Size-2) + " hex digits for a prefix"}
}
