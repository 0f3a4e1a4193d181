// Package hasheduri generates, parses and matches hashed URIs
// (draft-feather-hashed-uri-03): hashed:ALG=HEX[+frag][+query], the digest
// of a canonical URI, which lets a publisher say "this URL is on my list"
// without revealing the list.
//
// # Basics
//
// Generate turns a URL into a URI: it drops the fragment and the query
// unless told to keep them (draft §4.3 step 1), canonicalises the rest with
// variant N or P of the draft's Appendix A (Canonical, CanonicalKeep),
// hashes it and records what was kept as flags. URI.String and Parse
// convert to and from text; Parse accepts any case, as the draft requires.
// URI.Match answers whether a URL matches a hashed URI: it keeps what the
// URI's flags say, canonicalises with the variant the publisher used (the
// URI does not record it), hashes with the URI's algorithm and compares
// digests in constant time.
//
// Algorithms: md5 and sha1 from the draft's registry, and SHA-256 under the
// private-use identifier x-sha256 (§4.2 reserves "x-" names). Parse also
// accepts the name sha256 for it; String always writes x-sha256.
//
// # Sharing a blocklist without revealing it
//
// The publisher runs Generate(u, SHA256, KeepNone, N) over each blocked URL
// and ships the String of each result. A client holding a URL parses each
// published line with Parse and calls Match(url, N); only the URLs on the
// list match, and the list itself shows nothing but digests. The draft's
// security section applies: a short list of likely URLs (for example every
// http://www.DOMAIN) can be recovered by hashing candidates, so the scheme
// hides the list only from someone who cannot guess its entries.
//
// # Canonicalisation decisions
//
// The draft's §4.3 and Appendix A leave several points open. This package
// settles them as follows; the test tables in testdata/canonical.json pin
// each one.
//
//   - Parsing follows RFC 3986's generic syntax, not the WHATWG URL
//     Standard: scheme ":" ["//" authority] path ["?" query] ["#" fragment].
//     Leading and trailing spaces and C0 controls are trimmed. A URL
//     without a scheme is rejected (ErrRelative): there is no base to
//     resolve it against. A backslash is an ordinary character, not "/".
//   - Appendix A applies to hierarchical URIs, those whose text after
//     "scheme:" starts with "/" (RFC 2396 hier_part). Any other URI, such
//     as mailto:clive@demon.net, only has its scheme lowercased and its
//     escapes normalised as below; variant P lowercases it all.
//   - Escapes (RFC 3986 §6.2.2.1-2): an escape of an unreserved character
//     is decoded (the draft's own example hashes http://10.20.30.40/abc for
//     .../a%62c), other escapes get uppercase hex, and a "%" that starts
//     no escape becomes "%25". Characters a component does not allow
//     (spaces, controls, non-ASCII bytes, "[" in a path, a second "#") are
//     percent-encoded, as RFC 3987 maps an IRI to a URI. Lowercasing in
//     variant P and in the host never touches the hex digits of escapes.
//   - Dot segments are resolved (RFC 3986 §5.2.4) in both variants, after
//     decoding, so /a/./b, /a/x/../b and /a/%2E/b are all /a/b.
//   - Authority: userinfo is what precedes the last "@"; the port is the
//     digits after the last ":" (after "]" for an IP literal); a port with
//     any other character is an error (ErrPort). The scheme's default port
//     (http 80, https 443, ws 80, wss 443, ftp 21, gopher 70, telnet 23,
//     nntp 119, ldap 389, imap 143, pop 110, rtsp 554, sip 5060, sips 5061)
//     is dropped after its leading zeros are removed, so :0080 goes too.
//   - Host: lowercased in both variants (ASCII only). An ASCII character
//     that RFC 3986 does not allow in a host is an error (ErrHost); a
//     non-ASCII byte is percent-encoded, not converted to punycode. A host
//     of four dot-separated decimal numbers, each at most 255 once leading
//     zeros are removed, is IPv4 and loses the zeros: 111.011.101.001 is
//     111.11.101.1 (decimal, not octal as browsers would read it). An IPv6
//     literal is written in RFC 5952 form (lowercase, zeros removed,
//     longest zero run compressed); an IPvFuture is lowercased; a zone
//     identifier is an error.
//   - Empty components are left out, as step (9) says: http://h:/ is
//     http://h/, http://@h is http://h, an empty query or fragment is
//     dropped even when kept, and an empty authority is dropped
//     (file:///etc is file:/etc) unless the path starts with "//", when
//     "//" stays so that the result still parses the same way.
//   - No path is added: http://www.thus.net stays as it is (the draft's
//     digests are of that string), and http://www.thus.net/ keeps its "/".
//   - Step (8) removes a final "index.htm" or "index.html" segment of an
//     http URI, leaving the trailing "/" (the draft's example gives
//     /Test/ for /Test/index.html). It compares case-sensitively, so in
//     variant N /INDEX.HTML stays; in P everything is lowercase by then.
//     It applies to the scheme http only, as written; not to https.
//   - Step (6), variant P, drops empty path segments except a final one:
//     /test//image.jpg is /test/image.jpg but /test/ keeps its "/". Read
//     literally, step (6) would turn the draft's own result /test/ into
//     /test on a second pass; keeping the final segment makes every
//     canonical form a fixed point (Canonical(Canonical(u)) ==
//     Canonical(u)), which Match relies on.
//   - Step (7), variant P, maps the extension of the last segment only if
//     that segment is not empty.
//   - Step (4), variant P, lowercases the query and fragment as well when
//     they are kept.
//   - Flags follow the keep setting, not the URL: Generate with KeepFrag
//     on a URL that has no fragment still writes "+frag", so that Match
//     keeps the fragment of the URLs it is given and http://h/#x does not
//     match a hash of http://h/.
//
// Two properties hold for every URL accepted (FuzzGenerateMatch checks
// them): canonical forms are fixed points of both variants, and P is
// coarser than N, that is Canonical(Canonical(u, N), P) == Canonical(u, P).
package hasheduri
