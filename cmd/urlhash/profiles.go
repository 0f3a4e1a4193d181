package main

import (
	"fmt"

	"github.com/spf13/pflag"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/hashkey/iri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/hashkey/urlhash"
	"github.com/urlhash/urlhash/query"
)

// identityFlags are the flags that choose how a URL becomes a hash.
type identityFlags struct {
	name         string
	digest       string
	dropFragment bool
	fs           *pflag.FlagSet
}

// Profile names, for --profile of each command.
var (
	// indexProfiles are the identities an index keys by.
	indexProfiles = []string{"urlhash", "webrisk", "safebrowsing-v5", "iri"}
	// canonProfiles are those and the hashed-URI canonical forms.
	canonProfiles = append(indexProfiles[:len(indexProfiles):len(indexProfiles)], "hashed-n", "hashed-p")
	// listProfiles are the Safe Browsing profiles, which expand a URL.
	listProfiles = []string{"webrisk", "safebrowsing-v5"}
)

// profileHelp documents --profile.
const profileHelp = "the identity `NAME`: urlhash (the URL Standard serialisation), webrisk or safebrowsing-v5 (the exact Safe Browsing expression), iri (RDF: the IRI as written)"

func (o *identityFlags) addFlags(fs *flagSet, profiles []string) {
	o.fs = fs.FlagSet
	usage := profileHelp
	if len(profiles) > len(indexProfiles) {
		usage += ", hashed-n or hashed-p (draft-feather Appendix A)"
	}
	fs.StringVar(&o.name, "profile", "urlhash", usage)
	fs.enum("profile", profiles...)
	fs.StringVar(&o.digest, "digest", "sha256", "the `DIGEST` of the urlhash profile: sha256, or url-hash-0.1.0 (the first 32 bytes of SHA-384, as the url-hash 0.1.0 crate computes)")
	fs.enum("digest", "sha256", "url-hash-0.1.0")
	fs.BoolVar(&o.dropFragment, "drop-fragment", false, "remove the #fragment before hashing (urlhash profile), so that page#a and page#b are one page")
}

// changed reports whether any identity flag was given.
func (o *identityFlags) changed() bool {
	return o.fs != nil && (o.fs.Changed("profile") || o.fs.Changed("digest") || o.fs.Changed("drop-fragment"))
}

// profile resolves the flags into the identity they name, through the
// same table an index's recorded name goes through (query.ParseProfile).
// --digest and --drop-fragment shape only the urlhash profile: with
// another one they are refused rather than silently ignored.
func (o *identityFlags) profile() (hashkey.Profile, error) {
	name := o.name
	if name == "urlhash" {
		if _, err := hashkey.ParseDigest(o.digest); err != nil {
			return nil, usageError{err}
		}
		if o.dropFragment {
			name += "-nofragment"
		}
		name += "+" + o.digest
	} else if o.fs.Changed("digest") || o.fs.Changed("drop-fragment") {
		return nil, usagef("--digest and --drop-fragment apply to the urlhash profile only")
	}
	p, err := query.ParseProfile(name)
	if err != nil {
		return nil, usagef("unknown profile %q (want urlhash, webrisk, safebrowsing-v5 or iri)", o.name)
	}
	return p, nil
}

// canonicaliser holds what hash and canon need of a profile.
type canonicaliser struct {
	name string
	// canonical appends the canonical form, which canon prints.
	canonical func(dst []byte, raw string) ([]byte, error)
	// hashed appends the string whose digest is the identity; nil when it
	// is the canonical form itself, and for the hashed-URI forms, whose
	// digests come from "urlhash hashed-uri".
	hashed func(dst []byte, raw string) ([]byte, error)
	sum    func(s []byte) hashkey.Hash
}

// appendHashed appends the string hash hashes.
func (cz *canonicaliser) appendHashed(dst []byte, raw string) ([]byte, error) {
	if cz.hashed != nil {
		return cz.hashed(dst, raw)
	}
	return cz.canonical(dst, raw)
}

// canonForm resolves the flags for canon: canonicaliser's profiles and
// the hashed-URI Appendix A forms (hashed-n, hashed-p), which canon prints
// and nothing hashes.
func (o *identityFlags) canonForm() (*canonicaliser, error) {
	if o.name != "hashed-n" && o.name != "hashed-p" {
		return o.canonicaliser()
	}
	if o.fs.Changed("digest") || o.fs.Changed("drop-fragment") {
		return nil, usagef("--digest and --drop-fragment apply to the urlhash profile only")
	}
	v := hasheduri.N
	if o.name == "hashed-p" {
		v = hasheduri.P
	}
	return &canonicaliser{
		name: o.name,
		canonical: func(dst []byte, raw string) ([]byte, error) {
			s, err := hasheduri.Canonical(raw, v)
			return append(dst, s...), err
		},
	}, nil
}

// canonicaliser resolves the flags for hash (and canon). Every profile
// hashes here exactly what an index keys (see query.ParseProfile): the
// url-hash canonical form with its digest, the Safe Browsing exact
// expression or the IRI as written with SHA-256.
func (o *identityFlags) canonicaliser() (*canonicaliser, error) {
	p, err := o.profile()
	if err != nil {
		return nil, err
	}
	switch p := p.(type) {
	case *urlhash.Profile:
		return &canonicaliser{name: p.Name(), canonical: p.AppendCanonical, sum: p.Digest().Sum}, nil
	case *safebrowsing.Profile:
		return &canonicaliser{name: p.Name(), canonical: p.AppendCanonical, hashed: p.AppendHashed, sum: hashkey.Sum}, nil
	case *iri.Profile:
		return &canonicaliser{name: p.Name(), canonical: p.AppendHashed, sum: hashkey.Sum}, nil
	}
	return nil, fmt.Errorf("profile %s has no canonical form", p.Name())
}
