package uts46

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// The sentinel errors below are returned wrapped in an *Error, which names
// the domain and the label; use errors.Is.
var (
	// ErrInvalidUTF8 is returned when the domain is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("uts46: invalid utf-8")
	// ErrDisallowed is returned when a label holds a code point whose
	// status is disallowed, or, after mapping, one that is not valid or
	// deviation (UTS #46 processing step 1, validity criterion 7).
	ErrDisallowed = errors.New("uts46: disallowed code point")
	// ErrSTD3 is returned, under UseSTD3ASCIIRules, when a label holds an
	// ASCII code point other than a-z, 0-9 and '-'.
	ErrSTD3 = errors.New("uts46: code point not allowed by std3 rules")
	// ErrPunycode is returned when an "xn--" label is not valid Punycode,
	// holds a non-ASCII code point, or decodes to nothing or to ASCII only.
	ErrPunycode = errors.New("uts46: invalid punycode")
	// ErrNotNFC is returned when a decoded "xn--" label is not in Unicode
	// Normalization Form C (validity criterion 1).
	ErrNotNFC = errors.New("uts46: label not in normalization form c")
	// ErrHyphen is returned, under CheckHyphens, when a label begins or
	// ends with '-' or has "--" in its third and fourth positions
	// (validity criteria 2 and 3).
	ErrHyphen = errors.New("uts46: hyphen in a position check hyphens forbids")
	// ErrACEPrefix is returned, without CheckHyphens, when a decoded
	// "xn--" label itself begins with "xn--" (validity criterion 4).
	ErrACEPrefix = errors.New("uts46: decoded label begins with xn--")
	// ErrLeadingMark is returned when a label begins with a combining mark
	// (General_Category Mark, validity criterion 6).
	ErrLeadingMark = errors.New("uts46: label begins with a combining mark")
	// ErrJoiner is returned when U+200C or U+200D is not allowed by the
	// ContextJ rules of RFC 5892 Appendix A (CheckJoiners).
	ErrJoiner = errors.New("uts46: joiner not allowed by contextj rules")
	// ErrBidi is returned when a label of a bidi domain name breaks the
	// Bidi Rule of RFC 5893 section 2 (CheckBidi).
	ErrBidi = errors.New("uts46: label breaks the bidi rule")
	// ErrDNSLength is returned, under VerifyDnsLength, when the domain is
	// empty or longer than 253 bytes, or a label is empty or longer than
	// 63 bytes.
	ErrDNSLength = errors.New("uts46: domain or label length not allowed by dns")
	// ErrLabelTooLong is returned when a label, mapped and normalized or
	// decoded from Punycode, is longer than MaxLabelLength code points.
	ErrLabelTooLong = errors.New("uts46: label longer than 1024 code points")
	// ErrDomainTooLong is returned when the domain is longer than
	// MaxDomainLength bytes.
	ErrDomainTooLong = errors.New("uts46: domain longer than 1 mib")
	// ErrEmpty is returned, by the URL profile, when the result is empty.
	ErrEmpty = errors.New("uts46: empty domain")
	// ErrForbidden is returned, by the URL profile, when the result holds
	// a forbidden domain code point of the URL Standard.
	ErrForbidden = errors.New("uts46: forbidden domain code point")
)

// Internal aliases, so that the processing code can return the sentinel
// and have ToASCII wrap it.
var (
	errPunycode     = ErrPunycode
	errLabelTooLong = ErrLabelTooLong
)

// Error reports a domain that ToASCII rejected.
type Error struct {
	Domain string // the domain as given
	Label  string // the offending label as processed so far, if known
	Err    error  // one of the sentinel errors of this package
}

func (e *Error) Error() string {
	s := e.Err.Error() + " in "
	if e.Label != "" {
		s += "label " + quote(e.Label) + " of "
	}
	return s + quote(e.Domain)
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

// quote quotes s for an error message, keeping long inputs short.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + "..." + "(" + strconv.Itoa(len(s)) + " bytes)"
}
