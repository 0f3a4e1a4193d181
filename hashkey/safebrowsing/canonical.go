package safebrowsing

import "strings"

// layout locates the parts of a canonical URL. Offsets are relative to the
// start of the canonical URL.
type layout struct {
	host  int  // start of the host, just after "://"
	path  int  // start of the path, just after the host
	query int  // index of the '?' that starts the query, or the length when there is none
	ip    bool // the host is an IPv4 address or a bracketed IP literal
}

const upperhex = "0123456789ABCDEF"

// escapeSet marks the bytes that are percent-escaped in a canonical URL:
// every byte <= 0x20 or >= 0x7F, '#' and '%'.
var escapeSet = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c <= 0x20 || c >= 0x7f || c == '#' || c == '%'
	}
	return t
}()

// hexVal maps an ASCII hex digit to its value and every other byte to 0xff.
var hexVal = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = byte(c - 'A' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// appendEscaped appends s to dst with the bytes of escapeSet percent-escaped
// in uppercase hex.
func appendEscaped(dst, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escapeSet[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, '%', upperhex[c>>4], upperhex[c&15])
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// appendUnescaped appends s to dst with tab, CR and LF removed and
// percent-escapes removed repeatedly until none is left. Rewriting "%XY" to
// one byte never overlaps another rewrite, so every order of rewriting ends
// at the same string; this one decodes an escape as soon as its last digit
// is appended, and then any escape the decoded byte completes, which is
// linear where repeated passes over the string would be quadratic.
func appendUnescaped(dst []byte, s string) []byte {
	base := len(dst)
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		n := len(dst)
		if c != '%' && (n-base < 1 || dst[n-1] != '%') && (n-base < 2 || dst[n-2] != '%') {
			// No escape can end in the run up to the next '%' or removed byte.
			j := i + 1
			for j < len(s) && !special(s[j]) {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		dst = append(dst, c)
		i++
		for n := len(dst); n-base >= 3 && dst[n-3] == '%'; n = len(dst) {
			hi, lo := hexVal[dst[n-2]], hexVal[dst[n-1]]
			if hi == 0xff || lo == 0xff {
				break
			}
			dst[n-3] = hi<<4 | lo
			dst = dst[:n-2]
		}
	}
	return dst
}

// special reports whether c is '%' or a byte that canonicalisation removes.
func special(c byte) bool { return c == '%' || c == '\t' || c == '\n' || c == '\r' }

// appendCanonical appends the canonical form of raw to dst and reports its
// layout. On error it returns dst cut back to its original length and a
// bare sentinel error, to be wrapped by the caller.
//
// The fully unescaped URL is first appended after dst as scratch, then the
// canonical URL after it, which is finally moved down over the scratch.
func (p *Profile) appendCanonical(dst []byte, raw string) ([]byte, layout, error) {
	var l layout
	base := len(dst)

	// Cut the fragment at the first '#' of the input, trim C0 controls and
	// spaces from both ends, remove tab/CR/LF, unescape until stable.
	s := raw
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	s = trimControlSpace(s)
	dst = appendUnescaped(dst, s)
	u := dst[base:len(dst):len(dst)] // never written again, even if dst grows
	out := len(dst)

	// Scheme.
	auth, err := p.appendScheme(&dst, u)
	if err != nil {
		return dst[:base], l, err
	}

	// Authority: up to the first '/' or '?'; userinfo and port dropped.
	end := auth
	for end < len(u) && u[end] != '/' && u[end] != '?' {
		end++
	}
	host := u[auth:end]
	for i := len(host) - 1; i >= 0; i-- {
		if host[i] == '@' {
			host = host[i+1:]
			break
		}
	}
	host, ok := cutPort(host)
	if !ok {
		return dst[:base], l, ErrPort
	}
	l.host = len(dst) - out
	dst, l.ip, err = p.appendHost(dst, host)
	if err != nil {
		return dst[:base], l, err
	}
	l.path = len(dst) - out

	// Path, then query.
	rest := u[end:]
	q := len(rest)
	for i, c := range rest {
		if c == '?' {
			q = i
			break
		}
	}
	dst = appendPath(dst, rest[:q])
	l.query = len(dst) - out
	if q < len(rest) {
		dst = append(dst, '?')
		dst = appendEscaped(dst, rest[q+1:])
	}

	n := copy(dst[base:], dst[out:])
	return dst[:base+n], l, nil
}

// trimControlSpace trims the bytes <= 0x20 (C0 controls and space) from
// both ends of s.
func trimControlSpace(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// appendScheme appends the lowercased scheme of u and "://" to *dst (or
// "http://" when u has none) and returns the index in u where the authority
// starts.
//
// A scheme is RFC 3986's ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
// followed by ':' and then "//". A scheme-like prefix followed by ':' and
// digits (up to '/', '?' or the end) is a host and port with the scheme
// missing, as in "www.example.com:8080/". Anything else before a ':' is a
// URL with no authority: not a web URL.
func (p *Profile) appendScheme(dst *[]byte, u []byte) (int, error) {
	if len(u) == 0 || !isAlpha(u[0]) {
		*dst = append(*dst, "http://"...)
		return 0, nil
	}
	for i := 1; i < len(u); i++ {
		c := u[i]
		switch {
		case isAlpha(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			continue
		case c == ':':
			if len(u) >= i+3 && u[i+1] == '/' && u[i+2] == '/' {
				start := len(*dst)
				for _, c := range u[:i] {
					*dst = append(*dst, lower(c))
				}
				if hostless(string((*dst)[start:])) {
					return 0, ErrNotWeb
				}
				*dst = append(*dst, "://"...)
				return i + 3, nil
			}
			j := i + 1
			for j < len(u) && '0' <= u[j] && u[j] <= '9' {
				j++
			}
			if j > i+1 && (j == len(u) || u[j] == '/' || u[j] == '?') {
				*dst = append(*dst, "http://"...)
				return 0, nil
			}
			return 0, ErrNotWeb
		default:
			*dst = append(*dst, "http://"...)
			return 0, nil
		}
	}
	*dst = append(*dst, "http://"...)
	return 0, nil
}

// hostless reports whether scheme never names a network host, so that a URL
// with it is not checked even when written with "//".
func hostless(scheme string) bool {
	switch scheme {
	case "about", "blob", "data", "file", "javascript", "mailto":
		return true
	}
	return false
}

// cutPort drops the port from an authority whose userinfo is gone. A host
// that starts with '[' (after the leading dots, which are trimmed later)
// ends at the first ']'; any other host ends at the first ':'. It reports
// false when a port follows that is not a decimal number up to 65535 (or
// empty): "good.com:evil.com" is not a URL of good.com.
func cutPort(h []byte) ([]byte, bool) {
	k := 0
	for k < len(h) && h[k] == '.' {
		k++
	}
	end := len(h)
	if k < len(h) && h[k] == '[' {
		for i, c := range h {
			if c == ']' {
				end = i + 1
				break
			}
		}
		if end < len(h) && h[end] != ':' {
			return h, false
		}
	} else {
		for i, c := range h {
			if c == ':' {
				end = i
				break
			}
		}
	}
	if end == len(h) {
		return h, true
	}
	port := 0
	for _, c := range h[end+1:] {
		if c < '0' || c > '9' {
			return h, false
		}
		if port = 10*port + int(c-'0'); port > 65535 {
			return h, false
		}
	}
	return h[:end], true
}

// appendPath appends the canonical form of the unescaped path p (which is
// empty or starts with '/'): "." and ".." segments resolved as in RFC 3986
// (a trailing one leaves a trailing slash; ".." never climbs above the
// root), runs of slashes collapsed, bytes escaped. An empty path becomes "/".
func appendPath(dst, p []byte) []byte {
	root := len(dst)
	dst = append(dst, '/')
	dir := true // the output ends with a directory: keep its trailing '/'
	for i := 0; i < len(p); {
		if p[i] == '/' {
			i++
			continue
		}
		j := i + 1
		for j < len(p) && p[j] != '/' {
			j++
		}
		seg := p[i:j]
		switch {
		case len(seg) == 1 && seg[0] == '.':
			dir = true
		case len(seg) == 2 && seg[0] == '.' && seg[1] == '.':
			// Drop the last segment: dst ends with "/seg/" or is the root "/".
			if n := len(dst); n-root > 1 {
				k := n - 2
				for dst[k] != '/' {
					k--
				}
				dst = dst[:k+1]
			}
			dir = true
		default:
			dst = appendEscaped(dst, seg)
			dst = append(dst, '/')
			dir = j < len(p)
		}
		i = j
	}
	if !dir {
		dst = dst[:len(dst)-1]
	}
	return dst
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
