package query

import (
	"context"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/hasheduri"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/store"
)

// Hit is a Safe Browsing expression of a URL whose hash matched a stored
// entry.
type Hit struct {
	Expression string       // the host-suffix/path-prefix expression, e.g. "evil.example/"
	Hash       hashkey.Hash // its SHA-256
	Len        int          // bytes of the hash the stored key holds: 32 full, 4..31 prefix
	Value      store.Value  // what the stored entry holds
}

// IsFull reports whether the hit matched a full hash rather than a prefix.
func (h Hit) IsFull() bool { return h.Len == hashkey.Size }

// Lookup expands rawURL into its Safe Browsing expressions under p and
// returns those whose hash is stored as a full entry or starts with a
// stored prefix entry (the longest one), in expression order. No hits and
// no error means the URL is not listed.
func (ix *Index) Lookup(ctx context.Context, rawURL string, p *safebrowsing.Profile) ([]Hit, error) {
	exprs, err := p.Hashes(rawURL)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	for _, e := range exprs {
		m, ok, err := ix.st.Match(ctx, e.Hash)
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
func (ix *Index) AddHashedURI(ctx context.Context, u hasheduri.URI) error {
	if !u.IsValid() {
		return fmt.Errorf("query: invalid hashed uri %q", u.String())
	}
	var e store.Entry
	copy(e.Hash[:], u.Digest)
	e.Len = len(u.Digest)
	e.Value.Text = []byte(u.String())
	return ix.st.PutBatch(ctx, []store.Entry{e})
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
func (ix *Index) MatchHashed(ctx context.Context, rawURL string, v hasheduri.Variant) ([]hasheduri.URI, error) {
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
		m, ok, err := ix.st.Match(ctx, h)
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
