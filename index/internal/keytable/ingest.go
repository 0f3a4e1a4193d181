package keytable

import (
	"fmt"
	"os"

	"github.com/urlhash/urlhash/store"
)

// IngestOptions describes the entries of an Ingest.
type IngestOptions struct {
	// Keys is about the number of entries (it sizes the bucket array).
	Keys uint64
	// First, Last and Expires are the ranges of the entries' times (Min 0:
	// none of them sets the column): a key file's columns are as wide as
	// its range needs (4 bytes for less than 136 years), set before its
	// first row. An entry outside is an error.
	First, Last, Expires ColRange
	// Values says whether entries may have values.
	Values bool
}

// ColRange is a range of times, in unix seconds.
type ColRange struct{ Min, Max int64 }

// An Ingest writes a bulk of entries, in ascending key order, straight
// into a new key file (and its value file), bypassing the delta and the
// log: a load's entries are written once. The caller guarantees that no
// other change runs until Commit or Abort (the index holds its exclusive
// lock). An entry replaces the key's record, live or expired (Put reports
// it).
type Ingest struct {
	t     *Table
	f     file
	name  string
	num   uint64
	fw    *fileWriter
	vo    *valueOut
	files []*keyFile // the files below, searched for the keys' records
	lb    *lookupBufs
	n     uint64
	prevs int64 // records replaced
}

// NewIngest starts an ingest of key-only entries, at most about hint of
// them (it sizes the bucket array).
func (t *Table) NewIngest(hint uint64) (*Ingest, error) {
	return t.NewIngestOf(&IngestOptions{Keys: hint})
}

// NewIngestOf starts an ingest of the entries o describes. It first merges
// the delta into the files, so that the new file, the newest, is newer
// than every change.
func (t *Table) NewIngestOf(o *IngestOptions) (*Ingest, error) {
	if t.opts.ReadOnly {
		return nil, store.ErrReadOnly
	}
	var span colRange
	for i, r := range [nCols]ColRange{o.First, o.Last, o.Expires} {
		if r.Min == 0 && r.Max == 0 {
			continue
		}
		if r.Min < 1 || r.Max < r.Min || r.Max > MaxTime {
			return nil, fmt.Errorf("keytable: ingest: column %d range %d..%d outside 1..%d", i, r.Min, r.Max, int64(MaxTime))
		}
		span.min[i], span.max[i] = r.Min, r.Max
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	for t.merging {
		t.mergeDone.Wait()
	}
	if t.delta.len() > 0 {
		t.rotateLocked(false)
		for t.merging {
			t.mergeDone.Wait()
		}
	}
	if t.mergeErr != nil {
		return nil, t.mergeErr
	}
	if t.delta.len() > 0 {
		return nil, fmt.Errorf("keytable: ingest: the delta could not be merged first")
	}
	num := t.man.nextNum
	t.man.nextNum++ // a failed ingest's number is not reused
	name := fileName(t.dir, num)
	f, err := t.fs.OpenFile(name+".tmp", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	in := &Ingest{t: t, f: f, name: name, num: num}
	if o.Values {
		if in.vo, err = t.newValueOut(num); err != nil {
			f.Close()
			t.fs.Remove(name + ".tmp")
			return nil, err
		}
	}
	in.fw = newFileWriter(f, o.Keys, layoutOf(span, o.Values), in.vo.writer(), in.vo.pairing())
	in.fw.bw.buf = make([]byte, 0, 1<<20)
	t.mu.RLock()
	for i := len(t.files) - 1; i >= 0; i-- {
		in.files = append(in.files, t.files[i]) // newest first
	}
	t.mu.RUnlock()
	if len(in.files) > 0 {
		in.lb = t.lookupBufs()
	}
	return in, nil
}

// Add appends the key-only entry k, which must be greater than the key
// added before.
func (in *Ingest) Add(k *Key) error {
	_, err := in.Put(&Set{Key: *k})
	return err
}

// Put appends the entry s (KeepValue is not allowed), whose key must be
// greater than the key put before, and reports the record it replaces.
func (in *Ingest) Put(s *Set) (Prev, error) {
	if s.KeepValue {
		return Prev{}, fmt.Errorf("keytable: ingest: KeepValue (of %x)", s.Key[:])
	}
	if err := s.Cols.check(); err != nil {
		return Prev{}, err
	}
	// The newest file that holds the key decides: a row below is hidden
	// by a tombstone of this file, and counted out.
	var p Prev
	if len(in.files) > 0 {
		in.t.mu.RLock()
		for _, f := range in.files {
			st, row, buf, err := f.find(&s.Key, in.lb.keys)
			in.t.maybeBuild(f)
			in.lb.keys = buf[:0]
			if err != nil {
				in.t.mu.RUnlock()
				return Prev{}, err
			}
			if st == stRow {
				x := f.hdr.lay.expires(row)
				p = Prev{Live: !expired(x, in.t.now()), Removed: true, Expires: x}
			}
			if st != stAbsent {
				break
			}
		}
		in.t.mu.RUnlock()
	}
	if in.fw.h.count > 0 && compareKeys(s.Key, in.fw.prev) <= 0 {
		return Prev{}, fmt.Errorf("keytable: ingest: %x after %x, out of order", s.Key[:], in.fw.prev[:])
	}
	if err := in.fw.add(&s.Key, &s.Cols, s.Value); err != nil {
		return Prev{}, fmt.Errorf("keytable: ingest: %w", err)
	}
	if p.Removed {
		if err := in.fw.tombstone(&s.Key); err != nil {
			return Prev{}, fmt.Errorf("keytable: ingest: %w", err)
		}
		in.prevs++
	}
	in.n++
	return p, nil
}

// Len returns the number of entries added.
func (in *Ingest) Len() uint64 { return in.n }

// Abort removes the files being written.
func (in *Ingest) Abort() {
	in.f.Close()
	in.t.fs.Remove(in.name + ".tmp")
	if in.vo != nil {
		in.vo.abort()
	}
	in.putBufs()
}

func (in *Ingest) putBufs() {
	if in.lb != nil {
		in.t.bufs.put(in.lb)
		in.lb = nil
	}
}

// Commit writes the file's tombstones, bucket array and header, syncs it
// (and its value file) and installs it as the newest file: its entries are
// live when Commit returns.
func (in *Ingest) Commit() error {
	t := in.t
	if in.n == 0 {
		in.Abort()
		return nil
	}
	defer in.putBufs()
	h, fps, err := in.fw.finish()
	if err == nil && h.values > 0 {
		err = in.vo.commit()
	}
	if in.vo != nil {
		in.vo.abort()
	}
	if err == nil {
		err = in.f.Sync()
	}
	if err == nil {
		err = t.fs.Rename(in.name+".tmp", in.name)
	}
	in.f.Close()
	if err != nil {
		t.fs.Remove(in.name + ".tmp")
		t.fs.Remove(valuesName(t.dir, in.num))
		return fmt.Errorf("keytable: ingest: %w", err)
	}
	if err := syncDir(t.fs, t.dir); err != nil {
		return err
	}
	kf, err := openFile(t.fs, in.name, in.num, t.cache)
	if err != nil {
		return err
	}
	kf.setFingerprints(fps)
	t.wmu.Lock()
	defer t.wmu.Unlock()
	m := manifest{logStart: t.man.logStart, nextNum: t.man.nextNum}
	for _, f := range t.files {
		m.files = append(m.files, f.num)
	}
	m.files = append(m.files, in.num)
	if err := writeManifest(t.fs, t.dir, &m); err != nil {
		kf.retired.Store(true)
		kf.release()
		return err
	}
	t.man = m
	t.mu.Lock()
	t.files = append(t.files, kf)
	t.setSearch()
	t.mu.Unlock()
	t.count.Add(int64(in.n) - in.prevs)
	return nil
}
