package safebrowsing

import (
	"bytes"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/urlhash/urlhash/hashkey/internal/uts46"
)

// appendHost appends the canonical form of the unescaped host h and reports
// whether it is an IP literal: an IPv4 address in any legal encoding, or a
// bracketed host. Leading and trailing dots are trimmed, runs of dots
// collapsed, a valid UTF-8 internationalised name converted to punycode,
// IPv4 written as four decimals, ASCII letters lowercased and the bytes of
// escapeSet escaped. The V5 profile also normalises bracketed IPv6 and turns
// IPv4-mapped and NAT64 addresses into IPv4.
func (p *Profile) appendHost(dst, h []byte) ([]byte, bool, error) {
	start := len(dst)
	dst, nonASCII := appendHostBytes(dst, h)
	if nonASCII {
		if a, ok := toASCII(h); ok {
			dst, _ = appendHostBytes(dst[:start], a)
		}
	}
	host := dst[start:]
	if len(host) == 0 {
		return dst, false, ErrNoHost
	}
	if host[0] == '[' {
		if len(host) < 2 || host[len(host)-1] != ']' {
			return dst, false, nil
		}
		if p.ipv6 {
			if a, ok := parseIPv6(host[1 : len(host)-1]); ok {
				dst = dst[:start]
				if a.Is4() {
					dst = a.AppendTo(dst)
				} else {
					dst = append(dst, '[')
					dst = a.AppendTo(dst)
					dst = append(dst, ']')
				}
			}
		}
		return dst, true, nil
	}
	if v, ok := parseIPv4(host); ok {
		dst = appendIPv4(dst[:start], v)
		return dst, true, nil
	}
	return dst, false, nil
}

// appendHostBytes appends h with leading and trailing dots trimmed, runs of
// dots collapsed, ASCII letters lowercased and the bytes of escapeSet
// escaped, and reports whether h has a byte >= 0x80.
func appendHostBytes(dst, h []byte) ([]byte, bool) {
	i, j := 0, len(h)
	for i < j && h[i] == '.' {
		i++
	}
	for j > i && h[j-1] == '.' {
		j--
	}
	nonASCII := false
	for ; i < j; i++ {
		c := h[i]
		switch {
		case 'A' <= c && c <= 'Z':
			dst = append(dst, c+'a'-'A')
		case c == '.':
			if h[i-1] != '.' {
				dst = append(dst, '.')
			}
		case escapeSet[c]:
			nonASCII = nonASCII || c >= 0x80
			dst = append(dst, '%', upperhex[c>>4], upperhex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst, nonASCII
}

// toASCII converts an internationalised host name to punycode with UTS #46
// (the project's own tables, uts46.Lookup: mapping, bidi and joiner checks,
// STD3 rules off, so '_', '$' and fullwidth letters do not stop it). When
// the whole name fails, each label is converted on its own and a label
// that still fails keeps its bytes, which the caller escapes. It reports
// false when h is not valid UTF-8.
func toASCII(h []byte) ([]byte, bool) {
	if !utf8.Valid(h) {
		return nil, false
	}
	// Empty labels make the lookup fail; trim and collapse dots first.
	t := make([]byte, 0, len(h))
	for i, c := range h {
		if c == '.' && (len(t) == 0 || h[i-1] == '.') {
			continue
		}
		t = append(t, c)
	}
	if a, err := uts46.Lookup.ToASCII(string(t)); err == nil && a != "" {
		return []byte(a), true
	}
	out := make([]byte, 0, 2*len(t))
	for i, label := range bytes.Split(t, []byte{'.'}) {
		if i > 0 {
			out = append(out, '.')
		}
		a, err := uts46.Lookup.ToASCII(string(label))
		if err != nil || a == "" || strings.IndexByte(a, '.') >= 0 {
			out = append(out, label...)
			continue
		}
		out = append(out, a...)
	}
	return out, true
}

// parseIPv4 parses h as an IPv4 address in any encoding inet_aton accepts:
// one to four dot-separated parts, each decimal, octal (leading 0) or hex
// (leading 0x or 0X, at least one digit); the last part fills the remaining
// bytes. A part too large for its bytes means h is not an address.
func parseIPv4(h []byte) (uint32, bool) {
	var parts [4]uint64
	n := 0
	for i := 0; i <= len(h); {
		if n == 4 {
			return 0, false
		}
		j := i
		for j < len(h) && h[j] != '.' {
			j++
		}
		v, ok := parseIPv4Part(h[i:j])
		if !ok {
			return 0, false
		}
		parts[n] = v
		n++
		i = j + 1
		if j == len(h) {
			break
		}
	}
	var v uint64
	for k := 0; k < n-1; k++ {
		if parts[k] > 0xff {
			return 0, false
		}
		v = v<<8 | parts[k]
	}
	last := parts[n-1]
	bits := 8 * uint(5-n)
	if last >= 1<<bits {
		return 0, false
	}
	return uint32(v<<bits | last), true
}

// parseIPv4Part parses one part of an IPv4 address. Values above 2^32-1
// are rejected.
func parseIPv4Part(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
		if len(s) == 0 {
			return 0, false
		}
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var v uint64
	for _, c := range s {
		d := uint64(hexVal[c])
		if d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}

// appendIPv4 appends v as four dot-separated decimals.
func appendIPv4(dst []byte, v uint32) []byte {
	for i := 3; i >= 0; i-- {
		b := byte(v >> (8 * uint(i)))
		switch {
		case b >= 100:
			dst = append(dst, '0'+b/100, '0'+b/10%10, '0'+b%10)
		case b >= 10:
			dst = append(dst, '0'+b/10, '0'+b%10)
		default:
			dst = append(dst, '0'+b)
		}
		if i > 0 {
			dst = append(dst, '.')
		}
	}
	return dst
}

// nat64 is the well-known NAT64 prefix 64:ff9b::/96 (RFC 6052).
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// parseIPv6 parses the inside of a bracketed host as an IPv6 address with
// no zone. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
// addresses are returned as IPv4.
func parseIPv6(h []byte) (netip.Addr, bool) {
	a, err := netip.ParseAddr(string(h))
	if err != nil || !a.Is6() || a.Zone() != "" {
		return netip.Addr{}, false
	}
	if a.Is4In6() {
		return a.Unmap(), true
	}
	if nat64.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte(b[12:])), true
	}
	return a, true
}
