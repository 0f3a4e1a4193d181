// Package urlhash is the url-hash identity: the SHA-256 digest of a URL's
// URL Standard serialisation, as the url-hash specification defines it.
//
// A [Profile] turns a URL string into the canonical string that is hashed.
// The default profile, [Default], uses the URL Standard
// (https://url.spec.whatwg.org/) serialisation of the input parsed with no
// base URL: exactly what JavaScript's new URL(input).href returns, and what
// the url-hash crate's url dependency computes, so any language can
// reproduce every identity. In particular:
//
//   - leading and trailing C0 controls and spaces are trimmed, and tab, LF
//     and CR removed anywhere;
//   - the scheme is lowercased; http, https, ws, wss, ftp and file are
//     special (backslash is a slash, the host is required, the empty path
//     becomes "/");
//   - userinfo, path, query and fragment are percent-encoded with the
//     standard's encode sets (existing escapes are kept as written);
//   - hosts go through the host parser: IDN labels to Punycode by UTS 46
//     (non-transitional, CheckBidi and CheckJoiners on, STD3 rules off),
//     IPv4 in any numeric form (hex, octal, fewer parts) to dotted decimal,
//     IPv6 to its compressed form, opaque hosts of other schemes kept;
//   - the default port is dropped, "." and ".." segments (also as %2e) are
//     resolved, and file: URLs follow the drive-letter and localhost rules.
//
// Input that is not valid UTF-8 is read as the Encoding Standard's decoder
// reads it, one U+FFFD per maximal ill-formed subsequence, the way a
// browser would see it. An input the standard rejects is a *[hashkey.URLError],
// never hashed. [DropFragment] makes a profile leave out the fragment.
//
// Most real URLs take a fast path that writes the canonical form straight
// into the caller's buffer without allocating; everything else goes
// through a complete implementation of the standard's state machine. The
// tests hold the two to the same output, and the whole to the
// web-platform-tests URL suite and to a second implementation.
//
// # The compat digest
//
// [WithDigest](hashkey.TruncatedSHA384) reproduces the url-hash crate
// 0.1.0, which computes the first 32 bytes of SHA-384 while documenting
// SHA-256; SHA-256 stays the default. [Profile.Name] records which profile
// and digest produced an identity, and [ParseProfile] reads it back.
//
// # Caveats
//
// The canonical form follows the URL Standard as of 2025, including its
// changes after some implementations were released: U+005E (^) is
// percent-encoded in paths, and a space that ends an opaque path before '?'
// or '#' is written %20. UTS 46 data comes from golang.org/x/net/idna
// (Unicode 15.0): code points assigned in later versions are rejected in
// hosts. A domain with an IDN label longer than 1024 code points is
// rejected, so that every canonical form parses back to itself. Two URLs
// with different identities may still name the same resource (the standard
// does not decode %41 to A, nor sort queries); the identity is of the
// string, canonicalised.
package urlhash
