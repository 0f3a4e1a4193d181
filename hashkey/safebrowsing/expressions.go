package safebrowsing

import (
	"unsafe"

	"github.com/urlhash/urlhash/hashkey"
	"golang.org/x/net/publicsuffix"
)

// Limits on the expressions of one URL.
const (
	MaxHosts       = 5                   // host strings tried: the exact host and up to four suffixes
	MaxPaths       = 6                   // path strings tried: exact with query, exact, up to four prefixes
	MaxExpressions = MaxHosts * MaxPaths // host-suffix/path-prefix combinations
)

// span is an expression's position in the canonical URL.
type span struct{ lo, hi int }

// A Buffer holds the canonical form and the expressions of one URL. Reused
// across URLs it lets Expand run without allocating once its storage has
// grown to the longest URL. The zero value is ready to use. A Buffer must
// not be used by several goroutines at once.
//
// Every expression is a host suffix followed by a path prefix, and the
// host ends where the path starts, so each one is a substring of the
// canonical URL: the Buffer stores the canonical URL and their positions.
type Buffer struct {
	buf   []byte
	n     int
	spans [MaxExpressions]span
}

// Expand canonicalises raw into b and computes its host-suffix/path-prefix
// expressions, replacing what b held. On error b is empty.
func (p *Profile) Expand(b *Buffer, raw string) error {
	b.n = 0
	var (
		l   layout
		err error
	)
	b.buf, l, err = p.appendCanonical(b.buf[:0], raw)
	if err != nil {
		return p.urlError(raw, err)
	}
	var hosts [MaxHosts]int
	nh := p.hostSuffixes(&hosts, b.buf[l.host:l.path], l.ip)
	var paths [MaxPaths]int
	np := pathPrefixes(&paths, b.buf[l.path:], l.query-l.path)
	for _, h := range hosts[:nh] {
		for _, q := range paths[:np] {
			b.spans[b.n] = span{l.host + h, l.path + q}
			b.n++
		}
	}
	return nil
}

// Canonical returns the canonical URL. The slice is valid until the next
// call of Expand with b.
func (b *Buffer) Canonical() []byte { return b.buf }

// Len returns the number of expressions, 0 after an error.
func (b *Buffer) Len() int { return b.n }

// Expression returns expression i, 0 <= i < Len(). The slice aliases the
// canonical URL and is valid until the next call of Expand with b.
func (b *Buffer) Expression(i int) []byte {
	s := b.spans[i]
	return b.buf[s.lo:s.hi:s.hi]
}

// Hash returns the SHA-256 of expression i, 0 <= i < Len().
func (b *Buffer) Hash(i int) hashkey.Hash { return hashkey.Sum(b.Expression(i)) }

// AppendHashes appends the SHA-256 of every expression to dst, in order.
func (b *Buffer) AppendHashes(dst []hashkey.Hash) []hashkey.Hash {
	for i := range b.n {
		dst = append(dst, b.Hash(i))
	}
	return dst
}

// hostSuffixes stores in out the start offsets in host of the host strings
// to try, the exact host (offset 0) first and then shorter suffixes, and
// returns their number. An IP literal has only itself.
//
// WebRisk: the suffixes that start within the last five components and
// have at least two components (the top-level domain alone is skipped).
// V5: the eTLD+1 and up to three names made by adding leading components
// to it; none when the host is itself a public suffix.
func (p *Profile) hostSuffixes(out *[MaxHosts]int, host []byte, ip bool) int {
	out[0] = 0
	if ip {
		return 1
	}
	n := 1
	switch p.rule {
	case lastFive:
		// starts[k] is the start of the suffix with k+1 components.
		var starts [5]int
		ns := 0
		for i := len(host) - 1; i >= 0 && ns < len(starts); i-- {
			if host[i] == '.' {
				starts[ns] = i + 1
				ns++
			}
		}
		for k := ns - 1; k >= 1; k-- {
			out[n] = starts[k]
			n++
		}
	case fromETLD:
		// PublicSuffix reads the host only during the call and only the
		// length of its result is kept, so a zero-copy string view is safe.
		ps, _ := publicsuffix.PublicSuffix(unsafe.String(unsafe.SliceData(host), len(host)))
		d := len(host) - len(ps) - 1 // the dot before the public suffix
		if d <= 0 || host[d] != '.' {
			return 1 // the host is a public suffix
		}
		// Start of the eTLD+1, then of up to three longer names.
		var starts [4]int
		ns := 0
		for i := d - 1; i >= 0 && ns < len(starts); i-- {
			if host[i] == '.' {
				starts[ns] = i + 1
				ns++
			}
		}
		for k := ns - 1; k >= 0; k-- {
			out[n] = starts[k]
			n++
		}
	}
	return n
}

// pathPrefixes stores in out the end offsets in pq (a canonical path and
// query, the '?' at q or q == len(pq)) of the path strings to try: the exact
// path with a non-empty query, the exact path, then the first four prefixes
// ending in '/' (the root first) that differ from the exact path. It returns
// their number.
func pathPrefixes(out *[MaxPaths]int, pq []byte, q int) int {
	n := 0
	if len(pq)-q > 1 {
		out[n] = len(pq)
		n++
	}
	out[n] = q
	n++
	for i, k := 0, 0; i < q && k < 4; i++ {
		if pq[i] == '/' {
			k++
			if i+1 != q {
				out[n] = i + 1
				n++
			}
		}
	}
	return n
}
