package keytable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/urlhash/urlhash/index/internal/valuefile"
)

// A fileWriter writes a key file (version 2) in one pass over its rows in
// ascending key order, and its tombstones in ascending order (a key may
// have both: written over an older row). The tombstones are held in memory
// until the rows are written (an open file holds them in memory too): a
// merge's as references to its inputs' (refTombstones), which stay open
// until the file is written, 8 bytes each where a key takes 32. Before
// references, the merge that moved a drained frontier's tombstones held a
// copy of them grown by doubling, beside the inputs' own. The values of
// the rows go to a value file writer, in the same order.
type fileWriter struct {
	w       io.WriterAt
	h       fileHeader
	buckets []uint32
	nb      uint64 // buckets filled
	fps     []byte
	bw      *sectionWriter
	page    []byte // the rows of the page being filled
	pageN   uint64 // its rows
	pageNo  uint64
	dels    []byte
	// refs are the tombstones by reference (refTombstones), each a
	// source's position << 32 | the tombstone's number there; deadKey
	// resolves one.
	refs    []uint64
	deadKey func(pos, i int) *Key
	prev    Key
	vw      *valuefile.Writer
	err     error
}

// newFileWriter returns a writer of a key file of the layout lay to w.
// maxRows is the number of rows expected, or more: it sizes the bucket
// array, which the rows fill as they are written. vw (nil: the file has no
// values) takes the rows' values; pair is the value file's pairing number.
func newFileWriter(w io.WriterAt, maxRows uint64, lay layout, vw *valuefile.Writer, pair uint64) *fileWriter {
	if vw == nil {
		lay.width[nCols] = 0
		lay.setOffsets()
		pair = 0
	}
	fw := &fileWriter{w: w, vw: vw}
	fw.h = fileHeader{version: fileVersion, bits: bucketBitsFor(maxRows), pageShift: defaultPageShift, lay: lay, pair: pair}
	fw.buckets = make([]uint32, (1<<fw.h.bits)+1)
	fw.fps = make([]byte, 0, min(maxRows, 1<<24))
	fw.bw = &sectionWriter{w: w, off: headerSize, buf: make([]byte, 0, 1<<16)}
	fw.page = make([]byte, 0, int(fw.h.pageRows())*lay.rw+4)
	return fw
}

// add writes a row: k, its columns c (which the layout must hold) and,
// when value is not empty, its value.
func (fw *fileWriter) add(k *Key, c *Cols, value []byte) error {
	return fw.addRow(k, c, value, 0)
}

// addRef writes a row whose value is already in the value file (a block
// copied there), ordinal ord.
func (fw *fileWriter) addRef(k *Key, c *Cols, ord uint32) error {
	return fw.addRow(k, c, nil, ord+1)
}

func (fw *fileWriter) addRow(k *Key, c *Cols, value []byte, ref uint32) error {
	if fw.err != nil {
		return fw.err
	}
	h := &fw.h
	if h.count > 0 && bytes.Compare(k[:], fw.prev[:]) <= 0 {
		fw.err = fmt.Errorf("keytable: keys out of order writing a file (%x after %x)", k[:], fw.prev[:])
		return fw.err
	}
	if h.count+1 > maxFileEntries {
		fw.err = fmt.Errorf("keytable: %d keys: too many for one file", h.count+1)
		return fw.err
	}
	if !h.lay.fits(c) {
		fw.err = fmt.Errorf("keytable: the columns %+v of %x are outside the file's", *c, k[:])
		return fw.err
	}
	switch {
	case ref != 0:
		if fw.vw == nil {
			fw.err = fmt.Errorf("keytable: a value for %x in a file without values", k[:])
			return fw.err
		}
		h.values++
	case len(value) > 0:
		if fw.vw == nil {
			fw.err = fmt.Errorf("keytable: a value for %x in a file without values", k[:])
			return fw.err
		}
		ord, err := fw.vw.Add(value)
		if err != nil {
			fw.err = err
			return err
		}
		ref = ord + 1
		h.values++
	}
	b := leading(k, h.bits)
	for fw.nb <= uint64(b) { // buckets up to b start at or after this row
		fw.buckets[fw.nb] = uint32(h.count)
		fw.nb++
	}
	fw.fps = append(fw.fps, fingerprint(k))
	n := len(fw.page)
	fw.page = fw.page[:n+h.lay.rw]
	h.lay.putRow(fw.page[n:], k, c, ref)
	fw.pageN++
	fw.prev = *k
	h.count++
	if fw.pageN == h.pageRows() {
		fw.flushPage()
	}
	return fw.err
}

// flushPage writes the rows of the page being filled and its checksum.
func (fw *fileWriter) flushPage() {
	if fw.pageN == 0 || fw.err != nil {
		return
	}
	fw.page = binary.LittleEndian.AppendUint32(fw.page, pageSum(fw.pageNo, fw.page))
	fw.err = fw.bw.write(fw.page)
	fw.page = fw.page[:0]
	fw.pageN = 0
	fw.pageNo++
}

// tombstone adds a tombstone of k.
func (fw *fileWriter) tombstone(k *Key) error {
	if fw.deadKey != nil && fw.err == nil {
		fw.err = errors.New("keytable: a tombstone by key to a writer of references")
	}
	if fw.checkTombstone(k) != nil {
		return fw.err
	}
	fw.dels = append(fw.dels, k[:]...)
	return nil
}

// refTombstones makes the writer take its tombstones by reference
// (tombstoneAt), at most n of them, each resolved to its key by deadKey,
// which must answer until finish returns.
func (fw *fileWriter) refTombstones(n int, deadKey func(pos, i int) *Key) {
	fw.refs = make([]uint64, 0, n)
	fw.deadKey = deadKey
}

// tombstoneAt adds a tombstone of the key deadKey(pos, i) (see
// refTombstones).
func (fw *fileWriter) tombstoneAt(pos, i int) error {
	if fw.deadKey == nil {
		if fw.err == nil {
			fw.err = errors.New("keytable: a tombstone by reference to a writer of keys")
		}
		return fw.err
	}
	if fw.checkTombstone(fw.deadKey(pos, i)) != nil {
		return fw.err
	}
	fw.refs = append(fw.refs, uint64(pos)<<32|uint64(i))
	return nil
}

// checkTombstone fails the writer unless k may follow the tombstones
// added.
func (fw *fileWriter) checkTombstone(k *Key) error {
	if fw.err != nil {
		return fw.err
	}
	n := fw.deadLen()
	if n > 0 {
		if prev := fw.deadAt(n - 1); bytes.Compare(k[:], prev[:]) <= 0 {
			fw.err = fmt.Errorf("keytable: tombstones out of order writing a file (%x after %x)", k[:], prev[:])
			return fw.err
		}
	}
	if uint64(n)+1 > maxFileEntries {
		fw.err = fmt.Errorf("keytable: too many tombstones for one file")
	}
	return fw.err
}

// deadLen returns the number of tombstones added.
func (fw *fileWriter) deadLen() int {
	if fw.deadKey != nil {
		return len(fw.refs)
	}
	return len(fw.dels) / KeySize
}

// deadAt returns tombstone n.
func (fw *fileWriter) deadAt(n int) *Key {
	if fw.deadKey != nil {
		r := fw.refs[n]
		return fw.deadKey(int(r>>32), int(uint32(r)))
	}
	return (*Key)(fw.dels[n*KeySize : (n+1)*KeySize])
}

// finish writes the tombstones, the bucket array and the header, and
// returns the header and the rows' fingerprints (see keyFile.fp). It does
// not sync.
func (fw *fileWriter) finish() (fileHeader, []byte, error) {
	fw.flushPage()
	if fw.err != nil {
		return fw.h, nil, fw.err
	}
	h := &fw.h
	if h.values == 0 {
		// Every value dropped: the rows refer to none (the caller
		// removes the empty value file).
		h.pair = 0
	}
	for ; fw.nb < uint64(len(fw.buckets)); fw.nb++ {
		fw.buckets[fw.nb] = uint32(h.count)
	}
	h.deleted = uint64(fw.deadLen())
	for n := range fw.deadLen() {
		k := fw.deadAt(n)
		h.tombCRC = crc32.Update(h.tombCRC, castagnoli, k[:])
		if err := fw.bw.write(k[:]); err != nil {
			return *h, nil, err
		}
	}
	bb := make([]byte, 0, 4*len(fw.buckets))
	for _, o := range fw.buckets {
		bb = binary.LittleEndian.AppendUint32(bb, o)
	}
	h.indexCRC = h.indexSum(h.appendTo(nil), bb)
	if err := fw.bw.write(bb); err != nil {
		return *h, nil, err
	}
	if err := fw.bw.flush(); err != nil {
		return *h, nil, err
	}
	_, err := fw.w.WriteAt(h.appendTo(nil), 0)
	return *h, fw.fps, err
}

type sectionWriter struct {
	w   io.WriterAt
	off int64
	buf []byte
}

func (s *sectionWriter) write(p []byte) error {
	if len(s.buf)+len(p) > cap(s.buf) {
		if err := s.flush(); err != nil {
			return err
		}
	}
	if len(p) > cap(s.buf) {
		_, err := s.w.WriteAt(p, s.off)
		s.off += int64(len(p))
		return err
	}
	s.buf = append(s.buf, p...)
	return nil
}

func (s *sectionWriter) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.w.WriteAt(s.buf, s.off)
	s.off += int64(len(s.buf))
	s.buf = s.buf[:0]
	return err
}
