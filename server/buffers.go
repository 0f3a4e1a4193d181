package server

import (
	"math/bits"
	"sync"

	"github.com/urlhash/urlhash/hashkey"
)

// Request bodies and the key batches decoded from them are read into
// buffers kept for the next request: a seen-set's clients send batch
// after batch of one size, and a new buffer for each (io.ReadAll grows
// one by doubling) was a third of the server's garbage. A pool holds what
// the requests in flight held (at most Options.MaxBuffered of bodies), and
// what it keeps the collector frees after two cycles without use.

// Body buffers come in size classes, powers of two from minPooledBody to
// maxPooledBody bytes; a larger body gets a buffer of its own, left to
// the collector.
const (
	minPooledBodyBits = 16 // 64 KiB
	maxPooledBodyBits = 22 // 4 MiB
)

// bodyPool keeps body buffers by size class.
type bodyPool [maxPooledBodyBits - minPooledBodyBits + 1]sync.Pool

// get returns a buffer of n bytes (its length), from the pool when n is
// at most 4 MiB; put gives it back.
func (p *bodyPool) get(n int) *[]byte {
	c := bodyClass(n)
	if c < 0 {
		b := make([]byte, n)
		return &b
	}
	if b, ok := p[c].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<(c+minPooledBodyBits))
	return &b
}

func (p *bodyPool) put(b *[]byte) {
	if c := bodyClass(cap(*b)); c >= 0 && cap(*b) == 1<<(c+minPooledBodyBits) {
		p[c].Put(b)
	}
}

// bodyClass returns the size class of a buffer of n bytes, or -1 when n
// is larger than the largest class.
func bodyClass(n int) int {
	if n <= 1<<minPooledBodyBits {
		return 0
	}
	c := bits.Len(uint(n-1)) - minPooledBodyBits
	if c >= len(bodyPool{}) {
		return -1
	}
	return c
}

// keyBatch is the working space of a batch of bare keys (Server.addKeys).
type keyBatch struct {
	keys  []hashkey.Hash
	added []bool
}

// maxPooledKeys bounds the key batches kept for reuse: 128Ki keys (4 MiB
// of bodies), well above a client's batch (cmd/urlhash sends 16Ki).
const maxPooledKeys = 1 << 17
