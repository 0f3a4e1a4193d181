package hashkey

// Profile is one way of turning URL text into an identity. The profiles
// live in the subpackages, so that a program that only handles hashes links
// no URL code: urlhash (the URL Standard serialisation, the default
// identity) and safebrowsing (the exact Safe Browsing expression).
//
// Every implementation is immutable and safe for concurrent use.
type Profile interface {
	// Name is the profile's stable name, recorded in an index so that a
	// different identity is refused.
	Name() string
	// AppendHashed appends to dst the exact string whose digest is the
	// identity of rawURL. On error dst is returned unchanged.
	AppendHashed(dst []byte, rawURL string) ([]byte, error)
	// Hash returns the identity of rawURL. An input the profile rejects is
	// a *URLError naming the profile and the input.
	Hash(rawURL string) (Hash, error)
}
