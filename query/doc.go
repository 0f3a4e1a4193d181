// Package query answers questions about URLs from an index of their
// identities: it joins hashkey (URLs to hashes) and index (hashes to
// answers).
//
// # Basics
//
// Open an index directory with the profile its identities were made with;
// the profile's name is recorded in the index when it is created, and an
// index made with another profile is refused (store.ErrProfileMismatch):
//
//	ix, err := query.Open(dir, &query.Options{Profile: urlhash.New(urlhash.DropFragment())})
//	...
//	added, err := ix.AddIfAbsent("https://example.com/a#top") // true the first time
//	ok, err := ix.Has("https://EXAMPLE.com/a")                 // true: same identity
//
// Batch calls (HasBatch, AddBatch, AddIfAbsentBatch) hash on every core and
// hand the index sorted batches, which it answers with one ordered pass.
//
// # Safe Browsing lookups
//
// Lookup expands a URL into its Safe Browsing host-suffix/path-prefix
// expressions and reports every expression whose SHA-256 hash is stored as
// a full entry or starts with a stored prefix entry (a 4-byte list prefix,
// say), with the matched length. Store list entries with AddHash and
// AddPrefix; they are hashes, not URLs.
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
// prefix entries work on hashes; see index for their semantics.
package query
