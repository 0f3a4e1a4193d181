package hashkey

import (
	"errors"
	"strings"

	"golang.org/x/net/idna"
)

// This file implements the URL Standard's "domain to ASCII" with UTS 46
// processing from golang.org/x/net/idna.
//
// https://url.spec.whatwg.org/#concept-domain-to-ascii

var errInvalidDomain = errors.New("invalid domain")

// uts46 is ToASCII with the flags the URL Standard passes: CheckHyphens
// false, CheckBidi true, CheckJoiners true, UseSTD3ASCIIRules false,
// Transitional_Processing false, VerifyDnsLength false. It is immutable.
var uts46 = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
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
		if err != nil {
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
