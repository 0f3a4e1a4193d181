package extsort

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math"
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
// entry with a value, or a prefix entry. Its fields are narrow: a chunk
// holds less than 4 Gi key-only entries and 64 Ki slabs of values
// (maxChunk, and Add's check for a chunk that never spills). At 48 bytes
// (72 with ints) a million URLs of the bench and their values fit the
// default import's chunk of 128 MiB, which it then neither writes nor
// reads back.
type richEntry struct {
	hash hashkey.Hash
	pos  uint32 // len(chunk.keys) when it was added: the key-only entries before it
	off  uint32 // its encoded value: chunk.vals[slab][off:off+vlen]
	vlen uint32 //
	slab uint16 //
	n    uint8  // key length: hashkey.Size for a full entry, else the prefix's
	drop bool   // a key-only entry of the same hash came first
}

const richEntrySize = 48 // unsafe.Sizeof(richEntry{})

// maxChunk bounds the bytes of a chunk that spills (Config.Budget may be
// larger), so that its slabs are numbered in 16 bits.
const maxChunk = 1 << 31

// slabSize is the size of the arrays a chunk keeps its values in: a value
// goes in the last one, or in a new one (of its own size if larger) when
// it does not fit; values are never moved as the chunk fills (growing
// one array by doubling copied them, and the growth of the chunk's arrays
// was a seventh of an import --store-url's CPU).
const slabSize = 4 << 20

func (r *richEntry) isFull() bool { return r.n == hashkey.Size }

// value returns r's encoded value in the chunk's slabs.
func (r *richEntry) value(vals [][]byte) []byte { return vals[r.slab][r.off : r.off+r.vlen] }

// appendKey appends r's key, its tag first, to b.
func (r *richEntry) appendKey(b []byte, cfg *Config) []byte {
	if r.isFull() {
		return append(append(b, cfg.FullTag), r.hash[:]...)
	}
	return append(append(b, cfg.PrefixTag), r.hash[:r.n]...)
}

// compareRich orders rich entries as their Badger keys.
func compareRich(a, b *richEntry) int {
	if a.isFull() != b.isFull() {
		if a.isFull() {
			return -1
		}
		return 1
	}
	return bytes.Compare(a.hash[:a.n], b.hash[:b.n])
}

// compareInput orders rich entries of one chunk as they were added
// (before gather): their values' places (slab, then offset) never
// decrease (a later entry's is past an earlier one's value), nor their
// counts of key-only entries before them; of two alike in both, the
// earlier has the empty value.
func compareInput(a, b *richEntry) int {
	if c := cmp.Compare(a.slab, b.slab); c != 0 {
		return c
	}
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
	// vals are the slabs of the encoded values; valLen and valCap their
	// bytes used and held; free the slabs of slabSize reset kept.
	vals           [][]byte
	valLen, valCap int
	free           [][]byte
	// After sort: the unique full entries and the write cost.
	full, cost int64
}

func (c *chunk) reset() {
	c.keys, c.rich = c.keys[:0], c.rich[:0]
	for _, s := range c.vals {
		if cap(s) == slabSize {
			c.free = append(c.free, s[:0])
		} else {
			c.valCap -= cap(s)
		}
	}
	c.vals, c.valLen = c.vals[:0], 0
	c.full, c.cost = 0, 0
}

// size is the memory the chunk holds.
func (c *chunk) size() int {
	return cap(c.keys)*hashkey.Size + cap(c.rich)*richEntrySize + c.valCap
}

// used is the part of size in use.
func (c *chunk) used() int {
	return len(c.keys)*hashkey.Size + len(c.rich)*richEntrySize + c.valLen
}

// newSlab adds a slab of at least n bytes.
func (c *chunk) newSlab(n int) {
	if n <= slabSize && len(c.free) > 0 {
		c.vals = append(c.vals, c.free[len(c.free)-1])
		c.free = c.free[:len(c.free)-1]
		return
	}
	s := make([]byte, 0, max(n, slabSize))
	c.vals = append(c.vals, s)
	c.valCap += cap(s)
}

func (c *chunk) isEmpty() bool { return len(c.keys) == 0 && len(c.rich) == 0 }

// add adds e; limit (when positive) caps the growth of the arrays. It
// fails when a chunk that never spills (limit 0) outgrows richEntry.
func (c *chunk) add(e *store.Entry, limit int, cfg *Config) error {
	if !e.IsPrefix() && e.Value.IsZero() {
		if len(c.keys) == cap(c.keys) {
			c.keys = slices.Grow(c.keys, growth(cap(c.keys), limit, c.size(), hashkey.Size))
		}
		if len(c.keys) == math.MaxUint32 {
			return errChunk
		}
		c.keys = append(c.keys, e.Hash)
		return nil
	}
	n := hashkey.Size
	if e.IsPrefix() {
		n = e.Len
	}
	if len(c.rich) == cap(c.rich) {
		c.rich = slices.Grow(c.rich, growth(cap(c.rich), limit, c.size(), richEntrySize))
	}
	if len(c.vals) == 0 {
		c.newSlab(0)
	}
	last := len(c.vals) - 1
	s := c.vals[last]
	off := len(s)
	if s = cfg.AppendValue(s, &e.Value); cap(s) != cap(c.vals[last]) {
		// It did not fit (append made a new array): in a new slab.
		if len(c.vals) > math.MaxUint16 {
			return errChunk
		}
		c.newSlab(len(s) - off)
		c.vals[last+1] = append(c.vals[last+1], s[off:]...)
		last, s, off = last+1, c.vals[last+1], 0
	}
	c.vals[last] = s
	vlen := len(s) - off
	c.valLen += vlen
	c.rich = append(c.rich, richEntry{hash: e.Hash, n: uint8(n), pos: uint32(len(c.keys)), off: uint32(off), vlen: uint32(vlen), slab: uint16(last)})
	return nil
}

// errChunk refuses a load kept in memory whose chunk would outgrow
// richEntry's fields.
var errChunk = errors.New("index: load: more than 256 GiB of values or 4 Gi keys in one load in memory")

// growth is how many elements of size bytes an array of capacity cp
// grows by: it doubles (from 1,024), but (limit > 0) within what the
// chunk's limit leaves beside its size (append's growth could overshoot
// it), and by one at least.
func growth(cp, limit, size, elem int) int {
	n := max(cp, 1024)
	if limit > 0 {
		n = min(n, max((limit-size)/elem, 1))
	}
	return n
}

// sort sorts and de-duplicates the chunk, the first of repeated keys
// winning, and leaves keys and rich with no key in common.
func (c *chunk) sort(cfg *Config) {
	// Rich entries: equal keys in input order, so that the first stays
	// first. (A stable sort of these 72-byte entries, a merge sort by
	// rotations, was a third of an import --store-url's CPU.)
	sortRich(c.rich)
	c.rich = slices.CompactFunc(c.rich, func(a, b richEntry) bool { return compareRich(&a, &b) == 0 })
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
			if j, ok := first[c.keys[i]]; ok && uint32(i) < c.rich[j].pos {
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
		c.cost += cfg.Cost(int(c.rich[i].n), int(c.rich[i].vlen))
	}
}

// compareRichInput orders rich entries by key, equal keys as they were
// added.
func compareRichInput(a, b richEntry) int {
	if c := compareRich(&a, &b); c != 0 {
		return c
	}
	return compareInput(&a, &b)
}

// compareFullInput is compareRichInput for full entries: their hashes
// compared 8 bytes at a time.
func compareFullInput(a, b richEntry) int {
	if c := compareHashes(a.hash, b.hash); c != 0 {
		return c
	}
	return compareInput(&a, &b)
}

// sortRich sorts rs by key, equal keys in input order (compareRichInput):
// the full entries by their leading byte first, in place, then each
// bucket (on the cores) by its second byte and comparison, as sortHashes
// does; the prefix entries (after them) by comparison. Sorting the 48-byte entries by
// comparison alone, on one core, was a sixth of an import --store-url's
// CPU.
func sortRich(rs []richEntry) {
	full := 0
	for i := range rs {
		if rs[i].isFull() {
			rs[full], rs[i] = rs[i], rs[full]
			full++
		}
	}
	slices.SortFunc(rs[full:], compareRichInput)
	fs := rs[:full]
	const small = 1024
	if len(fs) < small {
		slices.SortFunc(fs, compareRichInput)
		return
	}
	var top [257]int
	partitionRich(fs, 0, &top)
	var at atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var sub [257]int
			for b := int(at.Add(1)) - 1; b < 256; b = int(at.Add(1)) - 1 {
				bucket := fs[top[b]:top[b+1]]
				if len(bucket) < small {
					slices.SortFunc(bucket, compareFullInput)
					continue
				}
				partitionRich(bucket, 1, &sub)
				for c := range 256 {
					if sub[c+1]-sub[c] > 1 {
						slices.SortFunc(bucket[sub[c]:sub[c+1]], compareFullInput)
					}
				}
			}
		})
	}
	wg.Wait()
}

// partitionRich orders rs by its hashes' byte d, in place, as
// partitionByte does hashes.
func partitionRich(rs []richEntry, d int, bounds *[257]int) {
	var count [256]int
	for i := range rs {
		count[rs[i].hash[d]]++
	}
	bounds[0] = 0
	for b := range 256 {
		bounds[b+1] = bounds[b] + count[b]
	}
	next := count
	copy(next[:], bounds[:256])
	for b := range 256 {
		for next[b] < bounds[b+1] {
			r := rs[next[b]]
			t := int(r.hash[d])
			for t != b { // carry r to its bucket, taking the one found there
				rs[next[t]], r = r, rs[next[t]]
				next[t]++
				t = int(r.hash[d])
			}
			rs[next[b]] = r
			next[b]++
		}
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
		s.limit = int(min(max(cfg.Budget/2, 4096), maxChunk))
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
	if err := s.cur.add(e, s.limit, &s.cfg); err != nil {
		return err
	}
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
		spare = &chunk{keys: make([]hashkey.Hash, 0, cap(c.keys)), rich: make([]richEntry, 0, cap(c.rich))}
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
	c.gather()
	s.full += c.full
	s.cost += c.cost
	s.last = c
	return nil
}

// gather copies the values of the sorted chunk into new slabs in the
// rich entries' order, on the cores, so that the merge reads them in
// order. After the sort they are in input order: the merge, one entry at
// a time, stalled on each value's cache and TLB misses (a million URLs,
// 70 MB of values: a second of copying in Merger.Next, on a loaded
// machine), where this loop copies them a few misses at once. The chunk
// never spilled, so the budget's second chunk is free for the copy.
func (c *chunk) gather() {
	const minGather = 4096
	if len(c.rich) < minGather {
		return
	}
	workers := runtime.GOMAXPROCS(0)
	if len(c.vals)+workers > math.MaxUint16 {
		return // each core may start a slab
	}
	per := (len(c.rich) + workers - 1) / workers
	parts := make([]chunk, workers)
	var wg sync.WaitGroup
	for w := range parts {
		rs := c.rich[min(w*per, len(c.rich)):min((w+1)*per, len(c.rich))]
		p := &parts[w]
		wg.Go(func() {
			for i := range rs {
				r := &rs[i]
				v := r.value(c.vals)
				if len(p.vals) == 0 || cap(p.vals[len(p.vals)-1])-len(p.vals[len(p.vals)-1]) < len(v) {
					p.newSlab(len(v))
				}
				last := len(p.vals) - 1
				r.off, r.slab = uint32(len(p.vals[last])), uint16(last)
				p.vals[last] = append(p.vals[last], v...)
			}
		})
	}
	wg.Wait()
	var vals [][]byte
	valCap := 0
	for w := range parts {
		if base := len(vals); base > 0 {
			rs := c.rich[min(w*per, len(c.rich)):min((w+1)*per, len(c.rich))]
			for i := range rs {
				rs[i].slab += uint16(base)
			}
		}
		vals = append(vals, parts[w].vals...)
		valCap += parts[w].valCap
	}
	c.vals, c.valCap, c.free = vals, valCap, nil
}

// Close waits for a spill in flight and removes the run files.
func (s *Sorter) Close() {
	s.wait()
	for _, r := range s.runs {
		r.remove()
	}
	s.runs = nil
}
