package extsort

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

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
func (s *Sorter) writeRun(c *chunk) (*runFile, error) {
	c.sort(&s.cfg)
	var richLen int64
	var vb [binary.MaxVarintLen64]byte
	for i := range c.rich {
		r := &c.rich[i]
		richLen += int64(1 + int(r.n) + binary.PutUvarint(vb[:], uint64(r.vlen)) + int(r.vlen))
	}
	size := int64(runHeaderLen) + int64(len(c.keys))*hashkey.Size + richLen
	if err := s.cfg.Room(size); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.cfg.Dir, RunPrefix+"*"+RunSuffix)
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
		rec = append(rec[:0], r.n)
		rec = append(rec, r.hash[:r.n]...)
		rec = binary.AppendUvarint(rec, uint64(r.vlen))
		rec = append(rec, r.value(c.vals)...)
		w.Write(rec)
	}
	if err := w.Flush(); err != nil {
		return run, fmt.Errorf("index: load: write %s: %w", f.Name(), err)
	}
	return run, nil
}

// RemoveRuns removes the run files a sort killed by a crash left in dir.
// Only a writable Open calls it, holding the directory's lock, so no
// load of another process is using them.
func RemoveRuns(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("index: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(name, RunPrefix) && strings.HasSuffix(name, RunSuffix) {
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
	cfg  *Config
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
		c.kbuf[0] = c.cfg.FullTag
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
		c.key = r.appendKey(c.kbuf[:0], c.cfg)
		c.val = r.value(c.c.vals)
		c.i++
		return true, nil
	}
	if c.left == 0 {
		return false, nil
	}
	c.left--
	if !c.rich {
		c.kbuf[0] = c.cfg.FullTag
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
	tag := c.cfg.PrefixTag
	if n == hashkey.Size {
		tag = c.cfg.FullTag
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

// A Merger yields the unique keys of every run in key order.
type Merger struct {
	h        []*cursor // a heap: least key, then earliest run, first
	key, val []byte
}

// Merge returns, after Finish, a merger over the runs and the chunk in
// memory: every key once, the entry added first winning a key added more
// than once.
func (s *Sorter) Merge() (*Merger, error) {
	m := &Merger{}
	push := func(c *cursor) error {
		ok, err := c.next()
		if ok {
			m.h = append(m.h, c)
		}
		return err
	}
	for i, r := range s.runs {
		if r.keys > 0 {
			c := &cursor{cfg: &s.cfg, run: i, r: bufio.NewReaderSize(io.NewSectionReader(r.f, int64(runHeaderLen), r.keys*hashkey.Size), 256<<10),
				left: r.keys, name: r.f.Name()}
			if err := push(c); err != nil {
				return nil, err
			}
		}
		if r.nrich > 0 {
			c := &cursor{cfg: &s.cfg, run: i, r: bufio.NewReaderSize(io.NewSectionReader(r.f, r.richOff, r.richLen), 64<<10),
				rich: true, left: r.nrich, name: r.f.Name()}
			if err := push(c); err != nil {
				return nil, err
			}
		}
	}
	if len(s.last.keys) > 0 {
		push(&cursor{cfg: &s.cfg, run: len(s.runs), keys: s.last.keys})
	}
	if len(s.last.rich) > 0 {
		push(&cursor{cfg: &s.cfg, run: len(s.runs), c: s.last})
	}
	for i := len(m.h)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *Merger) less(i, j int) bool {
	if c := bytes.Compare(m.h[i].key, m.h[j].key); c != 0 {
		return c < 0
	}
	return m.h[i].run < m.h[j].run
}

func (m *Merger) down(i int) {
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
func (m *Merger) advance() error {
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

// Next returns the next key (Config's tag, then the hash or prefix) and
// its value (Config.AppendValue's bytes; empty for a key-only full entry),
// valid until the next call, or ok false at the end. A run file that
// cannot be read back is an error naming it.
func (m *Merger) Next() (key, val []byte, ok bool, err error) {
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
