package valuefile

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// A Cache is what the open value files of one table share: a zstd decoder
// per dictionary (files written with the same dictionary share one), and
// decoded blocks for single reads (Reader.Value), at most a given number
// of bytes of them, the least recently used dropped first. Its methods are
// safe for concurrent use.
type Cache struct {
	nextID atomic.Uint64 // numbers the open files

	mu   sync.Mutex
	max  int64
	size int64
	m    map[cacheKey]*cached
	lru  cached // sentinel: lru.next is the most recently used

	dmu  sync.Mutex
	decs map[[sha256.Size]byte]*zstd.Decoder
}

type cacheKey struct {
	file  uint64
	block uint32
}

type cached struct {
	key        cacheKey
	d          *decoded
	prev, next *cached
}

// NewCache returns a cache that keeps at most maxBytes of decoded blocks
// (0: none).
func NewCache(maxBytes int64) *Cache {
	c := &Cache{max: maxBytes, m: map[cacheKey]*cached{}}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// get returns the decoded block, or nil. The caller must not change it.
func (c *Cache) get(file uint64, block uint32) *decoded {
	if c.max == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[cacheKey{file, block}]
	if e == nil {
		return nil
	}
	c.unlink(e)
	c.pushFront(e)
	return e.d
}

// put adds a decoded block, which must not change from then on.
func (c *Cache) put(file uint64, block uint32, d *decoded) {
	sz := d.size()
	if sz > c.max/4 {
		return // one block would push out most of the others
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := cacheKey{file, block}
	if _, ok := c.m[k]; ok {
		return
	}
	e := &cached{key: k, d: d}
	c.m[k] = e
	c.pushFront(e)
	c.size += sz
	for c.size > c.max {
		old := c.lru.prev
		c.unlink(old)
		delete(c.m, old.key)
		c.size -= old.d.size()
	}
}

func (c *Cache) unlink(e *cached) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (c *Cache) pushFront(e *cached) {
	e.next, e.prev = c.lru.next, &c.lru
	c.lru.next.prev = e
	c.lru.next = e
}

// Forget drops the blocks of the reader's file (it is being closed).
func (c *Cache) Forget(r *Reader) {
	if c.max == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range r.blocks {
		if e := c.m[cacheKey{r.id, uint32(i)}]; e != nil {
			c.unlink(e)
			delete(c.m, e.key)
			c.size -= e.d.size()
		}
	}
}

// decoder returns the decoder of dict (nil: none), made at its first use.
func (c *Cache) decoder(dict []byte) (*zstd.Decoder, error) {
	key := sha256.Sum256(dict)
	c.dmu.Lock()
	defer c.dmu.Unlock()
	if d := c.decs[key]; d != nil {
		return d, nil
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxBlock), zstd.IgnoreChecksum(true)}
	if dict != nil {
		opts = append(opts, zstd.WithDecoderDicts(dict))
	}
	d, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, err
	}
	if c.decs == nil {
		c.decs = map[[sha256.Size]byte]*zstd.Decoder{}
	}
	c.decs[key] = d
	return d, nil
}

// Close releases the decoders. The cache must not be used after.
func (c *Cache) Close() {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	for _, d := range c.decs {
		d.Close()
	}
	c.decs = nil
}
