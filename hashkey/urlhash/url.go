package urlhash

import (
	"errors"
	"strconv"
)

// This file implements the URL Standard's basic URL parser (with no base
// URL and no state override) and the URL serialiser: the url-hash
// canonical form.
//
// https://url.spec.whatwg.org/#concept-basic-url-parser
// https://url.spec.whatwg.org/#concept-url-serializer

var (
	errMissingScheme = errors.New("missing scheme")
	errMissingHost   = errors.New("missing host")
	errInvalidPort   = errors.New("invalid port")
)

// appendWHATWG appends the URL Standard serialisation of raw, parsed with no
// base, to dst, leaving out the fragment when dropFragment is set. Invalid
// UTF-8 in raw is read as U+FFFD, one per maximal ill-formed subsequence.
func appendWHATWG(dst []byte, raw string, dropFragment bool) ([]byte, error) {
	if out, ok := appendFast(dst, raw, dropFragment); ok {
		return out, nil
	}
	return appendFull(dst, raw, dropFragment)
}

// parser states, named as in the standard.
type parseState uint8

const (
	stSchemeStart parseState = iota
	stScheme
	stSpecialAuthoritySlashes
	stSpecialAuthorityIgnoreSlashes
	stPathOrAuthority
	stAuthority
	stHost
	stPort
	stFile
	stFileSlash
	stFileHost
	stPathStart
	stPath
	stOpaquePath
	stQuery
	stFragment
)

// eof stands for the EOF code point.
const eof rune = -1

// urlRecord is a parsed URL. The path segments, userinfo, query and
// fragment are kept already percent-encoded.
type urlRecord struct {
	scheme      string
	special     bool
	defaultPort int // -1 when the scheme has none
	username    []byte
	password    []byte
	host        host
	port        int // -1 when null
	opaque      bool
	opaquePath  []byte
	path        [][]byte
	hasQuery    bool
	query       []byte
	hasFragment bool
	fragment    []byte
}

// specialPort returns whether scheme is special and its default port (-1
// for file).
func specialPort(scheme string) (special bool, port int) {
	switch scheme {
	case "http", "ws":
		return true, 80
	case "https", "wss":
		return true, 443
	case "ftp":
		return true, 21
	case "file":
		return true, -1
	}
	return false, -1
}

// preprocess decodes raw into scalar values, trims leading and trailing C0
// control or space and removes ASCII tab or newline.
func preprocess(raw string) []rune {
	rs := decodeLossy(make([]rune, 0, len(raw)), raw)
	i, j := 0, len(rs)
	for i < j && rs[i] >= 0 && rs[i] <= 0x20 {
		i++
	}
	for j > i && rs[j-1] >= 0 && rs[j-1] <= 0x20 {
		j--
	}
	out := rs[:0]
	for _, r := range rs[i:j] {
		if r != '\t' && r != '\n' && r != '\r' {
			out = append(out, r)
		}
	}
	return out
}

// appendFull is the complete, spec-shaped path: parse, then serialise.
func appendFull(dst []byte, raw string, dropFragment bool) ([]byte, error) {
	var u urlRecord
	if err := u.parse(preprocess(raw)); err != nil {
		return dst, err
	}
	return u.appendTo(dst, dropFragment), nil
}

// parse runs the basic URL parser over the preprocessed input.
func (u *urlRecord) parse(in []rune) error {
	u.port = -1
	u.defaultPort = -1
	var (
		st           = stSchemeStart
		buf          []rune // the standard's buffer, as code points
		pbuf         []byte // the buffer of the path state, already encoded
		atSignSeen   bool
		passwordSeen bool
		inBrackets   bool
		n            = len(in)
	)
	at := func(i int) rune {
		if i >= 0 && i < n {
			return in[i]
		}
		return eof
	}
	for p := 0; ; p++ {
		c := at(p)
		switch st {
		case stSchemeStart:
			if !isASCIIAlpha(c) {
				return errMissingScheme
			}
			buf = append(buf, c|0x20)
			st = stScheme

		case stScheme:
			switch {
			case isASCIIAlpha(c):
				buf = append(buf, c|0x20)
			case isASCIIDigit(c) || c == '+' || c == '-' || c == '.':
				buf = append(buf, c)
			case c == ':':
				u.scheme = string(buf)
				buf = buf[:0]
				u.special, u.defaultPort = specialPort(u.scheme)
				switch {
				case u.scheme == "file":
					st = stFile
				case u.special:
					st = stSpecialAuthoritySlashes
				case at(p+1) == '/':
					st = stPathOrAuthority
					p++
				default:
					u.opaque = true
					st = stOpaquePath
				}
			default:
				return errMissingScheme
			}

		case stSpecialAuthoritySlashes:
			st = stSpecialAuthorityIgnoreSlashes
			if c == '/' && at(p+1) == '/' {
				p++
			} else {
				p--
			}

		case stSpecialAuthorityIgnoreSlashes:
			if c != '/' && c != '\\' {
				st = stAuthority
				p--
			}

		case stPathOrAuthority:
			if c == '/' {
				st = stAuthority
			} else {
				st = stPath
				p--
			}

		case stAuthority:
			switch {
			case c == '@':
				if atSignSeen {
					if passwordSeen {
						u.password = append(u.password, "%40"...)
					} else {
						u.username = append(u.username, "%40"...)
					}
				}
				atSignSeen = true
				for _, r := range buf {
					if r == ':' && !passwordSeen {
						passwordSeen = true
						continue
					}
					if passwordSeen {
						u.password = appendEncodedRune(u.password, r, userinfoSet)
					} else {
						u.username = appendEncodedRune(u.username, r, userinfoSet)
					}
				}
				buf = buf[:0]
			case c == eof || c == '/' || c == '?' || c == '#' || u.special && c == '\\':
				if atSignSeen && len(buf) == 0 {
					return errMissingHost
				}
				p -= len(buf) + 1
				buf = buf[:0]
				st = stHost
			default:
				buf = append(buf, c)
			}

		case stHost:
			switch {
			case c == ':' && !inBrackets:
				if len(buf) == 0 {
					return errMissingHost
				}
				h, err := parseHost(buf, !u.special)
				if err != nil {
					return err
				}
				u.host = h
				buf = buf[:0]
				st = stPort
			case c == eof || c == '/' || c == '?' || c == '#' || u.special && c == '\\':
				p--
				if u.special && len(buf) == 0 {
					return errMissingHost
				}
				h, err := parseHost(buf, !u.special)
				if err != nil {
					return err
				}
				u.host = h
				buf = buf[:0]
				st = stPathStart
			default:
				if c == '[' {
					inBrackets = true
				} else if c == ']' {
					inBrackets = false
				}
				buf = append(buf, c)
			}

		case stPort:
			switch {
			case isASCIIDigit(c):
				buf = append(buf, c)
			case c == eof || c == '/' || c == '?' || c == '#' || u.special && c == '\\':
				if len(buf) > 0 {
					port := 0
					for _, d := range buf {
						port = port*10 + int(d-'0')
						if port > 65535 {
							return errInvalidPort
						}
					}
					if port == u.defaultPort {
						u.port = -1
					} else {
						u.port = port
					}
					buf = buf[:0]
				}
				st = stPathStart
				p--
			default:
				return errInvalidPort
			}

		case stFile:
			u.scheme = "file"
			u.host = host{kind: hostDomain}
			if c == '/' || c == '\\' {
				st = stFileSlash
			} else {
				st = stPath
				p--
			}

		case stFileSlash:
			if c == '/' || c == '\\' {
				st = stFileHost
			} else {
				st = stPath
				p--
			}

		case stFileHost:
			switch c {
			case eof, '/', '\\', '?', '#':
				p--
				switch {
				case isDriveLetterRunes(buf, false):
					// The Windows drive letter quirk: the buffer moves to
					// the path state unreset.
					pbuf = append(pbuf[:0], byte(buf[0]), byte(buf[1]))
					buf = buf[:0]
					st = stPath
				case len(buf) == 0:
					u.host = host{kind: hostDomain}
					st = stPathStart
				default:
					h, err := parseHost(buf, false)
					if err != nil {
						return err
					}
					if h.kind == hostDomain && string(h.text) == "localhost" {
						h.text = h.text[:0]
					}
					u.host = h
					buf = buf[:0]
					st = stPathStart
				}
			default:
				buf = append(buf, c)
			}

		case stPathStart:
			switch {
			case u.special:
				st = stPath
				if c != '/' && c != '\\' {
					p--
				}
			case c == '?':
				u.hasQuery = true
				st = stQuery
			case c == '#':
				u.hasFragment = true
				st = stFragment
			case c != eof:
				st = stPath
				if c != '/' {
					p--
				}
			}

		case stPath:
			if c == eof || c == '/' || u.special && c == '\\' || c == '?' || c == '#' {
				slash := c == '/' || u.special && c == '\\'
				switch {
				case isDoubleDot(pbuf):
					u.shortenPath()
					if !slash {
						u.path = append(u.path, nil)
					}
				case isSingleDot(pbuf):
					if !slash {
						u.path = append(u.path, nil)
					}
				default:
					if u.scheme == "file" && len(u.path) == 0 && isDriveLetterBytes(pbuf, false) {
						pbuf[1] = ':'
					}
					u.path = append(u.path, append([]byte(nil), pbuf...))
				}
				pbuf = pbuf[:0]
				if c == '?' {
					u.hasQuery = true
					st = stQuery
				} else if c == '#' {
					u.hasFragment = true
					st = stFragment
				}
			} else {
				pbuf = appendEncodedRune(pbuf, c, pathSet)
			}

		case stOpaquePath:
			switch c {
			case '?':
				u.hasQuery = true
				st = stQuery
			case '#':
				u.hasFragment = true
				st = stFragment
			case ' ':
				if nx := at(p + 1); nx == '?' || nx == '#' {
					u.opaquePath = append(u.opaquePath, "%20"...)
				} else {
					u.opaquePath = append(u.opaquePath, ' ')
				}
			case eof:
			default:
				u.opaquePath = appendEncodedRune(u.opaquePath, c, c0ControlSet)
			}

		case stQuery:
			switch c {
			case '#':
				u.hasFragment = true
				st = stFragment
			case eof:
			default:
				set := querySet
				if u.special {
					set = specialQuerySet
				}
				u.query = appendEncodedRune(u.query, c, set)
			}

		case stFragment:
			if c != eof {
				u.fragment = appendEncodedRune(u.fragment, c, fragmentSet)
			}
		}
		if p >= n {
			return nil
		}
	}
}

// shortenPath removes the last path segment, keeping a lone file drive
// letter.
func (u *urlRecord) shortenPath() {
	if u.scheme == "file" && len(u.path) == 1 && isDriveLetterBytes(u.path[0], true) {
		return
	}
	if len(u.path) > 0 {
		u.path = u.path[:len(u.path)-1]
	}
}

// appendTo appends the URL serialisation of u.
func (u *urlRecord) appendTo(dst []byte, dropFragment bool) []byte {
	dst = append(dst, u.scheme...)
	dst = append(dst, ':')
	if u.host.kind != hostNone {
		dst = append(dst, "//"...)
		if len(u.username) > 0 || len(u.password) > 0 {
			dst = append(dst, u.username...)
			if len(u.password) > 0 {
				dst = append(dst, ':')
				dst = append(dst, u.password...)
			}
			dst = append(dst, '@')
		}
		dst = u.host.appendTo(dst)
		if u.port >= 0 {
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, int64(u.port), 10)
		}
	}
	if u.opaque {
		dst = append(dst, u.opaquePath...)
	} else {
		if u.host.kind == hostNone && len(u.path) > 1 && len(u.path[0]) == 0 {
			dst = append(dst, "/."...)
		}
		for _, seg := range u.path {
			dst = append(dst, '/')
			dst = append(dst, seg...)
		}
	}
	if u.hasQuery {
		dst = append(dst, '?')
		dst = append(dst, u.query...)
	}
	if u.hasFragment && !dropFragment {
		dst = append(dst, '#')
		dst = append(dst, u.fragment...)
	}
	return dst
}

// isSingleDot reports whether an encoded path segment is "." or "%2e".
func isSingleDot[T []byte | string](s T) bool {
	switch len(s) {
	case 1:
		return s[0] == '.'
	case 3:
		return s[0] == '%' && s[1] == '2' && s[2]|0x20 == 'e'
	}
	return false
}

// isDoubleDot reports whether an encoded path segment is "..", ".%2e",
// "%2e." or "%2e%2e", in any case.
func isDoubleDot[T []byte | string](s T) bool {
	switch len(s) {
	case 2:
		return s[0] == '.' && s[1] == '.'
	case 4:
		return s[0] == '.' && isSingleDot(s[1:]) || s[3] == '.' && isSingleDot(s[:3])
	case 6:
		return isSingleDot(s[:3]) && isSingleDot(s[3:])
	}
	return false
}

// isDriveLetterBytes reports whether s is a Windows drive letter: an ASCII
// letter and ':' (or '|' unless normalized).
func isDriveLetterBytes(s []byte, normalized bool) bool {
	return len(s) == 2 && isASCIIAlpha(rune(s[0])) && (s[1] == ':' || !normalized && s[1] == '|')
}

func isDriveLetterRunes(s []rune, normalized bool) bool {
	return len(s) == 2 && isASCIIAlpha(s[0]) && (s[1] == ':' || !normalized && s[1] == '|')
}
