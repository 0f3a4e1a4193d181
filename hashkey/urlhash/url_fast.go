package urlhash

// This file holds the fast path of the url-hash canonical form: a single
// pass over the common case that writes the serialisation straight into
// dst without allocating. It accepts only input on which the full parser
// provably does the same; for anything else it reports false and the
// caller falls back to appendFull. The tests and FuzzCanonical check
// appendFast(x) == appendFull(x) whenever the fast path accepts x.
//
// Accepted: printable ASCII (space allowed inside, never at either end);
// scheme http, https, ws, wss or ftp in any case, followed by exactly two
// forward slashes; no userinfo; a host of ASCII letters, digits, '-', '_'
// and '.', no label starting with "xn--" and a last label not starting with
// a digit (so it is not an IPv4 address); an optional decimal port up to
// 65535; a path with no backslash and no dot segment (".", "..", "%2e"
// forms); any query and fragment.

// fastHost classifies host bytes: 1 keep, 2 lower-case, 0 not accepted.
var fastHost = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = 1
		t[c-0x20] = 2
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = 1
	}
	t['-'], t['_'], t['.'] = 1, 1, 1
	return t
}()

// appendFast appends the canonical form of raw to dst when raw is in the
// fast path's domain; ok is false (and dst's length unchanged) otherwise.
func appendFast(dst []byte, raw string, dropFragment bool) (out []byte, ok bool) {
	n := len(raw)
	if n == 0 || raw[0] <= ' ' || raw[n-1] <= ' ' {
		return dst, false
	}
	// Scheme.
	var scheme string
	var defPort int
	i := 0
	for i < n && i < 6 && raw[i]|0x20 >= 'a' && raw[i]|0x20 <= 'z' {
		i++
	}
	if i == n || raw[i] != ':' {
		return dst, false
	}
	switch i {
	case 2:
		if raw[0]|0x20 == 'w' && raw[1]|0x20 == 's' {
			scheme, defPort = "ws", 80
		}
	case 3:
		if raw[0]|0x20 == 'w' && raw[1]|0x20 == 's' && raw[2]|0x20 == 's' {
			scheme, defPort = "wss", 443
		} else if raw[0]|0x20 == 'f' && raw[1]|0x20 == 't' && raw[2]|0x20 == 'p' {
			scheme, defPort = "ftp", 21
		}
	case 4, 5:
		if raw[0]|0x20 == 'h' && raw[1]|0x20 == 't' && raw[2]|0x20 == 't' && raw[3]|0x20 == 'p' {
			if i == 4 {
				scheme, defPort = "http", 80
			} else if raw[4]|0x20 == 's' {
				scheme, defPort = "https", 443
			}
		}
	}
	if scheme == "" || i+3 > n || raw[i+1] != '/' || raw[i+2] != '/' {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, scheme...)
	dst = append(dst, "://"...)

	// Host.
	i += 3
	hostStart := i
	labelStart := i
	lastLabel, prevLabel := i, i // starts of the last two labels
	for ; i < n; i++ {
		c := raw[i]
		k := fastHost[c]
		if k == 0 {
			break
		}
		if c == '.' {
			prevLabel, lastLabel = lastLabel, i+1
			labelStart = i + 1
			dst = append(dst, c)
			continue
		}
		if i == labelStart && i+4 <= n && (c|0x20) == 'x' && raw[i+1]|0x20 == 'n' && raw[i+2] == '-' && raw[i+3] == '-' {
			return dst[:start], false
		}
		if k == 2 {
			c += 0x20
		}
		dst = append(dst, c)
	}
	if i == hostStart {
		return dst[:start], false
	}
	// The label deciding "ends in a number": the last one, or the one
	// before a single trailing dot.
	numLabel := lastLabel
	if lastLabel == i && i-hostStart > 1 {
		numLabel = prevLabel
	}
	if numLabel < i && raw[numLabel] >= '0' && raw[numLabel] <= '9' {
		return dst[:start], false
	}

	// Port.
	if i < n && raw[i] == ':' {
		i++
		port, digits := 0, 0
		for ; i < n && raw[i] >= '0' && raw[i] <= '9'; i++ {
			port = port*10 + int(raw[i]-'0')
			if port > 65535 {
				return dst[:start], false
			}
			digits++
		}
		if digits > 0 && port != defPort {
			dst = append(dst, ':')
			dst = appendPort(dst, port)
		}
	}
	if i < n && raw[i] != '/' && raw[i] != '?' && raw[i] != '#' {
		return dst[:start], false
	}

	// Path.
	if i == n || raw[i] != '/' {
		dst = append(dst, '/')
	}
	for i < n && raw[i] == '/' {
		dst = append(dst, '/')
		i++
		seg := i
		for ; i < n; i++ {
			c := raw[i]
			if c == '/' || c == '?' || c == '#' {
				break
			}
			if c < 0x20 || c >= 0x7f || c == '\\' {
				return dst[:start], false
			}
			if encodeTable[c]&pathSet != 0 {
				dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
			} else {
				dst = append(dst, c)
			}
		}
		if s := raw[seg:i]; len(s) <= 6 && (isSingleDot(s) || isDoubleDot(s)) {
			return dst[:start], false
		}
	}

	// Query.
	if i < n && raw[i] == '?' {
		dst = append(dst, '?')
		for i++; i < n && raw[i] != '#'; i++ {
			c := raw[i]
			if c < 0x20 || c >= 0x7f {
				return dst[:start], false
			}
			if encodeTable[c]&specialQuerySet != 0 {
				dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}

	// Fragment.
	if i < n {
		// raw[i] == '#'
		if !dropFragment {
			dst = append(dst, '#')
		}
		for i++; i < n; i++ {
			c := raw[i]
			if c < 0x20 || c >= 0x7f {
				return dst[:start], false
			}
			if dropFragment {
				continue
			}
			if encodeTable[c]&fragmentSet != 0 {
				dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return dst, true
}

// appendPort appends the decimal port without allocating.
func appendPort(dst []byte, port int) []byte {
	var b [5]byte
	k := len(b)
	for {
		k--
		b[k] = byte('0' + port%10)
		port /= 10
		if port == 0 {
			break
		}
	}
	return append(dst, b[k:]...)
}
