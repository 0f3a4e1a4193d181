package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Load's external sort. The input is gathered in chunks within
// Options.LoadMemory (two chunks: one filling while the other is sorted
// and written), each chunk sorted and de-duplicated (the first of
// repeated keys wins) and, when the input outgrows one chunk, written to a
// run file; the last chunk stays in memory. The merge reads every run in
// key order, the earliest run winning a key several hold.

// Run files are named loadRunPrefix+random+loadRunSuffix in the index
// directory: on the same disk as the index, under the free-space gate,
// and removed by a writable Open when a crash left them.
const (
	loadRunPrefix = "urlhash.load-"
	loadRunSuffix = ".run"
)

// DefaultLoadMemory is the default Options.LoadMemory (256 MiB): with
// Badger's caches, the filter and the StreamWriter's tables, the CLI's
// import of 30 million hashes peaked at 778 MiB resident (go run
// ./bench/scale, its default Go memory limit of 768 MiB).
const DefaultLoadMemory = 256 << 20

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

// badgerKey appends r's Badger key to b.
func (r *richEntry) badgerKey(b []byte) []byte {
	if r.isFull() {
		return append(append(b, tagFull), r.hash[:]...)
	}
	return append(append(b, tagPrefix), r.hash[:r.n]...)
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
func (c *chunk) add(e *store.Entry, limit int) {
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
	// The load value: the expiry (Badger's, not in the encoded value),
	// then the encoded value; loadPart.add takes it apart.
	off := len(c.vals)
	c.vals = binary.BigEndian.AppendUint64(c.vals, expiresAt(&e.Value))
	c.vals = appendValue(c.vals, e.Value)
	c.rich = append(c.rich, richEntry{hash: e.Hash, n: n, pos: len(c.keys), off: off, vlen: len(c.vals) - off})
}

// sort sorts and de-duplicates the chunk, the first of repeated keys
// winning, and leaves keys and rich with no key in common.
func (c *chunk) sort() {
	// Rich entries: stable, so the first of equal keys stays first.
	slices.SortStableFunc(c.rich, compareRich)
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
	c.cost = int64(len(c.keys)) * entryCostOf(hashkey.Size, 0)
	for i := range c.rich {
		if c.rich[i].isFull() {
			c.full++
		}
		c.cost += entryCostOf(c.rich[i].n, c.rich[i].vlen)
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

// A sorter gathers a load's entries into sorted runs.
type sorter struct {
	dir   string
	limit int // bytes per chunk; 0: one chunk, never spilled
	room  func(int64) error

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

// newSorter returns a sorter that spills to dir within budget bytes (an
// empty dir: never spill).
func newSorter(dir string, budget int64, room func(int64) error) *sorter {
	s := &sorter{dir: dir, room: room, cur: &chunk{}}
	if dir != "" {
		s.limit = int(max(budget/2, 4096))
	}
	return s
}

func (s *sorter) add(e *store.Entry) error {
	if !e.Value.Expires.IsZero() {
		s.expiring = true
	}
	s.cur.add(e, s.limit)
	if s.limit > 0 && s.cur.used() >= s.limit {
		return s.spill()
	}
	return nil
}

// spill hands the current chunk to a goroutine that sorts it and writes
// it to a run file, after waiting for the previous one, whose chunk is
// filled next.
func (s *sorter) spill() error {
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
func (s *sorter) wait() (*chunk, error) {
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

// finish waits for the spills and sorts the last chunk. When the input
// spilled, the last chunk is written too: the merge then holds no chunk,
// and its memory goes to the filter and Badger's table builders, which
// grow while the merge runs.
func (s *sorter) finish() error {
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
	c.sort()
	s.full += c.full
	s.cost += c.cost
	s.last = c
	return nil
}

// close waits for a spill in flight and removes the run files.
func (s *sorter) close() {
	s.wait()
	for _, r := range s.runs {
		r.remove()
	}
	s.runs = nil
}

// Run file layout: runMagic, then the number of key-only entries, the
// number of other entries and the byte length of their records (three
// uint64, big-endian), the 32-byte keys, and the records: key length
// (byte), key, uvarint value length, encoded value. Both parts are in key
// order.
const runMagic = "uhrun\x00\x00\x01"

const runHeaderLen = len(runMagic) + 3*8

type runFile struct {
	f           *os.File
	keys, nrich int64
	richOff     int64
	richLen     int64
}

func (r *runFile) remove() {
	name := r.f.Name()
	r.f.Close()
	os.Remove(name)
}

// writeRun sorts c and writes it to a new run file.
func (s *sorter) writeRun(c *chunk) (*runFile, error) {
	c.sort()
	var richLen int64
	for i := range c.rich {
		r := &c.rich[i]
		richLen += int64(1 + r.n + uvarintLen(uint64(r.vlen)) + r.vlen)
	}
	size := int64(runHeaderLen) + int64(len(c.keys))*hashkey.Size + richLen
	if err := s.room(size); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.dir, loadRunPrefix+"*"+loadRunSuffix)
	if err != nil {
		return nil, fmt.Errorf("index: load: %w", err)
	}
	run := &runFile{f: f, keys: int64(len(c.keys)), nrich: int64(len(c.rich)),
		richOff: int64(runHeaderLen) + int64(len(c.keys))*hashkey.Size, richLen: richLen}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(runMagic)
	var hdr [24]byte
	binary.BigEndian.PutUint64(hdr[:], uint64(run.keys))
	binary.BigEndian.PutUint64(hdr[8:], uint64(run.nrich))
	binary.BigEndian.PutUint64(hdr[16:], uint64(richLen))
	w.Write(hdr[:])
	for i := range c.keys {
		w.Write(c.keys[i][:])
	}
	var rec []byte
	for i := range c.rich {
		r := &c.rich[i]
		rec = append(rec[:0], byte(r.n))
		rec = append(rec, r.hash[:r.n]...)
		rec = binary.AppendUvarint(rec, uint64(r.vlen))
		rec = append(rec, c.vals[r.off:r.off+r.vlen]...)
		w.Write(rec)
	}
	if err := w.Flush(); err != nil {
		return run, fmt.Errorf("index: load: write %s: %w", f.Name(), err)
	}
	return run, nil
}

// removeLoadRuns removes the run files a load killed by a crash left in
// dir. Only a writable Open calls it, holding the directory's lock, so no
// load of another process is using them.
func removeLoadRuns(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("index: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(name, loadRunPrefix) && strings.HasSuffix(name, loadRunSuffix) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("index: remove a load's leftover: %w", err)
			}
		}
	}
	return nil
}

// A cursor reads one sorted part (keys, or rich entries) of a run or of
// the chunk kept in memory.
type cursor struct {
	run  int // earlier runs win a key several hold
	key  []byte
	val  []byte
	kbuf [1 + hashkey.Size]byte

	// in memory
	keys []hashkey.Hash
	c    *chunk
	i    int
	// in a file
	r    *bufio.Reader
	rich bool
	left int64
	name string
}

// next moves to the next entry and reports whether there is one.
func (c *cursor) next() (bool, error) {
	switch {
	case c.keys != nil:
		if c.i == len(c.keys) {
			return false, nil
		}
		c.kbuf[0] = tagFull
		copy(c.kbuf[1:], c.keys[c.i][:])
		c.key = c.kbuf[:]
		c.val = c.val[:0]
		c.i++
		return true, nil
	case c.c != nil:
		if c.i == len(c.c.rich) {
			return false, nil
		}
		r := &c.c.rich[c.i]
		c.key = r.badgerKey(c.kbuf[:0])
		c.val = c.c.vals[r.off : r.off+r.vlen]
		c.i++
		return true, nil
	}
	if c.left == 0 {
		return false, nil
	}
	c.left--
	if !c.rich {
		c.kbuf[0] = tagFull
		c.key = c.kbuf[:]
		if _, err := io.ReadFull(c.r, c.key[1:]); err != nil {
			return false, c.readErr(err)
		}
		return true, nil
	}
	n, err := c.r.ReadByte()
	if err != nil {
		return false, c.readErr(err)
	}
	if n < store.MinPrefixEntryLen || n > hashkey.Size {
		return false, c.readErr(errors.New("bad record"))
	}
	tag := byte(tagPrefix)
	if n == hashkey.Size {
		tag = tagFull
	}
	c.kbuf[0] = tag
	c.key = c.kbuf[:1+int(n)]
	if _, err := io.ReadFull(c.r, c.key[1:]); err != nil {
		return false, c.readErr(err)
	}
	vlen, err := binary.ReadUvarint(c.r)
	if err != nil || vlen > 1<<32 {
		return false, c.readErr(errors.New("bad record"))
	}
	c.val = slices.Grow(c.val[:0], int(vlen))[:vlen]
	if _, err := io.ReadFull(c.r, c.val); err != nil {
		return false, c.readErr(err)
	}
	return true, nil
}

func (c *cursor) readErr(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("index: load: read %s: %w", c.name, err)
}

// A merger yields the unique keys of every run in key order.
type merger struct {
	h        []*cursor // a heap: least key, then earliest run, first
	key, val []byte
}

// merge returns a merger over the runs and the chunk in memory.
func (s *sorter) merge() (*merger, error) {
	m := &merger{}
	push := func(c *cursor) error {
		ok, err := c.next()
		if ok {
			m.h = append(m.h, c)
		}
		return err
	}
	for i, r := range s.runs {
		if r.keys > 0 {
			c := &cursor{run: i, r: bufio.NewReaderSize(io.NewSectionReader(r.f, int64(runHeaderLen), r.keys*hashkey.Size), 256<<10),
				left: r.keys, name: r.f.Name()}
			if err := push(c); err != nil {
				return nil, err
			}
		}
		if r.nrich > 0 {
			c := &cursor{run: i, r: bufio.NewReaderSize(io.NewSectionReader(r.f, r.richOff, r.richLen), 64<<10),
				rich: true, left: r.nrich, name: r.f.Name()}
			if err := push(c); err != nil {
				return nil, err
			}
		}
	}
	if len(s.last.keys) > 0 {
		push(&cursor{run: len(s.runs), keys: s.last.keys})
	}
	if len(s.last.rich) > 0 {
		push(&cursor{run: len(s.runs), c: s.last})
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *merger) less(i, j int) bool {
	if c := bytes.Compare(m.h[i].key, m.h[j].key); c != 0 {
		return c < 0
	}
	return m.h[i].run < m.h[j].run
}

func (m *merger) down(i int) {
	n := len(m.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && m.less(r, l) {
			j = r
		}
		if !m.less(j, i) {
			return
		}
		m.h[i], m.h[j] = m.h[j], m.h[i]
		i = j
	}
}

// advance moves the least cursor on.
func (m *merger) advance() error {
	ok, err := m.h[0].next()
	if err != nil {
		return err
	}
	if !ok {
		last := len(m.h) - 1
		m.h[0] = m.h[last]
		m.h = m.h[:last]
	}
	if len(m.h) > 0 {
		m.down(0)
	}
	return nil
}

// next returns the next key and its encoded value (valid until the next
// call), or ok false at the end.
func (m *merger) next() (key, val []byte, ok bool, err error) {
	if len(m.h) == 0 {
		return nil, nil, false, nil
	}
	top := m.h[0]
	m.key = append(m.key[:0], top.key...)
	m.val = append(m.val[:0], top.val...)
	for {
		if err := m.advance(); err != nil {
			return nil, nil, false, err
		}
		if len(m.h) == 0 || !bytes.Equal(m.h[0].key, m.key) {
			break
		}
	}
	return m.key, m.val, true, nil
}
