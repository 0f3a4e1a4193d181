// Package safebrowsing computes what Google Web Risk and Safe Browsing
// compute for a URL before looking it up in a threat list: its canonical
// form, its host-suffix/path-prefix expressions, the SHA-256 of each
// expression, and hash prefixes of 4 to 32 bytes. It follows the documents
// "URLs and Hashing" of Web Risk and of Safe Browsing v5 step by step.
//
// # Basics
//
//	c, err := safebrowsing.V5.Canonical("HTTP://www.Example.co.uk:80/a/./b/../c#top")
//	// c == "http://www.example.co.uk/a/c"
//	_, exprs, err := safebrowsing.V5.Expressions("http://a.b.c/1/2.html?param=1")
//	list, err := safebrowsing.V5.Hashes(u) // expressions with their SHA-256
//	p, err := safebrowsing.Prefix(list[0].Hash, 4)
//
// For bulk work, reuse a Buffer with Profile.Expand and Buffer.Hash:
// canonicalising, expanding and hashing then allocate nothing (V5 excepted,
// see Caveats). Inputs are Go strings holding any bytes, not necessarily
// UTF-8. A URL that is not a web URL (no host, "mailto:", "javascript:",
// "data:", a relative reference such as "/a" or "?q") is a
// *hashkey.URLError naming the input and the profile, wrapping ErrNoHost or
// ErrNotWeb and, through them, hashkey.ErrUnsupportedURL.
//
// # Profiles
//
// WebRisk ("webrisk") is Web Risk and Safe Browsing v4. V5
// ("safebrowsing-v5") is Safe Browsing v5; it differs in two places: it
// normalises bracketed IPv6 hosts (leading zeros dropped, the longest run of
// zero groups written "::", lowercase; IPv4-mapped ::ffff:a.b.c.d and NAT64
// 64:ff9b::a.b.c.d addresses become a.b.c.d), and it chooses host suffixes
// from the eTLD+1 of the Public Suffix List (golang.org/x/net/publicsuffix).
//
// Canonicalisation, in order:
//
//  1. Cut the URL at its first '#' (the fragment), trim bytes <= 0x20 from
//     both ends and remove every tab, CR and LF (not their escapes).
//  2. Remove percent-escapes repeatedly until none is left (in linear time;
//     "%%32%35" becomes "%"). Everything after this sees raw bytes, so an
//     escaped '/', '?' or '@' splits the URL as the raw byte would.
//  3. Scheme: letters, digits, '+', '-', '.' before "://", lowercased. None
//     means "http://"; "host:8080/..." is a host and port without a scheme.
//     A scheme followed by ':' but not "//", or one of about, blob, data,
//     file, javascript and mailto, is not a web URL.
//  4. The authority runs to the first '/' or '?'. Userinfo (up to the last
//     '@') and port (from the first ':', or after the ']' of a bracketed
//     host) are dropped. An empty host is an error.
//  5. Host: leading and trailing dots trimmed, runs of dots collapsed; a
//     valid UTF-8 internationalised name converted to punycode; an IPv4
//     address in any legal encoding (decimal, octal with a leading 0, hex
//     with 0x, one to four parts, the last filling the remaining bytes)
//     written as four decimals; under V5 IPv6 normalised as above; ASCII
//     letters lowercased.
//  6. Path: "." and ".." segments resolved and runs of slashes collapsed,
//     in the path only, never the query; an empty path becomes "/".
//  7. Every byte <= 0x20 or >= 0x7F, '#' and '%' in host, path and query is
//     escaped as %XX with uppercase hex.
//
// Canonicalisation is idempotent: Canonical(Canonical(x)) == Canonical(x).
//
// IDN hosts. The documents ask clients to convert internationalised names
// to ASCII punycode. This package does it after unescaping, with
// idna.Lookup (UTS #46, non-transitional, STD3 rules), so "bücher.example"
// and "b%C3%BCcher.example" both become "xn--bcher-kva.example". A host
// that is not valid UTF-8, or that the lookup profile rejects, keeps its
// bytes, escaped, as the documents' own test "http://\x01\x80.com/" ->
// "http://%01%80.com/" requires.
//
// # Expressions
//
// An expression is a host string followed by a path string, at most
// MaxHosts x MaxPaths = 30 of them, all distinct, in the documents' order.
//
// Hosts: the exact host, then (not for an IPv4 address or a bracketed
// host) shorter suffixes. WebRisk: the suffixes starting within the last
// five components, longest first, never the top-level domain alone
// ("a.b.c.d.e.f.g" gives c.d.e.f.g, d.e.f.g, e.f.g, f.g). V5: the eTLD+1 and
// up to three names made by adding leading components to it
// ("a.b.c.d.e.f.com" gives c.d.e.f.com ... f.com), never a public suffix
// alone ("example.co.uk" gives only itself).
//
// Paths: the exact path with the query when the query is not empty, the
// exact path, then up to four prefixes ending in '/', the root first
// ("/1/2.html?param=1" gives "/1/2.html?param=1", "/1/2.html", "/", "/1/").
//
// Each expression is hashed with SHA-256 (Buffer.Hash, Profile.Hashes); a
// hash prefix is its first 4 to 32 bytes (Prefix, AppendPrefix).
//
// # Differences from Google's clients
//
// Where Google's Go clients (github.com/google/safebrowsing and
// github.com/google/webrisk) disagree with the documents, this package
// follows the documents:
//
//   - at most five host strings, where the clients keep the exact host and
//     every suffix of the last seven components;
//   - escapes in uppercase hex ("%0A"), where the clients write "%0a";
//   - the canonical URL keeps its query, which the clients' canonical URL
//     drops (their expressions keep it);
//   - a trailing "." or ".." segment leaves a trailing slash ("/a/b/."
//     gives "/a/b/", as in RFC 3986), where the clients' path.Clean gives
//     "/a/b"; ".." after an empty segment removes the empty one
//     ("/a//../b" gives "/b");
//   - an IPv4 part too large for its bytes makes the host a name, where the
//     clients truncate it; the Windows-resolver rule that ignores text after
//     a space in a short dotted host is not applied;
//   - a host that IDNA rejects keeps its escaped bytes, where the clients
//     fail the whole URL;
//   - V5 IPv6 normalisation and eTLD+1 hosts, which the v4 clients predate.
//
// # Caveats
//
//   - The V5 host suffixes depend on the Public Suffix List compiled into the
//     golang.org/x/net version in go.mod, including its private section
//     ("b.github.io" is an eTLD+1). Updating x/net can change expressions.
//   - V5 allocates once per host name inside x/net/publicsuffix (the error of
//     a netip.ParseAddr check); WebRisk allocates nothing with a warm Buffer.
//     IDN and IPv6 hosts allocate under both.
//   - idna.Lookup's exact options may change with x/net versions.
//   - Only bytes <= 0x20 are trimmed from the ends, not Unicode spaces.
//   - A URL without a scheme is read as host then path, so "example.com/x"
//     is a web URL while "/x", "//example.com/x" and "?q" are errors; a
//     scheme-less "user:pw@host" is read as scheme "user" and rejected.
//   - An empty query ("/q?") stays in the canonical URL but yields no
//     expression of its own, as "query parameters" are absent.
package safebrowsing
