// Package query answers questions about URLs from an index of their
// identities: it joins a URL profile (package hashkey and its subpackages)
// with a store.Backend (package store; the embedded Badger index, package
// index; PostgreSQL, package pgindex; or a urlhash server).
//
// # Basics
//
// Open a backend, then wrap it with the profile its identities are made
// with. The profile's name is recorded in the index the first time, and an
// index made with another profile is refused (store.ErrProfileMismatch):
//
//	db, err := index.Open(dir, nil) // or backend.Open(ctx, location, nil)
//	...
//	profile, err := urlhash.New(urlhash.DropFragment())
//	ix, err := query.New(ctx, db, &query.Options{Profile: profile})
//	added, err := ix.Add(ctx, "https://example.com/a#top") // true the first time
//	ok, err := ix.Has(ctx, "https://EXAMPLE.com/a")        // true: same identity
//
// Put overwrites an entry's value; Add adds only if the identity is absent
// and reports whether it was new (exactly one concurrent caller sees
// true). Batch calls (HasBatch, PutBatch, AddBatch) hash on every core and
// hand the backend sorted batches, which it answers with one ordered pass.
// Resolve turns inputs (URLs, hashes, or hashes and prefixes) into store
// entries, for callers that mix them; Store gives the backend itself, for
// work on hashes, prefix entries, scans and statistics.
//
// ParseProfile maps a recorded profile name to its profile: the url-hash
// profiles (urlhash+DIGEST, urlhash-nofragment+DIGEST) and the Safe
// Browsing ones (webrisk, safebrowsing-v5), whose identity of a URL is the
// SHA-256 of its exact expression, as a list stores it.
//
// # Safe Browsing lookups
//
// Lookup expands a URL into its Safe Browsing host-suffix/path-prefix
// expressions and reports every expression whose SHA-256 hash is stored as
// a full entry or starts with a stored prefix entry (a 4-byte list prefix,
// say), with the matched length. List entries are hashes, not URLs: store
// them through the backend (PutBatch with store.PrefixEntry).
//
// # Hashed URIs
//
// AddHashedURI stores a draft-feather hashed URI (its digest as the key, its
// text as the value); MatchHashed reports which stored hashed URIs a URL
// matches, honouring each one's algorithm and fragment/query flags.
//
// # Caveats
//
// Has and friends answer for the URL's identity under the index's profile:
// two URLs with the same canonical form are one entry. Prefix scans and
// prefix entries work on hashes; see package store for their semantics.
package query
