package keytable

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
)

// A delta holds the changes not yet in a key file: a flat array of
// entries (key, log position, state: 40 bytes), in the order their keys
// were first put, and an open-addressing index of their numbers (linear
// probing, at most 3/4 full: 4 to 8 bytes a key), both allocated once for
// the delta's expected size; a Go map of the same took about 80 bytes a
// key. A key removed keeps its entry, marked, until the delta is dropped.
//
// Entries with columns have them in a second array (cols, 24 bytes an
// entry), and entries with a value its place in a third (vals, 24 bytes),
// each made at the first entry that needs it: a delta of key-only entries
// costs what it did before columns, one of entries with times (a
// revisiting crawler's) no more than their columns. Values are copied into an
// arena of chunks (bytes a value replaced leaves are reclaimed when the
// delta is dropped; a chunk is never moved, so that a growing arena copies
// nothing and a clone shares it), or, for a value kept from a key file (Set.KeepValue), are that
// file's ordinal: the delta holds the file open until it is dropped.
//
// A bitset over the leading deltaBits bits of every key put answers most
// lookups of a key the delta does not hold (a seen-set's present keys are
// in the files) with one probe; removed entries leave their bit set (a
// "maybe").
type delta struct {
	want  int         // entries to allocate for at the first put
	ents  []deltaSlot // in the order keys were first put
	cols  []Cols      // nil, or as long as ents
	vals  []deltaVal  // nil, or as long as ents
	arena arena
	index []uint32 // entry number + 1; 0: empty
	n     int      // entries not removed
	seed  maphash.Seed
	bits  []uint64
	// files are the key files whose values entries keep, counted
	// (keyFile.acquire) until the delta is dropped (release).
	files []*keyFile
}

// deltaSlot is an entry of a delta: state is the log position << 3 | 4
// when a row hides a row below | 2 when a row (else a tombstone) | 1 when
// held (0: removed).
type deltaSlot struct {
	k     Key
	state uint64
}

const (
	slotHeld  = 1
	slotRow   = 2
	slotHides = 4
)

// deltaVal is where an entry's value is: none, the arena's vn bytes at
// voff (see arena.at), or ordinal vord-1 of the key file vf.
type deltaVal struct {
	voff uint64
	vn   uint32
	vord uint32
	vf   *keyFile
}

// dval is where a value is: b (its bytes), or ordinal ord-1 of f's value
// file; neither: none.
type dval struct {
	b   []byte
	f   *keyFile
	ord uint32
}

func (v *dval) has() bool { return len(v.b) > 0 || v.ord != 0 }

// deltaEntry is a key's state in a delta: a row (with its columns and
// value, and whether it hides a row below the delta) or a tombstone
// (which hides a row below), and the log position that records it.
type deltaEntry struct {
	seq   uint64
	row   bool
	hides bool
	cols  Cols
	val   dval
}

// deltaBits sizes a delta's bitset: 2^22 bits, 512 KiB, a few percent set
// by a full default delta.
const deltaBits = 22

// newDelta returns an empty delta that allocates room for n keys at its
// first put, and grows past them only if need be (Open's replay, or a
// batch that fills it past n).
func newDelta(n int) *delta {
	return &delta{want: n, seed: maphash.MakeSeed()}
}

// len returns the number of keys the delta holds.
func (d *delta) len() int { return d.n }

// bytes returns the bytes of the delta's entries and values.
func (d *delta) bytes() int64 {
	if d == nil {
		return 0
	}
	return int64(len(d.ents))*40 + int64(len(d.cols))*24 + int64(len(d.vals))*24 + d.arena.bytes()
}

// slot returns the index slot of k: the one that holds its entry, or the
// empty one where it goes. The keys are hashed with a random seed, so
// that chosen keys cannot make the probes long.
func (d *delta) slot(k *Key) int {
	mask := len(d.index) - 1
	s := int(maphash.Bytes(d.seed, k[:])) & mask
	for {
		e := d.index[s]
		if e == 0 || d.ents[e-1].k == *k {
			return s
		}
		s = (s + 1) & mask
	}
}

// get returns the entry of k (a nil delta holds none). Its value's bytes
// alias the arena: they do not change while the delta lives.
func (d *delta) get(k *Key) (deltaEntry, bool) {
	if d == nil || d.n == 0 {
		return deltaEntry{}, false
	}
	b := leading(k, deltaBits)
	if d.bits[b/64]&(1<<(b%64)) == 0 {
		return deltaEntry{}, false
	}
	x := d.index[d.slot(k)]
	if x == 0 {
		return deltaEntry{}, false
	}
	return d.entry(int(x - 1))
}

// entry returns entry i.
func (d *delta) entry(i int) (deltaEntry, bool) {
	st := d.ents[i].state
	e := deltaEntry{seq: st >> 3, row: st&slotRow != 0, hides: st&slotHides != 0}
	if d.cols != nil {
		e.cols = d.cols[i]
	}
	if d.vals != nil {
		x := &d.vals[i]
		switch {
		case x.vf != nil:
			e.val = dval{f: x.vf, ord: x.vord}
		case x.vn > 0:
			e.val = dval{b: d.arena.at(x.voff, x.vn)}
		}
	}
	return e, st&slotHeld != 0
}

// isPlain reports whether e needs neither cols nor vals: a tombstone, or
// a row without columns or a value.
func (e *deltaEntry) isPlain() bool { return !e.row || e.cols.IsZero() && !e.val.has() }

// put sets k's entry to e, copying its value's bytes into the arena (a
// kept file value is counted in d.files).
func (d *delta) put(k *Key, e deltaEntry) {
	if d.index == nil {
		d.alloc(max(d.want, 16))
	}
	st := e.seq<<3 | slotHeld
	if e.row {
		st |= slotRow
		if e.hides {
			st |= slotHides
		}
	}
	s := d.slot(k)
	i := -1
	if x := d.index[s]; x != 0 {
		i = int(x - 1)
		if d.ents[i].state&slotHeld == 0 {
			d.n++
		}
		d.ents[i].state = st
	} else {
		if 4*(len(d.ents)+1) > 3*len(d.index) {
			d.grow()
			s = d.slot(k)
		}
		d.ents = append(d.ents, deltaSlot{k: *k, state: st})
		if d.cols != nil {
			d.cols = append(d.cols, Cols{})
		}
		if d.vals != nil {
			d.vals = append(d.vals, deltaVal{})
		}
		i = len(d.ents) - 1
		d.index[s] = uint32(i + 1)
		d.n++
		b := leading(k, deltaBits)
		d.bits[b/64] |= 1 << (b % 64)
	}
	d.clearExt(i)
	if e.isPlain() {
		return
	}
	if !e.cols.IsZero() {
		if d.cols == nil {
			d.cols = make([]Cols, len(d.ents), cap(d.ents))
		}
		d.cols[i] = e.cols
	}
	if !e.val.has() {
		return
	}
	if d.vals == nil {
		d.vals = make([]deltaVal, len(d.ents), cap(d.ents))
	}
	var x deltaVal
	switch {
	case e.val.f != nil:
		x.vf, x.vord = e.val.f, e.val.ord
		if !slices.Contains(d.files, e.val.f) {
			e.val.f.acquire()
			d.files = append(d.files, e.val.f)
		}
	case len(e.val.b) > 0:
		x.voff, x.vn = d.arena.add(e.val.b), uint32(len(e.val.b))
	}
	d.vals[i] = x
}

// clearExt clears entry i's columns and value.
func (d *delta) clearExt(i int) {
	if d.cols != nil {
		d.cols[i] = Cols{}
	}
	if d.vals != nil {
		d.vals[i] = deltaVal{}
	}
}

// remove takes k out of the delta (the key's state below it stands).
func (d *delta) remove(k *Key) {
	if d == nil || d.n == 0 {
		return
	}
	if x := d.index[d.slot(k)]; x != 0 && d.ents[x-1].state&slotHeld != 0 {
		d.ents[x-1].state = 0
		d.clearExt(int(x - 1))
		d.n--
	}
}

// release drops the delta's counts of the files its entries keep values
// of: the delta is no longer read.
func (d *delta) release() {
	if d == nil {
		return
	}
	for _, f := range d.files {
		f.release()
	}
	d.files = nil
}

// alloc allocates room for n entries and a quarter more: a delta is
// frozen once full after a batch, and a batch applied to a full delta
// while a merge runs (see Write) would otherwise grow it, copying its
// entries and doubling its index.
func (d *delta) alloc(n int) {
	n += n / 4
	d.ents = make([]deltaSlot, 0, n)
	d.index = make([]uint32, indexSize(n))
	if d.bits == nil {
		d.bits = make([]uint64, 1<<deltaBits/64)
	}
}

// indexSize returns the index slots for n entries: a power of two at
// least 4n/3.
func indexSize(n int) int {
	s := 16
	for 3*s < 4*n {
		s *= 2
	}
	return s
}

// grow doubles the index (and lets append grow the entries): only past
// the size the delta was made for.
func (d *delta) grow() {
	if len(d.ents) >= 1<<31 {
		panic("keytable: delta of 2^31 keys") // DeltaKeys is an int32-sized bound
	}
	d.index = make([]uint32, 2*len(d.index))
	mask := len(d.index) - 1
	for i := range d.ents {
		s := int(maphash.Bytes(d.seed, d.ents[i].k[:])) & mask
		for d.index[s] != 0 {
			s = (s + 1) & mask
		}
		d.index[s] = uint32(i + 1)
	}
}

// sorted returns the numbers of the delta's rows and of its entries that
// hold a tombstone (tombstones, and rows that hide a row below), each in
// key order. The delta must not change meanwhile.
func (d *delta) sorted() (live, dead []uint32) {
	live = make([]uint32, 0, d.n)
	for i := range d.ents {
		st := d.ents[i].state
		if st&slotHeld == 0 {
			continue
		}
		if st&slotRow != 0 {
			live = append(live, uint32(i))
		}
		if st&slotRow == 0 || st&slotHides != 0 {
			dead = append(dead, uint32(i))
		}
	}
	byKey := func(a, b uint32) int { return compareKeys(d.ents[a].k, d.ents[b].k) }
	slices.SortFunc(live, byKey)
	slices.SortFunc(dead, byKey)
	return live, dead
}

// clone returns a copy of the entries the delta holds, for reading in
// order (sorted) without holding its lock; it has no index, shares the
// arena (whose bytes do not change) and counts the files it keeps values
// of (release it).
func (d *delta) clone() *delta { return d.cloneRange(nil, nil) }

// cloneRange is clone of the entries whose keys are in [lo, hi) (nil:
// unbounded): a scan of a prefix copies and sorts those alone, not the
// whole delta (a frontier's GetURLs scans hundreds of queues a call).
func (d *delta) cloneRange(lo, hi *Key) *delta {
	if lo == nil && hi == nil {
		c := &delta{ents: make([]deltaSlot, 0, d.n), arena: d.arena}
		if d.cols != nil {
			c.cols = make([]Cols, 0, d.n)
		}
		if d.vals != nil {
			c.vals = make([]deltaVal, 0, d.n)
		}
		return d.cloneInto(c, lo, hi)
	}
	c := &delta{arena: d.arena}
	if !d.mayHoldRange(lo, hi) {
		return c
	}
	return d.cloneInto(c, lo, hi)
}

// maxBitsRange is the widest range of leading bits whose bitset words
// mayHoldRange reads (a prefix of 22 bits or more is one bit).
const maxBitsRange = 1 << 12

// mayHoldRange reports whether the delta may hold a key in [lo, hi): the
// bitset of its keys' leading bits answers a narrow range without the
// pass over every entry (a frontier's GetURLs scans hundreds of queues a
// call, most of them with nothing in the delta).
func (d *delta) mayHoldRange(lo, hi *Key) bool {
	if d.n == 0 {
		return false
	}
	if lo == nil || hi == nil || d.bits == nil {
		return true
	}
	// hi is excluded; its leading bits are included, which may only
	// answer "maybe" more often.
	a, b := leading(lo, deltaBits), leading(hi, deltaBits)
	if b < a || b-a > maxBitsRange {
		return true
	}
	for x := a; x <= b; x++ {
		if d.bits[x/64]&(1<<(x%64)) != 0 {
			return true
		}
	}
	return false
}

func (d *delta) cloneInto(c *delta, lo, hi *Key) *delta {
	// The keys' leading 8 bytes rule most entries out of a range.
	lead, end := uint64(0), uint64(math.MaxUint64)
	if lo != nil {
		lead = binary.BigEndian.Uint64(lo[:8])
	}
	if hi != nil {
		end = binary.BigEndian.Uint64(hi[:8])
	}
	for i := range d.ents {
		e := &d.ents[i]
		if e.state&slotHeld == 0 {
			continue
		}
		if x := binary.BigEndian.Uint64(e.k[:8]); x < lead || x > end ||
			lo != nil && compareKeys(e.k, *lo) < 0 || hi != nil && compareKeys(e.k, *hi) >= 0 {
			continue
		}
		c.ents = append(c.ents, *e)
		if d.cols != nil {
			c.cols = append(c.cols, d.cols[i])
		}
		if d.vals != nil {
			c.vals = append(c.vals, d.vals[i])
		}
	}
	c.n = len(c.ents)
	for _, f := range d.files {
		f.acquire()
	}
	c.files = slices.Clone(d.files)
	return c
}

// ranges returns the range of the delta's columns and whether any of its
// rows has a value.
func (d *delta) ranges() (colRange, bool) {
	var r colRange
	values := false
	if d.cols == nil && d.vals == nil {
		return r, false
	}
	for i := range d.ents {
		if d.ents[i].state&(slotHeld|slotRow) != slotHeld|slotRow {
			continue
		}
		if d.cols != nil {
			r.add(&d.cols[i])
		}
		if d.vals != nil {
			x := &d.vals[i]
			values = values || x.vn > 0 || x.vf != nil
		}
	}
	return r, values
}

// arenaChunk is the size of an arena's chunks (a larger value has a chunk
// of its own).
const arenaChunk = 1 << 20

// An arena holds a delta's values in chunks that never move: a value is
// at chunk off>>32, byte off&(1<<32-1). The chunks' slice headers are
// never rewritten (used counts the last one's bytes), so that a clone
// (which copies the arena) reads the values it holds while the delta adds
// more.
type arena struct {
	chunks [][]byte
	used   int
}

// add copies b (not empty) into the arena and returns its offset.
func (a *arena) add(b []byte) uint64 {
	if len(a.chunks) == 0 || a.used+len(b) > len(a.chunks[len(a.chunks)-1]) {
		a.chunks = append(a.chunks, make([]byte, max(arenaChunk, len(b))))
		a.used = 0
	}
	off := uint64(len(a.chunks)-1)<<32 | uint64(a.used)
	a.used += copy(a.chunks[len(a.chunks)-1][a.used:], b)
	return off
}

// at returns the n bytes at off, which add returned.
func (a *arena) at(off uint64, n uint32) []byte {
	c, o := a.chunks[off>>32], off&(1<<32-1)
	return c[o : o+uint64(n) : o+uint64(n)]
}

// bytes returns the bytes the arena holds, its unused tail included.
func (a *arena) bytes() int64 {
	var n int64
	for _, c := range a.chunks {
		n += int64(len(c))
	}
	return n
}
