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

// Body buffers come in size classes of 2^k and 1.5 x 2^k bytes, from
// 64 KiB to 4 MiB (a body wastes at most a third of its buffer); a larger
// body gets a buffer of its own, left to the collector.
const (
	minPooledBodyBits = 16 // 64 KiB
	maxPooledBodyBits = 22 // 4 MiB
	bodyClasses       = 2*(maxPooledBodyBits-minPooledBodyBits) + 1
)

// bodyPool keeps body buffers by size class.
type bodyPool [bodyClasses]sync.Pool

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
	b := make([]byte, n, classSize(c))
	return &b
}

func (p *bodyPool) put(b *[]byte) {
	if c := bodyClass(cap(*b)); c >= 0 && cap(*b) == classSize(c) {
		p[c].Put(b)
	}
}

// bodyClass returns the smallest size class of at least n bytes, or -1
// when n is larger than the largest class.
func bodyClass(n int) int {
	if n <= 1<<minPooledBodyBits {
		return 0
	}
	k := bits.Len(uint(n-1)) - 1 // 2^k < n <= 2^(k+1)
	c := 2 * (k - minPooledBodyBits)
	if n <= 3<<(k-1) {
		c++ // 1.5 x 2^k
	} else {
		c += 2
	}
	if c >= bodyClasses {
		return -1
	}
	return c
}

// classSize returns the bytes of size class c.
func classSize(c int) int {
	if c%2 == 1 {
		return 3 << (minPooledBodyBits + c/2 - 1)
	}
	return 1 << (minPooledBodyBits + c/2)
}

// keyBatch is the working space of a batch of bare keys (Server.addKeys).
type keyBatch struct {
	keys  []hashkey.Hash
	added []bool
}

// maxPooledKeys bounds the key batches kept for reuse: 128Ki keys (4 MiB
// of bodies), well above a client's batch (cmd/urlhash sends 16Ki).
const maxPooledKeys = 1 << 17
