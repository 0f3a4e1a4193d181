package urlhash

import (
	"errors"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/text/secure/bidirule"
	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

// This file implements the URL Standard's "domain to ASCII" with UTS 46
// processing from golang.org/x/net/idna.
//
// https://url.spec.whatwg.org/#concept-domain-to-ascii

var errInvalidDomain = errors.New("invalid domain")

// uts46 is ToASCII with the flags the URL Standard passes: CheckHyphens
// false, CheckBidi true, CheckJoiners true, UseSTD3ASCIIRules false,
// Transitional_Processing false, VerifyDnsLength false. It is immutable.
//
// CheckBidi is not x/net's BidiRule, which holds every label of a Bidi
// domain name to RFC 5893 and so rejects "1.ي", which the URL Standard's
// tests accept: checkBidi does it instead.
var uts46 = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.VerifyDNSLength(false),
)

// domainToASCII runs "domain to ASCII" with beStrict false.
func domainToASCII(domain string) (string, error) {
	var out string
	if isASCII(domain) && !hasACELabel(domain) {
		// The standard's own shortcut: equivalent to ASCII lowercasing.
		out = asciiLower(domain)
	} else {
		var err error
		out, err = uts46.ToASCII(domain)
		if err != nil || hasEmptyACELabel(domain) || !checkBidi(out) {
			return "", errInvalidDomain
		}
		// x/net/idna's Punycode decoder refuses labels whose Unicode form
		// exceeds 1024 code points, though its encoder writes them. Such
		// a result would not parse again, so the canonical form would not
		// be stable: reject it here. Only an A-label longer than 1024
		// bytes can decode to that many code points.
		if hasLongACELabel(out) {
			if again, err := uts46.ToASCII(out); err != nil || again != out {
				return "", errInvalidDomain
			}
		}
	}
	if out == "" {
		return "", errEmptyHost
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; c >= 0x80 || isForbiddenDomain(rune(c)) {
			return "", errInvalidDomain
		}
	}
	return out, nil
}

// hasEmptyACELabel reports whether a label of domain is "xn--" once mapped
// (in any case or width): its Punycode decodes to nothing, which UTS 46
// makes an error, while x/net/idna quietly returns an empty label.
func hasEmptyACELabel(domain string) bool {
	mapped := strings.ToLower(norm.NFKC.String(strings.ReplaceAll(domain, "\u00ad", "")))
	for _, l := range strings.FieldsFunc(mapped, func(r rune) bool { return r == '.' || r == '\u3002' }) {
		if l == "xn--" {
			return true
		}
	}
	return false
}

// checkBidi reports whether the ASCII domain passes the URL Standard's
// CheckBidi. In a domain with a right-to-left character (Bidi class R, AL
// or AN), the labels must satisfy the RFC 5893 Bidi rule, except plain
// ASCII labels that come before the first right-to-left label: the URL
// Standard's tests accept "1.\u064a" (whatwg/url#543), while a digit label
// after one ("\u064a.1", or "\u06ee.0a0") would read as part of the
// right-to-left run and stays an error, as RFC 5893 intends.
func checkBidi(ascii string) bool {
	uni, err := uts46.ToUnicode(ascii)
	if err != nil {
		return false
	}
	if !strings.ContainsFunc(uni, isRTL) {
		return true
	}
	seenRTL := false
	for _, l := range strings.Split(uni, ".") {
		seenRTL = seenRTL || strings.ContainsFunc(l, isRTL)
		if l == "" || (!seenRTL && isASCII(l)) {
			continue
		}
		if !bidirule.ValidString(l) {
			return false
		}
	}
	return true
}

// isRTL reports whether r has Bidi class R, AL or AN.
func isRTL(r rune) bool {
	if r < 0x80 {
		return false
	}
	p, _ := bidi.LookupRune(r)
	c := p.Class()
	return c == bidi.R || c == bidi.AL || c == bidi.AN
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hasACELabel reports whether some label of s starts with "xn--", in any case.
func hasACELabel(s string) bool {
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '.')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		if l := s[start:end]; len(l) >= 4 && l[0]|0x20 == 'x' && l[1]|0x20 == 'n' && l[2] == '-' && l[3] == '-' {
			return true
		}
		start = end + 1
	}
	return false
}

// hasLongACELabel reports whether s has an "xn--" label longer than 1024
// bytes.
func hasLongACELabel(s string) bool {
	for _, l := range strings.Split(s, ".") {
		if len(l) > 1024 && hasACELabel(l) {
			return true
		}
	}
	return false
}

// asciiLower returns s with ASCII upper case letters lowered, without
// allocating when there are none.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 0x20
				}
			}
			return string(b)
		}
	}
	return s
}
