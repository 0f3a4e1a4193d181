package extsort

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Run files are named RunPrefix+random+RunSuffix in the sort's directory
// (the index directory: on the same disk as the index, under the
// free-space gate, and removed by a writable Open when a crash left them).
const (
	// RunPrefix starts the name of every run file.
	RunPrefix = "urlhash.load-"
	// RunSuffix ends the name of every run file.
	RunSuffix = ".run"
)

// Config is what a sort needs from its caller.
type Config struct {
	// Dir is where run files go; "" keeps everything in one chunk in
	// memory, never spilled.
	Dir string
	// Budget bounds the memory of the chunks, in bytes: two of half of it
	// each, one filling while the other is sorted and written.
	Budget int64
	// Room is asked for the bytes of each run file before it is written,
	// and refuses with an error (the free-space gate).
	Room func(int64) error
	// FullTag and PrefixTag start the keys Merger.Next returns: the tag,
	// then the hash or the prefix. FullTag < PrefixTag: the sort puts full
	// entries first.
	FullTag, PrefixTag byte
	// AppendValue appends the value an entry that carries one (a prefix
	// entry, or a full entry with a value) is sorted with: the bytes
	// Merger.Next returns for it.
	AppendValue func(b []byte, v *store.Value) []byte
	// Cost is the bytes an entry of a key of n bytes and a value of vlen
	// bytes costs written, for Sorter.Cost.
	Cost func(n, vlen int) int64
}

// richEntry is a chunk entry that is not a key-only full entry: a full
// entry with a value, or a prefix entry.
type richEntry struct {
	hash hashkey.Hash
	n    int  // key length: hashkey.Size for a full entry, else the prefix's
	pos  int  // len(chunk.keys) when it was added: the key-only entries before it
	off  int  // its encoded value: chunk.vals[off:off+vlen]
	vlen int  //
	drop bool // a key-only entry of the same hash came first
}

const richEntrySize = 72 // unsafe.Sizeof(richEntry{}), rounded up

func (r *richEntry) isFull() bool { return r.n == hashkey.Size }

// appendKey appends r's key, its tag first, to b.
func (r *richEntry) appendKey(b []byte, cfg *Config) []byte {
	if r.isFull() {
		return append(append(b, cfg.FullTag), r.hash[:]...)
	}
	return append(append(b, cfg.PrefixTag), r.hash[:r.n]...)
}

// compareRich orders rich entries as their Badger keys.
func compareRich(a, b richEntry) int {
	if a.isFull() != b.isFull() {
		if a.isFull() {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.hash[:a.n], b.hash[:b.n])
}

// compareInput orders rich entries of one chunk as they were added: their
// values' offsets never decrease (a later entry's is past an earlier
// one's value), nor their counts of key-only entries before them; of two
// alike in both, the earlier has the empty value.
func compareInput(a, b *richEntry) int {
	if c := cmp.Compare(a.off, b.off); c != 0 {
		return c
	}
	if c := cmp.Compare(a.pos, b.pos); c != 0 {
		return c
	}
	return cmp.Compare(a.vlen, b.vlen)
}

// A chunk is a part of a load's input: key-only full entries as 32 bytes
// each (the common case), the others with their encoded values.
type chunk struct {
	keys []hashkey.Hash
	rich []richEntry
	vals []byte
	// After sort: the unique full entries and the write cost.
	full, cost int64
}

func (c *chunk) reset() {
	c.keys, c.rich, c.vals = c.keys[:0], c.rich[:0], c.vals[:0]
	c.full, c.cost = 0, 0
}

// size is the memory the chunk holds.
func (c *chunk) size() int {
	return cap(c.keys)*hashkey.Size + cap(c.rich)*richEntrySize + cap(c.vals)
}

// used is the part of size in use.
func (c *chunk) used() int {
	return len(c.keys)*hashkey.Size + len(c.rich)*richEntrySize + len(c.vals)
}

func (c *chunk) isEmpty() bool { return len(c.keys) == 0 && len(c.rich) == 0 }

// add adds e; limit (when positive) caps the growth of the key array.
func (c *chunk) add(e *store.Entry, limit int, cfg *Config) {
	if !e.IsPrefix() && e.Value.IsZero() {
		if len(c.keys) == cap(c.keys) && limit > 0 {
			// Double, up to what the limit leaves: append's growth could
			// overshoot it.
			fit := (limit - c.size()) / hashkey.Size
			c.keys = slices.Grow(c.keys, min(max(cap(c.keys), 1024), max(fit, 1)))
		}
		c.keys = append(c.keys, e.Hash)
		return
	}
	n := hashkey.Size
	if e.IsPrefix() {
		n = e.Len
	}
	off := len(c.vals)
	c.vals = cfg.AppendValue(c.vals, &e.Value)
	c.rich = append(c.rich, richEntry{hash: e.Hash, n: n, pos: len(c.keys), off: off, vlen: len(c.vals) - off})
}

// sort sorts and de-duplicates the chunk, the first of repeated keys
// winning, and leaves keys and rich with no key in common.
func (c *chunk) sort(cfg *Config) {
	// Rich entries: equal keys in input order, so that the first stays
	// first. (A stable sort of these 72-byte entries, a merge sort by
	// rotations, was a third of an import --store-url's CPU.)
	slices.SortFunc(c.rich, func(a, b richEntry) int {
		if c := compareRich(a, b); c != 0 {
			return c
		}
		return compareInput(&a, &b)
	})
	c.rich = slices.CompactFunc(c.rich, func(a, b richEntry) bool { return compareRich(a, b) == 0 })
	hasFullRich := len(c.rich) > 0 && c.rich[0].isFull()
	if hasFullRich && len(c.keys) > 0 {
		// A key-only entry that came before the rich entry of the same
		// hash wins: find them in input order, before keys is sorted.
		first := map[hashkey.Hash]int{}
		for i := range c.rich {
			if c.rich[i].isFull() {
				first[c.rich[i].hash] = i
			}
		}
		for i := range c.keys {
			if j, ok := first[c.keys[i]]; ok && i < c.rich[j].pos {
				c.rich[j].drop = true
			}
		}
		c.rich = slices.DeleteFunc(c.rich, func(r richEntry) bool { return r.drop })
	}
	sortHashes(c.keys)
	c.keys = slices.Compact(c.keys)
	if hasFullRich && len(c.keys) > 0 {
		// Drop the key-only entries a rich entry of the same hash wins.
		j := 0
		c.keys = slices.DeleteFunc(c.keys, func(h hashkey.Hash) bool {
			for j < len(c.rich) && c.rich[j].isFull() && bytes.Compare(c.rich[j].hash[:], h[:]) < 0 {
				j++
			}
			return j < len(c.rich) && c.rich[j].isFull() && c.rich[j].hash == h
		})
	}
	c.full = int64(len(c.keys))
	c.cost = int64(len(c.keys)) * cfg.Cost(hashkey.Size, 0)
	for i := range c.rich {
		if c.rich[i].isFull() {
			c.full++
		}
		c.cost += cfg.Cost(c.rich[i].n, c.rich[i].vlen)
	}
}

// sortHashes sorts hs: in place, by its leading byte, then each bucket
// (on the cores) by its second byte, then each of those (about n/65536
// hashes: hashes are uniform) by comparison. A partition by one byte
// keeps 256 write positions, which stay in the cache.
func sortHashes(hs []hashkey.Hash) {
	const small = 1024
	if len(hs) < small {
		slices.SortFunc(hs, compareHashes)
		return
	}
	var top [257]int
	partitionByte(hs, 0, &top)
	workers := runtime.GOMAXPROCS(0)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var sub [257]int
			for b := int(next.Add(1)) - 1; b < 256; b = int(next.Add(1)) - 1 {
				bucket := hs[top[b]:top[b+1]]
				if len(bucket) < small {
					slices.SortFunc(bucket, compareHashes)
					continue
				}
				partitionByte(bucket, 1, &sub)
				for c := range 256 {
					if sub[c+1]-sub[c] > 1 {
						slices.SortFunc(bucket[sub[c]:sub[c+1]], compareHashes)
					}
				}
			}
		})
	}
	wg.Wait()
}

// partitionByte orders hs by its byte d, in place (American flag sort),
// and sets bounds[b]..bounds[b+1] to the range of byte value b.
func partitionByte(hs []hashkey.Hash, d int, bounds *[257]int) {
	var count [256]int
	for i := range hs {
		count[hs[i][d]]++
	}
	bounds[0] = 0
	for b := range 256 {
		bounds[b+1] = bounds[b] + count[b]
	}
	next := count // the next slot to fill in each bucket
	copy(next[:], bounds[:256])
	for b := range 256 {
		for next[b] < bounds[b+1] {
			h := hs[next[b]]
			t := int(h[d])
			for t != b { // carry h to its bucket, taking the one found there
				hs[next[t]], h = h, hs[next[t]]
				next[t]++
				t = int(h[d])
			}
			hs[next[b]] = h
			next[b]++
		}
	}
}

func compareHashes(a, b hashkey.Hash) int {
	for i := 0; i < hashkey.Size; i += 8 {
		x, y := binary.BigEndian.Uint64(a[i:]), binary.BigEndian.Uint64(b[i:])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// A Sorter gathers entries into sorted runs. It is not safe for
// concurrent use.
type Sorter struct {
	cfg   Config
	limit int // bytes per chunk; 0: one chunk, never spilled

	cur      *chunk
	inflight chan spillResult // the chunk being sorted and written, or nil
	runs     []*runFile
	last     *chunk // after finish: the chunk kept in memory

	// After finish: upper bounds of the unique full entries and of the
	// bytes the unique entries cost written.
	full, cost int64
	// expiring: an entry has an expiry (the index then records that it
	// holds some).
	expiring bool
}

type spillResult struct {
	c   *chunk
	run *runFile
	err error
}

// New returns a sorter as cfg says. Close it when done.
func New(cfg Config) *Sorter {
	s := &Sorter{cfg: cfg, cur: &chunk{}}
	if cfg.Dir != "" {
		s.limit = int(max(cfg.Budget/2, 4096))
	}
	return s
}

// Full returns, after Finish, an upper bound of the unique full entries
// (exact within each run; a key several runs hold counts once a run).
func (s *Sorter) Full() int64 { return s.full }

// Cost returns, after Finish, an upper bound of the bytes the unique
// entries cost written (Config.Cost), as Full counts them.
func (s *Sorter) Cost() int64 { return s.cost }

// HasExpiring reports whether an entry added had an expiry.
func (s *Sorter) HasExpiring() bool { return s.expiring }

// Add adds e, which the caller has checked. It may spill the chunk that
// e filled to a run file (in the background) and fails when the previous
// spill did.
func (s *Sorter) Add(e *store.Entry) error {
	if !e.Value.Expires.IsZero() {
		s.expiring = true
	}
	s.cur.add(e, s.limit, &s.cfg)
	if s.limit > 0 && s.cur.used() >= s.limit {
		return s.spill()
	}
	return nil
}

// spill hands the current chunk to a goroutine that sorts it and writes
// it to a run file, after waiting for the previous one, whose chunk is
// filled next.
func (s *Sorter) spill() error {
	spare, err := s.wait()
	if err != nil {
		return err
	}
	c := s.cur
	if spare == nil {
		// Sized as the first: growing it would copy it all again.
		spare = &chunk{keys: make([]hashkey.Hash, 0, cap(c.keys))}
	}
	s.cur = spare
	ch := make(chan spillResult, 1)
	s.inflight = ch
	go func() {
		run, err := s.writeRun(c)
		ch <- spillResult{c: c, run: run, err: err}
	}()
	return nil
}

// wait waits for the chunk in flight, if any, and returns it emptied.
func (s *Sorter) wait() (*chunk, error) {
	if s.inflight == nil {
		return nil, nil
	}
	r := <-s.inflight
	s.inflight = nil
	if r.run != nil {
		s.runs = append(s.runs, r.run)
	}
	if r.err != nil {
		return nil, r.err
	}
	s.full += r.c.full
	s.cost += r.c.cost
	r.c.reset()
	return r.c, nil
}

// Finish waits for the spills and sorts the last chunk, after the last
// Add. When the input spilled, the last chunk is written too: the merge
// then holds no chunk, and its memory goes to the filter and Badger's
// table builders, which grow while the merge runs.
func (s *Sorter) Finish() error {
	if _, err := s.wait(); err != nil {
		return err
	}
	c := s.cur
	s.cur = nil
	if len(s.runs) > 0 && !c.isEmpty() {
		run, err := s.writeRun(c)
		if run != nil {
			s.runs = append(s.runs, run)
		}
		if err != nil {
			return err
		}
		s.full += c.full
		s.cost += c.cost
		s.last = &chunk{}
		return nil
	}
	c.sort(&s.cfg)
	s.full += c.full
	s.cost += c.cost
	s.last = c
	return nil
}

// Close waits for a spill in flight and removes the run files.
func (s *Sorter) Close() {
	s.wait()
	for _, r := range s.runs {
		r.remove()
	}
	s.runs = nil
}
