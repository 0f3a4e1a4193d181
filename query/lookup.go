package query

import (
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/index"
)

// AddHash stores a full hash, such as a Safe Browsing full-hash list entry.
func (ix *Index) AddHash(h hashkey.Hash, v index.Value) error { return ix.db.Put(h, v) }

// AddPrefix stores a prefix entry of 4..31 bytes, such as a 4-byte Safe
// Browsing hash prefix.
func (ix *Index) AddPrefix(p []byte, v index.Value) error { return ix.db.PutPrefix(p, v) }

// Hit is a Safe Browsing expression of a URL whose hash matched a stored
// entry.
type Hit struct {
	Expression string       // the host-suffix/path-prefix expression, e.g. "evil.example/"
	Hash       hashkey.Hash // its SHA-256
	Len        int          // bytes of the hash the stored key holds: 32 full, 4..31 prefix
	Value      index.Value  // what the stored entry holds
}

// IsFull reports whether the hit matched a full hash rather than a prefix.
func (h Hit) IsFull() bool { return h.Len == hashkey.Size }

// Lookup expands rawURL into its Safe Browsing expressions under p and
// returns those whose hash is stored as a full entry or starts with a
// stored prefix entry (the longest one), in expression order. No hits and
// no error means the URL is not listed.
func (ix *Index) Lookup(rawURL string, p *safebrowsing.Profile) ([]Hit, error) {
	exprs, err := p.Hashes(rawURL)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, e := range exprs {
		m, ok, err := ix.db.Match(e.Hash)
		if err != nil {
			return nil, err
		}
		if ok {
			hits = append(hits, Hit{Expression: e.Expr, Hash: e.Hash, Len: m.Len, Value: m.Value})
		}
	}
	return hits, nil
}

// AddHashedURI stores a hashed URI: its digest as the key (a full entry for
// 32-byte digests, a prefix entry for md5's 16 and sha1's 20 bytes) and its
// text as the value, so that MatchHashed knows its flags.
func (ix *Index) AddHashedURI(u hasheduri.URI) error {
	if !u.IsValid() {
		return fmt.Errorf("query: invalid hashed uri %q", u.String())
	}
	v := index.Value{Text: []byte(u.String())}
	if len(u.Digest) == hashkey.Size {
		return ix.db.Put(hashkey.Hash(u.Digest), v)
	}
	return ix.db.PutPrefix(u.Digest, v)
}

// hashedForms are the algorithm and flag combinations a stored hashed URI
// may have; MatchHashed tries each.
var hashedForms = func() []struct {
	alg  hasheduri.Alg
	keep hasheduri.Keep
} {
	var fs []struct {
		alg  hasheduri.Alg
		keep hasheduri.Keep
	}
	for _, a := range []hasheduri.Alg{hasheduri.SHA256, hasheduri.SHA1, hasheduri.MD5} {
		for _, k := range []hasheduri.Keep{hasheduri.KeepNone, hasheduri.KeepFrag, hasheduri.KeepQuery, hasheduri.KeepFrag | hasheduri.KeepQuery} {
			fs = append(fs, struct {
				alg  hasheduri.Alg
				keep hasheduri.Keep
			}{a, k})
		}
	}
	return fs
}()

// MatchHashed returns the stored hashed URIs (see AddHashedURI) that rawURL
// matches under canonicalisation variant v: the URL is hashed with each
// algorithm, keeping what each flag combination keeps, and a stored URI
// counts only when its own algorithm and flags are the ones used.
func (ix *Index) MatchHashed(rawURL string, v hasheduri.Variant) ([]hasheduri.URI, error) {
	// A URL that cannot be canonicalised fails every form: report it once.
	if _, err := hasheduri.Generate(rawURL, hasheduri.SHA256, hasheduri.KeepNone, v); err != nil {
		return nil, err
	}
	var out []hasheduri.URI
	for _, f := range hashedForms {
		u, err := hasheduri.Generate(rawURL, f.alg, f.keep, v)
		if err != nil {
			continue
		}
		var h hashkey.Hash
		copy(h[:], u.Digest)
		m, ok, err := ix.db.Match(h)
		if err != nil {
			return nil, err
		}
		if !ok || m.Len != len(u.Digest) {
			continue
		}
		stored, err := hasheduri.Parse(string(m.Value.Text))
		if err != nil {
			continue // an entry that is not a hashed URI
		}
		if stored.Equal(u) {
			out = append(out, stored)
		}
	}
	return out, nil
}

// MatchHash returns the full entry h when it is stored, else the longest
// stored prefix entry h starts with; the bool is false when neither is.
// It is Lookup for a caller that already holds an expression's hash.
func (ix *Index) MatchHash(h hashkey.Hash) (index.Match, bool, error) { return ix.db.Match(h) }
