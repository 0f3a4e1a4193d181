// Package hashkey holds URL identities: the fixed-size hash types, their
// text forms and the digests that produce them. It holds no URL code, so
// that storage (package store and its backends) can key by Hash without
// linking URL parsing; the profiles that turn URLs into identities live in
// its subpackages:
//
//   - urlhash: the url-hash identity, the URL Standard serialisation (the
//     default);
//   - safebrowsing: Web Risk and Safe Browsing canonical URLs, expressions
//     and hash prefixes;
//   - hasheduri: draft-feather hashed: URIs.
//
// Each is a [Profile]: a stable name, the exact string that is hashed, and
// the hash.
//
// # Identities
//
// A [Hash] is the 32 digest bytes in digest order. Its portable numeric view
// is four unsigned 64-bit words read little-endian from bytes 0..8, 8..16,
// 16..24 and 24..32 ([Hash.Words]). A [Short] is the first 16 bytes (two
// words) and a [VeryShort] the first 8 (one word); a hash starts with a
// short or very-short hash when its leading bytes equal it
// ([Hash.StartsWith], [Hash.StartsWithJust]). All three are arrays: they
// compare with ==, serve as map keys and never allocate.
//
// # Text forms
//
// Every identity prints and parses in two forms: lowercase hexadecimal of
// the digest bytes ([Hash.String], the default), and the url-hash crate's
// display form, the decimal words joined by '-' ([Hash.Decimal]):
// "w0-w1-w2-w3", "w0-w1" or "w0". [ParseHash], [ParseShort] and
// [ParseVeryShort] accept either; [ParsePrefix] reads a hex prefix of any
// length (half bytes too) and [ParseKey] a full hash or a whole-byte prefix.
// A malformed text is a *[TextError] that names it.
//
// # Digests
//
// [SHA256] is the url-hash specification's digest and the default. The
// published url-hash crate 0.1.0 documents SHA-256 but computes the first 32
// bytes of SHA-384 of the same canonical string; [TruncatedSHA384] (named
// "url-hash-0.1.0" in text) reproduces it so that identities the crate
// wrote can be read.
package hashkey
