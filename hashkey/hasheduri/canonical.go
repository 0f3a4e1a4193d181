package hasheduri

import (
	"fmt"
	"net/netip"
	"strings"
)

// Canonical returns the canonical form of rawURL under Appendix A variant
// v, keeping its query and fragment. It is the string that Generate hashes
// with KeepBoth. See the package documentation for the rules.
//
// A URL that cannot be canonicalised is a *URLError wrapping ErrRelative,
// ErrScheme, ErrHost or ErrPort; an invalid v is an error wrapping
// ErrUnknownVariant.
func Canonical(rawURL string, v Variant) (string, error) {
	return CanonicalKeep(rawURL, KeepBoth, v)
}

// CanonicalKeep is Canonical after step 1 of draft §4.3: the fragment and
// the query are dropped unless keep keeps them. It returns exactly the
// string that Generate(rawURL, alg, keep, v) hashes.
func CanonicalKeep(rawURL string, keep Keep, v Variant) (string, error) {
	b, err := appendCanonical(make([]byte, 0, len(rawURL)+8), rawURL, keep, v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendCanonical appends the canonical form of raw to dst.
func appendCanonical(dst []byte, raw string, keep Keep, v Variant) ([]byte, error) {
	if !keep.IsValid() {
		return dst, fmt.Errorf("%w: %v", ErrUnknownKeep, keep)
	}
	if !v.IsValid() {
		return dst, fmt.Errorf("%w: %v", ErrUnknownVariant, v)
	}
	dst, err := canonicalize(dst, raw, keep, v)
	if err != nil {
		return dst, &URLError{Variant: v, Input: raw, Err: err}
	}
	return dst, nil
}

// canonicalize does the work of appendCanonical; its errors are the causes
// that appendCanonical wraps in a *URLError.
func canonicalize(dst []byte, raw string, keep Keep, v Variant) ([]byte, error) {
	lower := v == P
	s := trimSpace(raw)

	// Scheme: everything before the first ":" that comes before any of
	// "/?#" (RFC 3986 §3.1, §4.2). Lowercased in both variants (§4.3 (2)).
	i := strings.IndexAny(s, ":/?#")
	if i < 0 || s[i] != ':' {
		return dst, ErrRelative
	}
	if !isScheme(s[:i]) {
		return dst, fmt.Errorf("%w %q", ErrScheme, s[:i])
	}
	for j := 0; j < i; j++ {
		dst = append(dst, toLower(s[j]))
	}
	dst = append(dst, ':')
	rest := s[i+1:]

	// Step 1: split off the fragment and the query.
	rest, frag, hasFrag := strings.Cut(rest, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")

	switch {
	case strings.HasPrefix(rest, "//"):
		auth, path := rest[2:], ""
		if j := strings.IndexByte(auth, '/'); j >= 0 {
			auth, path = auth[:j], auth[j:]
		}
		var err error
		if dst, err = appendHier(dst, s[:i], auth, true, path, lower); err != nil {
			return dst, err
		}
	case strings.HasPrefix(rest, "/"):
		var err error
		if dst, err = appendHier(dst, s[:i], "", false, rest, lower); err != nil {
			return dst, err
		}
	default:
		// Not hierarchical in the RFC 2396 sense, so Appendix A does not
		// apply: only escapes are normalised (and P lowercases).
		dst, _ = appendNorm(dst, rest, inOpaque, lower)
	}

	// Appendix A (9): include only components that are not empty.
	if hasQuery && keep&KeepQuery != 0 && query != "" {
		dst = append(dst, '?')
		dst, _ = appendNorm(dst, query, inQuery, lower)
	}
	if hasFrag && keep&KeepFrag != 0 && frag != "" {
		dst = append(dst, '#')
		dst, _ = appendNorm(dst, frag, inQuery, lower)
	}
	return dst, nil
}

// appendHier appends the authority (as "//" authority, when it is not
// empty) and the path of a hierarchical URI: Appendix A steps (2)-(9).
func appendHier(dst []byte, scheme, auth string, hasAuth bool, path string, lower bool) ([]byte, error) {
	// The path is normalised first, into its own buffer, because whether
	// the authority may be left out depends on it.
	var pbuf [128]byte
	var sbuf [16]span
	pb, segs := splitPath(pbuf[:0], sbuf[:0], path, lower)
	segs = removeDotSegments(pb, segs)
	if lower {
		// Step (6), variant P: drop empty segments. A final empty
		// segment (a trailing "/") stays, so that the draft's own
		// "/test/" example is a fixed point.
		segs = dropEmpty(segs)
	}

	mark := len(dst)
	dst = append(dst, "//"...)
	if hasAuth {
		var err error
		if dst, err = appendAuthority(dst, scheme, auth, lower); err != nil {
			return dst, err
		}
	}
	// Without an authority a path cannot begin with "//" (RFC 3986 §3.3):
	// keep an empty authority in that case only.
	if len(dst) == mark+2 && !(len(segs) > 1 && segs[0].empty()) {
		dst = dst[:mark]
	}

	http := strings.EqualFold(scheme, "http")
	for k, sp := range segs {
		dst = append(dst, '/')
		seg := pb[sp.start:sp.end]
		if k == len(segs)-1 {
			// Step (8): an http index page becomes its directory. In
			// variant P "index.html" would first become "index.htm" by
			// step (7); testing both names here is the same.
			if http && (string(seg) == "index.htm" || string(seg) == "index.html") {
				break
			}
			if lower {
				dst = appendMappedExt(dst, seg)
				break
			}
		}
		dst = append(dst, seg...)
	}
	return dst, nil
}

// appendMappedExt appends seg with its extension mapped by Appendix A
// step (7), variant P.
func appendMappedExt(dst, seg []byte) []byte {
	exts := [...]struct{ from, to string }{
		{".html", ".htm"},
		{".jpeg", ".jpg"},
		{".text", ".txt"},
		{".ram", ".ra"},
	}
	for _, m := range exts {
		if len(seg) >= len(m.from) && string(seg[len(seg)-len(m.from):]) == m.from {
			dst = append(dst, seg[:len(seg)-len(m.from)]...)
			return append(dst, m.to...)
		}
	}
	return append(dst, seg...)
}

// span is a path segment held in a buffer, as buf[start:end].
type span struct{ start, end int }

func (s span) empty() bool { return s.start == s.end }

// splitPath normalises each segment of path (which is empty or begins with
// "/") into buf and returns the segments' spans.
func splitPath(buf []byte, segs []span, path string, lower bool) ([]byte, []span) {
	if path == "" {
		return buf, segs
	}
	path = path[1:]
	for {
		seg, rest, more := strings.Cut(path, "/")
		start := len(buf)
		buf, _ = appendNorm(buf, seg, inSegment, lower)
		segs = append(segs, span{start, len(buf)})
		if !more {
			return buf, segs
		}
		path = rest
	}
}

// removeDotSegments resolves the "." and ".." segments of segs, held in
// buf, in place (RFC 3986 §5.2.4, §6.2.2.3). A dot segment at the end
// leaves a trailing empty segment, so "/a/b/.." becomes "/a/".
func removeDotSegments(buf []byte, segs []span) []span {
	out := segs[:0]
	for k, sp := range segs {
		last := k == len(segs)-1
		switch string(buf[sp.start:sp.end]) {
		case ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, sp)
			continue
		}
		if last {
			out = append(out, span{})
		}
	}
	return out
}

// dropEmpty removes the empty segments of segs, except a final one.
func dropEmpty(segs []span) []span {
	out := segs[:0]
	for k, sp := range segs {
		if sp.empty() && k != len(segs)-1 {
			continue
		}
		out = append(out, sp)
	}
	return out
}

// appendAuthority appends the canonical authority: [userinfo "@"] host
// [":" port], leaving out empty parts (steps (3), (4), (5), (9)).
func appendAuthority(dst []byte, scheme, auth string, lower bool) ([]byte, error) {
	userinfo, hostport := "", auth
	if j := strings.LastIndexByte(auth, '@'); j >= 0 {
		userinfo, hostport = auth[:j], auth[j+1:]
	}
	host, port := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		j := strings.IndexByte(hostport, ']')
		if j < 0 {
			return dst, fmt.Errorf("%w %q: no \"]\"", ErrHost, hostport)
		}
		host = hostport[:j+1]
		switch after := hostport[j+1:]; {
		case after == "":
		case after[0] == ':':
			port = after[1:]
		default:
			return dst, fmt.Errorf("%w %q: text after \"]\"", ErrHost, hostport)
		}
	} else if j := strings.LastIndexByte(hostport, ':'); j >= 0 {
		host, port = hostport[:j], hostport[j+1:]
	}

	// Userinfo: variant P lowercases it (N keeps "Fred").
	start := len(dst)
	dst, _ = appendNorm(dst, userinfo, inUserinfo, lower)
	if len(dst) > start {
		dst = append(dst, '@')
	}

	var err error
	if dst, err = appendHost(dst, host); err != nil {
		return dst, err
	}

	// Port: digits only, leading zeros removed, the scheme's default
	// dropped.
	for j := 0; j < len(port); j++ {
		if !isDigit(port[j]) {
			return dst, fmt.Errorf("%w %q", ErrPort, port)
		}
	}
	if port != "" {
		port = trimZeros(port)
		if port != defaultPort(scheme) {
			dst = append(dst, ':')
			dst = append(dst, port...)
		}
	}
	return dst, nil
}

// appendHost appends the canonical host: lowercased in both variants, an
// IPv4 address without leading zeros, an IPv6 address in RFC 5952 form.
func appendHost(dst []byte, host string) ([]byte, error) {
	if strings.HasPrefix(host, "[") {
		inner := host[1 : len(host)-1]
		if inner != "" && (inner[0] == 'v' || inner[0] == 'V') {
			if !isIPvFuture(inner) {
				return dst, fmt.Errorf("%w %q: malformed IPvFuture", ErrHost, host)
			}
			dst = append(dst, '[')
			for j := 0; j < len(inner); j++ {
				dst = append(dst, toLower(inner[j]))
			}
			return append(dst, ']'), nil
		}
		if strings.IndexByte(inner, '%') >= 0 {
			return dst, fmt.Errorf("%w %q: zone identifiers are not supported", ErrHost, host)
		}
		addr, err := netip.ParseAddr(inner)
		if err != nil || !addr.Is6() {
			return dst, fmt.Errorf("%w %q: not an IPv6 address", ErrHost, host)
		}
		dst = append(dst, '[')
		dst = addr.AppendTo(dst)
		return append(dst, ']'), nil
	}
	start := len(dst)
	dst, ok := appendNorm(dst, host, inHost, true)
	if !ok {
		return dst[:start], fmt.Errorf("%w %q", ErrHost, host)
	}
	return compactIPv4(dst, start), nil
}

// compactIPv4 removes the leading zeros of dst[start:] if it is an IPv4
// address: four dot-separated runs of decimal digits, each at most 255.
// Anything else is a registered name and stays as it is.
func compactIPv4(dst []byte, start int) []byte {
	h := dst[start:]
	var parts [4][2]int
	n, from := 0, 0
	for j := 0; j <= len(h); j++ {
		if j < len(h) && h[j] != '.' {
			if !isDigit(h[j]) {
				return dst
			}
			continue
		}
		if n == 4 || j == from {
			return dst
		}
		parts[n] = [2]int{from, j}
		n++
		from = j + 1
	}
	if n != 4 {
		return dst
	}
	for _, p := range parts {
		d := trimZeros(string(h[p[0]:p[1]]))
		if len(d) > 3 || (len(d) == 3 && d > "255") {
			return dst
		}
	}
	// Rewrite in place: the write position never passes the read position.
	w := start
	for k, p := range parts {
		if k > 0 {
			dst[w] = '.'
			w++
		}
		r := p[0] + start
		end := p[1] + start
		for r < end-1 && dst[r] == '0' {
			r++
		}
		w += copy(dst[w:], dst[r:end])
	}
	return dst[:w]
}

// trimZeros removes the leading zeros of a run of digits, keeping one.
func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

// defaultPort returns the default port of scheme, in any case, or "".
func defaultPort(scheme string) string {
	var b [8]byte
	if len(scheme) > len(b) {
		return ""
	}
	for i := 0; i < len(scheme); i++ {
		b[i] = toLower(scheme[i])
	}
	switch string(b[:len(scheme)]) {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	case "gopher":
		return "70"
	case "telnet":
		return "23"
	case "nntp":
		return "119"
	case "ldap":
		return "389"
	case "imap":
		return "143"
	case "pop":
		return "110"
	case "rtsp":
		return "554"
	case "sip":
		return "5060"
	case "sips":
		return "5061"
	}
	return ""
}

// component names the RFC 3986 production whose characters may appear
// unescaped.
type component uint8

const (
	inUserinfo component = iota // unreserved / sub-delims / ":"
	inHost                      // unreserved / sub-delims (reg-name)
	inSegment                   // pchar
	inQuery                     // pchar / "/" / "?" (query and fragment)
	inOpaque                    // pchar / "/" (a path that is not absolute)
)

// allows reports whether c may appear unescaped in the component.
func (in component) allows(c byte) bool {
	switch {
	case isUnreserved(c), isSubDelim(c):
		return true
	case c == ':':
		return in != inHost
	case c == '@':
		return in == inSegment || in == inQuery || in == inOpaque
	case c == '/':
		return in == inQuery || in == inOpaque
	case c == '?':
		return in == inQuery
	}
	return false
}

const upperHex = "0123456789ABCDEF"

// appendNorm appends s to dst with RFC 3986 §6.2.2 normalisation: an
// escape of an unreserved character is decoded, other escapes get
// uppercase hex digits, a "%" that starts no escape becomes "%25" and any
// other byte that the component does not allow is percent-encoded (so
// non-ASCII text is encoded as its UTF-8 bytes, as RFC 3987 §3.1 maps an
// IRI). With lower, ASCII letters outside escapes are lowercased.
//
// In a host a disallowed ASCII byte or a stray "%" is not encoded:
// appendNorm reports false and the caller rejects the host.
func appendNorm(dst []byte, s string, in component, lower bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				d := unhex(s[i+1])<<4 | unhex(s[i+2])
				i += 2
				if isUnreserved(d) {
					if lower {
						d = toLower(d)
					}
					dst = append(dst, d)
				} else {
					dst = append(dst, '%', upperHex[d>>4], upperHex[d&15])
				}
				continue
			}
			if in == inHost {
				return dst, false
			}
			dst = append(dst, "%25"...)
			continue
		}
		if in.allows(c) {
			if lower {
				c = toLower(c)
			}
			dst = append(dst, c)
			continue
		}
		if in == inHost && c < 0x80 {
			return dst, false
		}
		dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
	}
	return dst, true
}

// trimSpace removes leading and trailing C0 controls and spaces.
func trimSpace(s string) string {
	for len(s) > 0 && s[0] <= ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] <= ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// isScheme reports whether s matches ALPHA *( ALPHA / DIGIT / "+" / "-" /
// "." ).
func isScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// isIPvFuture reports whether s matches "v" 1*HEXDIG "." 1*( unreserved /
// sub-delims / ":" ), ignoring case.
func isIPvFuture(s string) bool {
	if len(s) < 4 || (s[0] != 'v' && s[0] != 'V') {
		return false
	}
	ver, addr, ok := strings.Cut(s[1:], ".")
	if !ok || ver == "" || addr == "" {
		return false
	}
	for i := 0; i < len(ver); i++ {
		if !isHex(ver[i]) {
			return false
		}
	}
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; !isUnreserved(c) && !isSubDelim(c) && c != ':' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool {
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	}
	return false
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
