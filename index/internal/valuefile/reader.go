package valuefile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sort"

	"github.com/klauspost/compress/zstd"
	"github.com/urlhash/urlhash/store"
)

// A Reader reads an open value file. Its methods are safe for concurrent
// use, except a Cursor's.
type Reader struct {
	r      io.ReaderAt
	name   string
	hdr    header
	dicts  [][]byte
	decs   []*zstd.Decoder // for dictionary i-1; decs[0]: none
	blocks []block
	cache  *Cache
	id     uint64 // the file's number in cache
}

// block is a block's index entry, with the ordinal of its first value.
type block struct {
	off          uint64
	clen, rawLen uint32
	first, count uint32
	dict         uint32 // number + 1 in Reader.dicts; 0: none; storedBlock: not compressed
}

// Open opens the value file of size bytes that r reads: it reads and
// checks the header, the block index and the dictionaries. name names the
// file in errors; c holds what open files share (decoded blocks,
// decoders).
func Open(r io.ReaderAt, size int64, name string, c *Cache) (*Reader, error) {
	var hb [HeaderSize]byte
	if size < HeaderSize {
		return nil, fmt.Errorf("%w: %s: %d bytes, shorter than a header", store.ErrCorrupt, name, size)
	}
	if err := ReadAt(r, hb[:], 0, name); err != nil {
		return nil, err
	}
	h, err := decodeHeader(hb[:], size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	vr := &Reader{r: r, name: name, hdr: h, cache: c}
	// The index and the dictionaries end the file, with one checksum.
	tail := make([]byte, uint64(size)-h.index)
	if err := ReadAt(r, tail, int64(h.index), name); err != nil {
		return nil, err
	}
	if len(tail) < 4 || crc32.Checksum(tail[:len(tail)-4], castagnoli) != binary.LittleEndian.Uint32(tail[len(tail)-4:]) {
		return nil, fmt.Errorf("%w: %s: block index checksum mismatch", store.ErrCorrupt, name)
	}
	p := tail[h.blocks*indexEntry : len(tail)-4]
	for range h.dicts {
		if len(p) < 4 || uint64(binary.LittleEndian.Uint32(p)) > uint64(len(p)-4) || binary.LittleEndian.Uint32(p) > maxDict {
			return nil, fmt.Errorf("%w: %s: dictionaries out of range", store.ErrCorrupt, name)
		}
		n := binary.LittleEndian.Uint32(p)
		vr.dicts = append(vr.dicts, p[4:4+n:4+n])
		p = p[4+n:]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w: %s: %d bytes after the dictionaries", store.ErrCorrupt, name, len(p))
	}
	// The checksum matched; still refuse an index that would read out of
	// bounds or overlap (a collision must not become a panic).
	vr.blocks = make([]block, h.blocks)
	next := uint64(HeaderSize)
	var first uint64
	for i := range vr.blocks {
		e := tail[i*indexEntry:]
		b := block{off: binary.LittleEndian.Uint64(e), clen: binary.LittleEndian.Uint32(e[8:]),
			rawLen: binary.LittleEndian.Uint32(e[12:]), count: binary.LittleEndian.Uint32(e[16:]),
			dict: binary.LittleEndian.Uint32(e[20:]), first: uint32(first)}
		if b.off != next || b.count == 0 || b.rawLen > maxBlock || uint64(b.count) > uint64(b.rawLen) ||
			b.off+uint64(b.clen)+4 > h.index || first+uint64(b.count) > h.values ||
			b.dict > h.dicts && (b.dict != storedBlock || h.version < versionStored || b.clen != b.rawLen) {
			return nil, fmt.Errorf("%w: %s: block %d's index entry out of range", store.ErrCorrupt, name, i)
		}
		next = b.off + uint64(b.clen) + 4
		first += uint64(b.count)
		vr.blocks[i] = b
	}
	if next != h.index || first != h.values {
		return nil, fmt.Errorf("%w: %s: the block index covers %d values to offset %d, the header says %d to %d",
			store.ErrCorrupt, name, first, next, h.values, h.index)
	}
	vr.decs = make([]*zstd.Decoder, len(vr.dicts)+1)
	for i := range vr.decs {
		var d []byte
		if i > 0 {
			d = vr.dicts[i-1]
		}
		if vr.decs[i], err = c.decoder(d); err != nil {
			return nil, fmt.Errorf("%w: %s: dictionary %d: %v", store.ErrCorrupt, name, i, err)
		}
	}
	vr.id = c.nextID.Add(1)
	return vr, nil
}

// Len returns the number of values.
func (r *Reader) Len() uint64 { return r.hdr.values }

// Blocks returns the number of blocks.
func (r *Reader) Blocks() int { return len(r.blocks) }

// StoredBlocks returns the number of blocks stored uncompressed
// (Options.Stored).
func (r *Reader) StoredBlocks() int {
	n := 0
	for i := range r.blocks {
		if r.blocks[i].dict == storedBlock {
			n++
		}
	}
	return n
}

// Pair returns the pairing number the file was written with
// (Options.Pair).
func (r *Reader) Pair() uint64 { return r.hdr.pair }

// Dict returns the dictionary of the file's last block that has one (nil:
// none), to pass to a Writer (Options.Dict). The caller must not change
// it.
func (r *Reader) Dict() []byte {
	for i := len(r.blocks) - 1; i >= 0; i-- {
		if d := r.blocks[i].dict; d != 0 && d != storedBlock {
			return r.dicts[d-1]
		}
	}
	return nil
}

// raw returns the decoded bytes of the file's blocks.
func (r *Reader) raw() int64 {
	var n int64
	for i := range r.blocks {
		n += int64(r.blocks[i].rawLen)
	}
	return n
}

// frame reads block i's frame and checksum into buf (grown if need be),
// and checks it.
func (r *Reader) frame(i int, buf []byte) ([]byte, error) {
	b := &r.blocks[i]
	n := int(b.clen) + 4
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if err := ReadAt(r.r, buf, int64(b.off), r.name); err != nil {
		return buf, err
	}
	if blockCRC(uint32(i), buf[:n-4]) != binary.LittleEndian.Uint32(buf[n-4:]) {
		return buf, fmt.Errorf("%w: %s: block %d (offset %d) checksum mismatch", store.ErrCorrupt, r.name, i, b.off)
	}
	return buf, nil
}

// Name returns the name the file was opened with.
func (r *Reader) Name() string { return r.name }

// blockOf returns the block that holds ordinal ord.
func (r *Reader) blockOf(ord uint32) (int, error) {
	if uint64(ord) >= r.hdr.values {
		return 0, fmt.Errorf("%w: %s: value %d of %d", store.ErrCorrupt, r.name, ord, r.hdr.values)
	}
	i := sort.Search(len(r.blocks), func(i int) bool { return r.blocks[i].first > ord }) - 1
	return i, nil
}

// Value appends the value of ordinal ord to dst, reading its block through
// the cache.
func (r *Reader) Value(ord uint32, dst []byte) ([]byte, error) {
	i, err := r.blockOf(ord)
	if err != nil {
		return dst, err
	}
	d := r.cache.get(r.id, uint32(i))
	if d == nil {
		if d, err = r.decode(i, nil, nil); err != nil {
			return dst, err
		}
		r.cache.put(r.id, uint32(i), d)
	}
	return append(dst, d.value(ord-r.blocks[i].first)...), nil
}

// decoded is a decoded block: its values' bytes and where each starts
// (offs[i]..offs[i+1]).
type decoded struct {
	buf  []byte // the decoded block
	data []byte // its values, in buf
	offs []uint32
}

func (d *decoded) value(j uint32) []byte { return d.data[d.offs[j]:d.offs[j+1]:d.offs[j+1]] }

func (d *decoded) size() int64 { return int64(cap(d.buf) + 4*cap(d.offs) + 64) }

// decode reads, checks and decodes block i into d (nil: a new one), with
// frame as a buffer to read into.
func (r *Reader) decode(i int, d *decoded, frame *[]byte) (*decoded, error) {
	b := &r.blocks[i]
	var fb []byte
	if frame != nil {
		fb = *frame
	}
	fb, err := r.frame(i, fb)
	if frame != nil {
		*frame = fb
	}
	if err != nil {
		return nil, err
	}
	if d == nil {
		d = &decoded{}
	}
	var out []byte
	switch {
	case b.dict == storedBlock && frame == nil:
		out = fb[: len(fb)-4 : len(fb)-4] // read into a buffer of its own
	case b.dict == storedBlock:
		out = append(d.buf[:0], fb[:len(fb)-4]...)
	default:
		if cap(d.buf) < int(b.rawLen) {
			d.buf = make([]byte, 0, b.rawLen)
		}
		out, err = r.decs[b.dict].DecodeAll(fb[:len(fb)-4], d.buf[:0])
	}
	if err != nil || len(out) != int(b.rawLen) {
		return nil, fmt.Errorf("%w: %s: block %d (offset %d) does not decode to its %d bytes: %v", store.ErrCorrupt, r.name, i, b.off, b.rawLen, err)
	}
	d.buf = out
	if err := d.parse(out, b.count); err != nil {
		return nil, fmt.Errorf("%w: %s: block %d: %v", store.ErrCorrupt, r.name, i, err)
	}
	return d, nil
}

// parse sets d to the decoded block out of count values.
func (d *decoded) parse(out []byte, count uint32) error {
	n, w := binary.Uvarint(out)
	if w <= 0 || n != uint64(count) || n > uint64(len(out)) {
		return fmt.Errorf("holds %d values, the index says %d", n, count)
	}
	p := out[w:]
	if cap(d.offs) < int(n)+1 {
		d.offs = make([]uint32, 0, n+1)
	}
	d.offs = d.offs[:0]
	var total uint64
	for range n {
		l, w := binary.Uvarint(p)
		if w <= 0 || l > uint64(len(out)) {
			return fmt.Errorf("bad value length")
		}
		d.offs = append(d.offs, uint32(total))
		total += l
		p = p[w:]
	}
	if total != uint64(len(p)) {
		return fmt.Errorf("value lengths add to %d, the block holds %d bytes", total, len(p))
	}
	d.offs = append(d.offs, uint32(total))
	d.data = p
	return nil
}

// A Cursor reads values in ascending ordinals, or in a few ascending
// runs at once (a merged file's values are the runs of the files it
// copied blocks from, and its own), keeping the last cursorBlocks blocks
// it decoded: each block is decoded once. It is not safe for concurrent
// use.
type Cursor struct {
	r     *Reader
	share bool // decoded blocks join the cache (NewSharingCursor)
	slots [cursorBlocks]cursorSlot
	tick  uint64
	frame []byte
}

// cursorBlocks is the number of decoded blocks a cursor keeps.
const cursorBlocks = 8

type cursorSlot struct {
	blk  int // -1: empty
	used uint64
	d    *decoded // own, or one the cache shares (read only)
	own  *decoded
}

// NewCursor returns a cursor on r.
func (r *Reader) NewCursor() *Cursor {
	c := &Cursor{r: r}
	for i := range c.slots {
		c.slots[i].blk = -1
	}
	return c
}

// NewSharingCursor returns a cursor on r whose decoded blocks join the
// cache, as Value's do: for batches of lookups (GetBatch), whose next
// batch reads mostly the same blocks again, where a scan (NewCursor)
// reads each block once and would only push the others out. Stored
// blocks (Options.Stored) it reads as NewCursor's do.
func (r *Reader) NewSharingCursor() *Cursor {
	c := r.NewCursor()
	c.share = r.cache.max > 0
	return c
}

// Value returns the value of ordinal ord, valid until the next call.
func (c *Cursor) Value(ord uint32) ([]byte, error) {
	c.tick++
	for i := range c.slots {
		s := &c.slots[i]
		if s.blk >= 0 {
			b := &c.r.blocks[s.blk]
			if ord >= b.first && ord-b.first < b.count {
				s.used = c.tick
				return s.d.value(ord - b.first), nil
			}
		}
	}
	i, err := c.r.blockOf(ord)
	if err != nil {
		return nil, err
	}
	s := &c.slots[0]
	for j := range c.slots {
		if c.slots[j].used < s.used {
			s = &c.slots[j]
		}
	}
	s.blk, s.used = -1, c.tick
	switch s.d = c.r.cache.get(c.r.id, uint32(i)); {
	case s.d != nil:
	case c.share && c.r.blocks[i].dict != storedBlock:
		// A block of its own, since the cache keeps it unchanged. A
		// stored block is read into the cursor's own instead: reading
		// it again costs a pread, and a new one for every block of a
		// batch of random reads (a frontier's records at 10M, which no
		// cache holds) cost an allocation of its size that the
		// collector then had to find.
		if s.d, err = c.r.decode(i, nil, &c.frame); err != nil {
			return nil, err
		}
		c.r.cache.put(c.r.id, uint32(i), s.d)
	default:
		if s.own, err = c.r.decode(i, s.own, &c.frame); err != nil {
			return nil, err
		}
		s.d = s.own
	}
	s.blk = i
	return s.d.value(ord - c.r.blocks[i].first), nil
}

// Verify reads, checks and decodes every block.
func (r *Reader) Verify() error {
	var d *decoded
	var frame []byte
	for i := range r.blocks {
		var err error
		if d, err = r.decode(i, d, &frame); err != nil {
			return err
		}
	}
	return nil
}

// ReadAt fills p from r at off: a short read is an error naming the file
// (name), wrapping io.ErrUnexpectedEOF or the reader's error, never a
// partial answer. The key table reads its key files with it too: the
// message reads as an *os.PathError's ("read NAME: ..."), the file's name
// saying which kind it is.
func ReadAt(r io.ReaderAt, p []byte, off int64, name string) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %s: %d bytes at %d: %w", name, len(p), off, err)
}
