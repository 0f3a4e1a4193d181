package main

import (
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
)

// otherProfile resolves the profiles that live outside hashkey's url-hash
// identity: the Safe Browsing canonical URL (hashed with SHA-256, as
// "urlhash hash --profile webrisk" prints) and the hashed-URI Appendix A
// forms (canon only; their digests come from "urlhash hashed-uri"). It
// reports ok=false for an unknown name.
func (o *identityFlags) otherProfile() (*canonicaliser, bool, error) {
	switch o.profile {
	case "webrisk", "safebrowsing-v5":
		p, err := safebrowsing.ParseProfile(o.profile)
		if err != nil {
			return nil, true, usageError{err}
		}
		return &canonicaliser{name: p.Name(), append: p.AppendCanonical, sum: hashkey.Sum}, true, nil
	case "hashed-n", "hashed-p":
		v := hasheduri.N
		if o.profile == "hashed-p" {
			v = hasheduri.P
		}
		return &canonicaliser{
			name: o.profile,
			append: func(dst []byte, raw string) ([]byte, error) {
				s, err := hasheduri.Canonical(raw, v)
				return append(dst, s...), err
			},
			sum: hashkey.Sum,
		}, true, nil
	}
	return nil, false, nil
}
