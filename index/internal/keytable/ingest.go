package keytable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/urlhash/urlhash/store"
)

// An Ingest writes a bulk of new keys, in ascending order, straight into
// a new key file, bypassing the delta and the log: a load's keys are
// written once. The caller guarantees that no key added is live and that
// no other change runs until Commit or Abort (the index holds its
// exclusive lock).
type Ingest struct {
	t       *Table
	f       *os.File
	name    string
	num     uint64
	bits    uint8
	buckets []uint32
	nb      uint64 // buckets filled
	n       uint64
	crc     uint32
	w       *sectionWriter
	prev    Key
}

// NewIngest starts an ingest of at most about hint keys (it sizes the
// bucket array). It first merges the delta into the files, so that the
// new file, the newest, is newer than every change.
func (t *Table) NewIngest(hint uint64) (*Ingest, error) {
	if t.opts.ReadOnly {
		return nil, store.ErrReadOnly
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
	f, err := os.OpenFile(name+".tmp", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	bits := bucketBitsFor(hint)
	return &Ingest{t: t, f: f, name: name, num: num, bits: bits, buckets: make([]uint32, (1<<bits)+1),
		w: &sectionWriter{w: f, off: headerSize, buf: make([]byte, 0, 1<<20)}}, nil
}

// Add appends k, which must be greater than the key added before.
func (in *Ingest) Add(k *Key) error {
	if in.n > 0 && bytes.Compare(k[:], in.prev[:]) <= 0 {
		return fmt.Errorf("keytable: ingest: %x after %x, out of order", k[:], in.prev[:])
	}
	if in.n+1 >= maxFileEntries {
		return fmt.Errorf("keytable: ingest: more than %d keys", maxFileEntries-1)
	}
	b := uint64(leading(k, in.bits))
	for in.nb <= b {
		in.buckets[in.nb] = uint32(in.n)
		in.nb++
	}
	in.prev = *k
	in.crc = crc32.Update(in.crc, castagnoli, k[:])
	in.n++
	return in.w.write(k[:])
}

// Len returns the number of keys added.
func (in *Ingest) Len() uint64 { return in.n }

// Abort removes the file being written.
func (in *Ingest) Abort() {
	in.f.Close()
	os.Remove(in.name + ".tmp")
}

// Commit writes the file's bucket array and header, syncs it and
// installs it as the newest file: its keys are live when Commit returns.
func (in *Ingest) Commit() error {
	t := in.t
	if in.n == 0 {
		in.Abort()
		return nil
	}
	for ; in.nb < uint64(len(in.buckets)); in.nb++ {
		in.buckets[in.nb] = uint32(in.n)
	}
	h := fileHeader{bits: in.bits, count: in.n, dataCRC: in.crc}
	bb := make([]byte, 0, 4*len(in.buckets))
	for _, o := range in.buckets {
		bb = binary.LittleEndian.AppendUint32(bb, o)
	}
	hdr := h.appendTo(nil)
	h.indexCRC = crc32.Update(crc32.Checksum(hdr[:32], castagnoli), castagnoli, bb)
	err := in.w.write(bb)
	if err == nil {
		err = in.w.flush()
	}
	if err == nil {
		_, err = in.f.WriteAt(h.appendTo(nil), 0)
	}
	if err == nil {
		err = in.f.Sync()
	}
	if err == nil {
		err = os.Rename(in.name+".tmp", in.name)
	}
	in.f.Close()
	if err != nil {
		os.Remove(in.name + ".tmp")
		return fmt.Errorf("keytable: ingest: %w", err)
	}
	if err := syncDir(t.dir); err != nil {
		return err
	}
	kf, err := openFile(in.name, in.num)
	if err != nil {
		return err
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	m := manifest{logStart: t.man.logStart, nextNum: t.man.nextNum}
	for _, f := range t.files {
		m.files = append(m.files, f.num)
	}
	m.files = append(m.files, in.num)
	if err := writeManifest(t.dir, &m); err != nil {
		kf.close()
		os.Remove(in.name)
		return err
	}
	t.man = m
	t.mu.Lock()
	t.files = append(t.files, kf)
	t.setSearch()
	t.mu.Unlock()
	t.count.Add(int64(in.n))
	return nil
}
