package keytable

import (
	"bytes"
	"encoding/binary"

	"github.com/urlhash/urlhash/store"
)

// ScanOptions says what ScanEntries yields.
type ScanOptions struct {
	// Values reads each entry's value (from its value file, in order:
	// each block once). Default false.
	Values bool
	// Expired yields the records expired by the clock too (Entry.Expired
	// set): the records Len counts. Default false.
	Expired bool
}

// Scan calls fn with each live key that starts with the first bits bits
// of prefix, in key order, until fn returns an error. It sees the table as
// it was when it started, and holds no lock writers wait for.
func (t *Table) Scan(prefix []byte, bits int, fn func(k *Key) error) error {
	return t.ScanEntries(prefix, bits, ScanOptions{}, func(e *Entry) error { return fn(&e.Key) })
}

// ScanEntries calls fn with each live entry (and, with o.Expired, each
// expired record) whose key starts with the first bits bits of prefix, in
// key order, until fn returns an error. e is valid until fn returns. It
// sees the table as it was when it started, and holds no lock writers
// wait for.
func (t *Table) ScanEntries(prefix []byte, bits int, o ScanOptions, fn func(e *Entry) error) error {
	lo, hi := prefixRange(prefix, bits)
	p, err := t.pin(&lo, hi)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.ScanEntries(prefix, bits, o, fn)
}

// A Pinned is the table as it was at one moment, for scans that must see
// the same entries (a backup's passes). It keeps its files open and a
// copy of the delta in memory until Release.
type Pinned struct {
	t      *Table
	deltas []*delta
	files  []*keyFile // newest first
	done   bool
}

// Pin returns the table as it is now.
func (t *Table) Pin() (*Pinned, error) { return t.pin(nil, nil) }

// pin is Pin of the keys in [lo, hi) (nil: unbounded): the deltas' other
// entries are left out, so the Pinned must be scanned within the range.
func (t *Table) pin(lo, hi *Key) (*Pinned, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return nil, store.ErrClosed
	}
	// The delta changes under writers: a copy of it. The frozen one does
	// not, but the merge drops it: counted, as the files are.
	p := t.pinFilesLocked()
	p.deltas = []*delta{t.delta.cloneRange(lo, hi)}
	if t.frozen != nil {
		p.deltas = append(p.deltas, t.frozen.cloneRange(lo, hi))
	}
	return p, nil
}

// pinFilesLocked returns a Pinned of the table's files alone, newest
// first. The caller holds mu.
func (t *Table) pinFilesLocked() *Pinned {
	p := &Pinned{t: t}
	for i := len(t.files) - 1; i >= 0; i-- {
		t.files[i].acquire()
		p.files = append(p.files, t.files[i])
	}
	t.readers.Add(1)
	return p
}

// Leads calls fn with the leading 8 bytes of the key of every row the
// table holds, in no order, until fn returns false; it may also yield
// rows the table no longer holds (deleted, expired, replaced), so what it
// yields is a superset (a filter's). It copies the deltas' leads, 8 bytes
// a key (a scan copies a delta's entries, 40 bytes and 24 more with
// times: at a filter's growth the largest transient of a revisiting
// server), then reads the files' keys in file order, holding no lock
// writers wait for.
func (t *Table) Leads(fn func(lead uint64) bool) error {
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return store.ErrClosed
	}
	deltas := []*delta{t.delta, t.frozen}
	n := 0
	for _, d := range deltas {
		if d != nil {
			n += d.len()
		}
	}
	leads := make([]uint64, 0, n)
	for _, d := range deltas {
		if d == nil {
			continue
		}
		for i := range d.ents {
			if st := d.ents[i].state; st&slotHeld != 0 && st&slotRow != 0 {
				leads = append(leads, binary.BigEndian.Uint64(d.ents[i].k[:8]))
			}
		}
	}
	p := t.pinFilesLocked()
	t.mu.RUnlock()
	defer p.Release()
	for _, l := range leads {
		if !fn(l) {
			return nil
		}
	}
	for _, f := range p.files {
		w := &keyWindow{f: f}
		for i := range int(f.hdr.count) {
			row := w.at(i)
			if row == nil {
				return w.err
			}
			if !fn(binary.BigEndian.Uint64(row[:8])) {
				return nil
			}
		}
	}
	return nil
}

// Release lets the pinned files and delta go. Releasing twice does
// nothing.
func (p *Pinned) Release() {
	if p.done {
		return
	}
	p.done = true
	for _, d := range p.deltas {
		d.release()
	}
	for _, f := range p.files {
		f.release()
	}
	p.t.readers.Done()
}

// ScanEntries is Table.ScanEntries over the pinned table.
func (p *Pinned) ScanEntries(prefix []byte, bits int, o ScanOptions, fn func(e *Entry) error) error {
	t := p.t
	var srcs []*source
	for _, d := range p.deltas {
		srcs = append(srcs, deltaSource(d))
	}
	for _, f := range p.files {
		srcs = append(srcs, fileSource(f))
	}
	now := t.now()
	lo, hi := prefixRange(prefix, bits)
	for _, s := range srcs {
		s.di = lowerBound(s.deadKey, s.nDead, &lo)
		if hi != nil {
			s.nDead = lowerBound(s.deadKey, s.nDead, hi)
		}
		if s.win == nil {
			s.li = lowerBound(s.key, s.nLive, &lo)
			if hi != nil {
				s.nLive = lowerBound(s.key, s.nLive, hi)
			}
			continue
		}
		// A file's rows are read in order: its buckets give the bounds
		// to a bucket, and a walk through it the rest. A short range is
		// read at once, not a window of windowKeys rows.
		if hi != nil {
			first, _ := s.f.bucket(&lo)
			_, end := s.f.bucket(hi)
			s.win.span = min(max(end-first, 1), windowKeys)
		}
		s.li = s.win.lowerBound(&lo)
		if hi != nil {
			s.nLive = s.win.lowerBound(hi)
		}
		if err := s.err(); err != nil {
			return err
		}
	}
	var err error
	var vw *valueWindow
	if o.Values {
		vw = newValueWindow(func(e *Entry, _ dval) error { return fn(e) })
	}
	var e Entry
	if rerr := mergeSources(srcs, true, func(k *Key, src *source, i int, _ *source, _ int) bool {
		if src == nil {
			return true
		}
		var c Cols
		if src.hasCols() {
			c = src.cols(i)
		}
		x := expired(c.Expires, now)
		if x && !o.Expired {
			return true
		}
		e = Entry{Key: *k, Cols: c, Expired: x}
		var v dval
		if src.hasCols() {
			v = src.val(i)
		}
		e.HasValue = v.has()
		if vw != nil {
			err = vw.add(&e, v, e.HasValue)
		} else {
			err = fn(&e)
		}
		return err == nil
	}); rerr != nil {
		return rerr
	}
	if err == nil && vw != nil {
		err = vw.flush()
	}
	return err
}

// prefixRange returns the keys [lo, hi) starting with the first bits bits
// of prefix (hi nil: no upper bound).
func prefixRange(prefix []byte, bits int) (lo Key, hi *Key) {
	nb := (bits + 7) / 8
	copy(lo[:], prefix[:nb])
	if bits%8 != 0 {
		lo[nb-1] &= byte(0xff) << (8 - bits%8)
	}
	h := lo
	// Increment the prefix at its last bit.
	for i := nb - 1; i >= 0; i-- {
		step := byte(1)
		if i == nb-1 && bits%8 != 0 {
			step = 1 << (8 - bits%8)
		}
		s := h[i] + step
		carry := s < h[i]
		h[i] = s
		if !carry {
			return lo, &h
		}
	}
	return lo, nil
}

// lowerBound returns the index of the first row of the file not less than
// k (reading its bucket).
func (w *keyWindow) lowerBound(k *Key) int {
	i, hi := w.f.bucket(k)
	for ; i < hi; i++ {
		e := w.at(i)
		if e == nil || bytes.Compare(e[:KeySize], k[:]) >= 0 {
			break
		}
	}
	return i
}

func lowerBound(at func(int) *Key, n int, k *Key) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(at(m)[:], k[:]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
