package urlhash

import (
	"errors"

	"github.com/urlhash/urlhash/hashkey/internal/uts46"
)

// This file implements the URL Standard's "domain to ASCII" with the
// project's own UTS 46 tables (package uts46, Unicode uts46.UnicodeVersion),
// never the Go toolchain's: an identity must not change with the compiler.
//
// https://url.spec.whatwg.org/#concept-domain-to-ascii

var errInvalidDomain = errors.New("invalid domain")

// UnicodeVersion is the Unicode version of the IDNA tables the url-hash
// profile maps hosts with; an index records it with the profile.
const UnicodeVersion = uts46.UnicodeVersion

// domainToASCII runs "domain to ASCII" with beStrict false, as amended by
// whatwg/url#914: an ASCII domain is lowercased, any other goes through
// UTS 46 ToASCII; an empty result is an empty host, and one holding a
// forbidden domain code point (or any failure of UTS 46) is invalid.
func domainToASCII(domain string) (string, error) {
	out, err := uts46.URL.ToASCII(domain)
	switch {
	case errors.Is(err, uts46.ErrEmpty):
		return "", errEmptyHost
	case err != nil:
		return "", errInvalidDomain
	}
	return out, nil
}
