package urlhash

import (
	"errors"
	"unicode/utf8"
)

// This file implements the URL Standard's host parser and serialiser.
//
// https://url.spec.whatwg.org/#host-parsing

var (
	errInvalidHost = errors.New("invalid host")
	errEmptyHost   = errors.New("empty host")
)

// hostKind tells how a parsed host serialises.
type hostKind uint8

const (
	hostNone   hostKind = iota // null host
	hostDomain                 // domain, opaque host or empty host: text
	hostIPv4
	hostIPv6
)

// host is a parsed host.
type host struct {
	kind hostKind
	text []byte // hostDomain
	ipv4 uint32
	ipv6 [8]uint16
}

func (h *host) appendTo(dst []byte) []byte {
	switch h.kind {
	case hostIPv4:
		return appendIPv4(dst, h.ipv4)
	case hostIPv6:
		return appendIPv6(dst, h.ipv6)
	}
	return append(dst, h.text...)
}

// isForbiddenHost reports whether r is a forbidden host code point.
func isForbiddenHost(r rune) bool {
	switch r {
	case 0, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

// isForbiddenDomain reports whether r is a forbidden domain code point.
func isForbiddenDomain(r rune) bool {
	return isForbiddenHost(r) || r <= 0x1f || r == '%' || r == 0x7f
}

// parseHost runs the host parser on in; opaque is true for non-special
// schemes.
func parseHost(in []rune, opaque bool) (host, error) {
	if len(in) > 0 && in[0] == '[' {
		if in[len(in)-1] != ']' || len(in) < 2 {
			return host{}, errInvalidIPv6
		}
		a, err := parseIPv6(in[1 : len(in)-1])
		if err != nil {
			return host{}, err
		}
		return host{kind: hostIPv6, ipv6: a}, nil
	}
	if opaque {
		return parseOpaqueHost(in)
	}
	if len(in) == 0 {
		return host{}, errEmptyHost
	}
	// domain is the percent-decoded input, UTF-8 decoded without BOM and
	// with replacement.
	raw := percentDecode(in)
	var domain string
	if utf8.Valid(raw) {
		domain = string(raw)
	} else {
		domain = string(decodeLossy(nil, string(raw)))
	}
	ascii, err := domainToASCII(domain)
	if err != nil {
		return host{}, err
	}
	if endsInNumber(ascii) {
		ip, err := parseIPv4(ascii)
		if err != nil {
			return host{}, err
		}
		return host{kind: hostIPv4, ipv4: ip}, nil
	}
	return host{kind: hostDomain, text: []byte(ascii)}, nil
}

// parseOpaqueHost runs the opaque-host parser.
func parseOpaqueHost(in []rune) (host, error) {
	for _, r := range in {
		if isForbiddenHost(r) {
			return host{}, errInvalidHost
		}
	}
	return host{kind: hostDomain, text: appendEncodedRunes(make([]byte, 0, len(in)), in, c0ControlSet)}, nil
}
