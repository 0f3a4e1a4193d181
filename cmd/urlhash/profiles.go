package main

import (
	"github.com/spf13/pflag"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
)

// identityFlags are the flags that choose how a URL becomes a hash.
type identityFlags struct {
	profile      string
	digest       string
	dropFragment bool
	fs           *pflag.FlagSet
}

func (o *identityFlags) addFlags(fs *pflag.FlagSet, profiles string) {
	o.fs = fs
	fs.StringVar(&o.profile, "profile", "urlhash", "canonicalisation profile: "+profiles)
	fs.StringVar(&o.digest, "digest", "sha256", "digest for the urlhash profile: sha256 or url-hash-0.1.0")
	fs.BoolVar(&o.dropFragment, "drop-fragment", false, "remove the fragment before hashing (urlhash profile)")
}

// changed reports whether any identity flag was given.
func (o *identityFlags) changed() bool {
	return o.fs.Changed("profile") || o.fs.Changed("digest") || o.fs.Changed("drop-fragment")
}

// identity resolves the flags into a url-hash profile or, for webrisk and
// safebrowsing-v5, a Safe Browsing profile. --digest and --drop-fragment
// shape only the urlhash profile: with another one they are refused rather
// than silently ignored.
func (o *identityFlags) identity() (*hashkey.Profile, *safebrowsing.Profile, error) {
	if o.profile == "urlhash" {
		d, err := hashkey.ParseDigest(o.digest)
		if err != nil {
			return nil, nil, usageError{err}
		}
		opts := []hashkey.Option{hashkey.WithDigest(d)}
		if o.dropFragment {
			opts = append(opts, hashkey.DropFragment())
		}
		return hashkey.New(opts...), nil, nil
	}
	sb, err := safebrowsing.ParseProfile(o.profile)
	if err != nil {
		return nil, nil, usagef("unknown profile %q (want urlhash, webrisk or safebrowsing-v5)", o.profile)
	}
	if o.fs.Changed("digest") || o.fs.Changed("drop-fragment") {
		return nil, nil, usagef("--digest and --drop-fragment apply to the urlhash profile only")
	}
	return nil, sb, nil
}

// canonicaliser turns one input into the string that is hashed.
type canonicaliser struct {
	name   string
	append func(dst []byte, raw string) ([]byte, error)
	// sum is the identity of a canonical string; nil for the hashed-URI
	// forms, whose digests come from "urlhash hashed-uri".
	sum func(canonical []byte) hashkey.Hash
}

// canonicaliser resolves the flags for hash and canon. The Safe Browsing
// profiles hash the canonical URL with SHA-256; withHashed admits the
// hashed-URI Appendix A forms (hashed-n, hashed-p), which canon prints.
func (o *identityFlags) canonicaliser(withHashed bool) (*canonicaliser, error) {
	if withHashed && (o.profile == "hashed-n" || o.profile == "hashed-p") {
		if o.fs.Changed("digest") || o.fs.Changed("drop-fragment") {
			return nil, usagef("--digest and --drop-fragment apply to the urlhash profile only")
		}
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
		}, nil
	}
	hp, sb, err := o.identity()
	if err != nil {
		return nil, err
	}
	if sb != nil {
		return &canonicaliser{name: sb.Name(), append: sb.AppendCanonical, sum: hashkey.Sum}, nil
	}
	return &canonicaliser{name: hp.Name(), append: hp.AppendCanonical, sum: hp.Digest().Sum}, nil
}
