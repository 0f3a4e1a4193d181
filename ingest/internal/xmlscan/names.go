package xmlscan

import "unicode/utf8"

// isName reports whether b, made of nameByte bytes, is a Name of XML 1.0
// (fifth edition).
func isName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if c := b[0]; '0' <= c && c <= '9' || c == '.' || c == '-' {
		return false
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return isNameSlow(b)
		}
	}
	return true
}

// isNameSlow is isName for any bytes.
func isNameSlow(b []byte) bool {
	for i := 0; i < len(b); {
		r, size := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			if r, size = utf8.DecodeRune(b[i:]); r == utf8.RuneError && size == 1 {
				return false
			}
		}
		if i == 0 && !IsNameStartChar(r) || i > 0 && !IsNameChar(r) {
			return false
		}
		i += size
	}
	return len(b) > 0
}

// IsNCName reports whether s is an NCName of Namespaces in XML 1.0: a
// Name without ':'.
func IsNCName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == utf8.RuneError || r == ':' {
			return false
		}
		if i == 0 && !IsNameStartChar(r) || i > 0 && !IsNameChar(r) {
			return false
		}
	}
	return true
}

// IsNameStartChar reports whether r is a NameStartChar of XML 1.0 (fifth
// edition). Turtle's PN_CHARS_BASE is these but ':' and '_'.
func IsNameStartChar(r rune) bool {
	switch {
	case 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z', r == ':', r == '_':
		return true
	case 0xC0 <= r && r <= 0xD6, 0xD8 <= r && r <= 0xF6, 0xF8 <= r && r <= 0x2FF,
		0x370 <= r && r <= 0x37D, 0x37F <= r && r <= 0x1FFF, 0x200C <= r && r <= 0x200D,
		0x2070 <= r && r <= 0x218F, 0x2C00 <= r && r <= 0x2FEF, 0x3001 <= r && r <= 0xD7FF,
		0xF900 <= r && r <= 0xFDCF, 0xFDF0 <= r && r <= 0xFFFD, 0x10000 <= r && r <= 0xEFFFF:
		return true
	}
	return false
}

// IsNameChar reports whether r is a NameChar of XML 1.0 (fifth edition):
// a NameStartChar, '-', '.', [0-9], #xB7, [#x300-#x36F] or
// [#x203F-#x2040].
func IsNameChar(r rune) bool {
	return IsNameStartChar(r) || r == '-' || r == '.' || '0' <= r && r <= '9' || r == 0xB7 ||
		0x300 <= r && r <= 0x36F || 0x203F <= r && r <= 0x2040
}
