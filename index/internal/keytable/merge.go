package keytable

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/urlhash/urlhash/store"
)

// rotateLocked freezes the delta and starts its merge in the background
// unless one runs (force: also an empty delta, to drop replayed segments).
// The caller holds wmu.
func (t *Table) rotateLocked(force bool) {
	if t.merging || t.stopMerge || t.opts.noMerge || t.mergeErr != nil || (!force && t.delta.len() == 0) {
		return
	}
	// The segment of the frozen delta must be durable before writes go
	// to a new one (SyncTo syncs only the newest).
	if err := t.log.Sync(); err != nil {
		t.mergeErr = fmt.Errorf("keytable: fsync %s: %w", t.log.Name(), err)
		return
	}
	next, err := createLog(logName(t.dir, t.logNum+1))
	if err == nil {
		err = syncDir(t.dir)
	}
	if err != nil {
		if next != nil {
			next.Close()
			os.Remove(logName(t.dir, t.logNum+1))
		}
		t.mergeErr = err
		return
	}
	t.oldLogs = append(t.oldLogs, t.log)
	t.log, t.logNum, t.segBytes = next, t.logNum+1, 0
	t.mu.Lock()
	// Sized for a full delta, not for this one: a delta that grew past
	// its size while a merge ran would make every later one as large.
	t.deltaKeys = t.deltaKeysFor(t.count.Load())
	t.frozen, t.delta = t.delta, newDelta(t.deltaKeys)
	files := slices.Clone(t.files)
	t.mu.Unlock()
	t.merging = true
	t.mergeWG.Add(1)
	go t.merge(t.frozen, files, t.logNum)
}

// source is one input of a merge in key order: its live keys and its
// tombstones, each sorted.
type source struct {
	live, dead   func(i int) *Key
	nLive, nDead int
	li, di       int
	// win, when the source is a file, reads its live keys; a read error
	// stops the merge.
	win *keyWindow
}

// peek returns the smallest key not consumed and whether the source
// holds it live and deleted.
func (s *source) peek() (k *Key, live, dead bool) {
	var kl, kd *Key
	if s.li < s.nLive {
		kl = s.live(s.li)
	}
	if s.di < s.nDead {
		kd = s.dead(s.di)
	}
	switch {
	case kl == nil && kd == nil:
		return nil, false, false
	case kd == nil:
		return kl, true, false
	case kl == nil:
		return kd, false, true
	}
	switch c := bytes.Compare(kl[:], kd[:]); {
	case c < 0:
		return kl, true, false
	case c > 0:
		return kd, false, true
	}
	return kl, true, true
}

// err returns the read error that stopped the source, if any.
func (s *source) err() error {
	if s.win != nil {
		return s.win.err
	}
	return nil
}

func (s *source) advance(live, dead bool) {
	if live {
		s.li++
	}
	if dead {
		s.di++
	}
}

// fileSource reads f's keys in order through a window.
func fileSource(f *keyFile) *source {
	w := &keyWindow{f: f}
	return &source{live: w.at, dead: f.tombstone, nLive: int(f.hdr.count), nDead: int(f.hdr.deleted), win: w}
}

// deltaSource returns the keys of d in order. d must not change while the
// source is used: a frozen delta (the merge sorts an index of its entries,
// 4 bytes a key, and no copy of its keys), or a copy.
func deltaSource(d *delta) *source {
	live, dead := d.sorted()
	ents := d.ents
	return &source{
		live:  func(i int) *Key { return &ents[live[i]].k },
		dead:  func(i int) *Key { return &ents[dead[i]].k },
		nLive: len(live), nDead: len(dead),
	}
}

// mergeSources walks the sources (newest first) in key order and calls fn
// with each key's state in the merged output: live when the newest
// source holding it holds it live; dead (a tombstone hiding older files)
// when the oldest source holding it holds a tombstone and bottom is false.
// A source's read error ends the walk and is returned (fn has then been
// called with the keys before it only).
// k is valid until fn returns.
func mergeSources(srcs []*source, bottom bool, fn func(k *Key, live, dead bool) bool) error {
	var k Key // one for the walk: a key each escaped to the heap
	for {
		var min *Key
		for _, s := range srcs {
			k, _, _ := s.peek()
			if k == nil {
				if err := s.err(); err != nil {
					return err
				}
			} else if min == nil || bytes.Compare(k[:], min[:]) < 0 {
				min = k
			}
		}
		if min == nil {
			return nil
		}
		k = *min
		first := true
		var live, dead bool
		for _, s := range srcs {
			sk, l, d := s.peek()
			if sk == nil || *sk != k {
				continue
			}
			if first {
				live, first = l, false
			}
			dead = d // the oldest holder's tombstone is the one that counts
			s.advance(l, d)
		}
		if !fn(&k, live, dead && !bottom) {
			return nil
		}
	}
}

// plan chooses the newest files to merge with a frozen delta of n keys:
// a file joins while it is at most three times the size of what joins
// before it, so file sizes grow geometrically (each key is rewritten a
// logarithmic number of times).
func planMerge(files []*keyFile, n uint64) int {
	acc, j := n, len(files)
	for j > 0 {
		sz := files[j-1].hdr.count + files[j-1].hdr.deleted
		if sz > 3*acc {
			break
		}
		acc += sz
		j--
	}
	return j // files[j:] are merged
}

// merge writes the frozen delta and the newest files into one key file,
// installs it with a new manifest, and drops the inputs and the frozen
// segments. It runs in the background; an error stops later writes.
func (t *Table) merge(frozen *delta, files []*keyFile, logStart uint64) {
	defer t.mergeWG.Done()
	start, out := time.Now(), fileName(t.dir, t.man.nextNum)
	err := t.mergeFiles(frozen, files, logStart)
	if err == nil {
		t.merged.done(start, out)
	}
	t.wmu.Lock()
	t.merging = false
	if err != nil {
		t.mergeErr = err
	}
	t.mergeDone.Broadcast()
	t.wmu.Unlock()
}

func (t *Table) mergeFiles(frozen *delta, files []*keyFile, logStart uint64) error {
	j := planMerge(files, uint64(frozen.len()))
	inputs := files[j:]
	srcs := []*source{deltaSource(frozen)}
	for i := len(inputs) - 1; i >= 0; i-- {
		srcs = append(srcs, fileSource(inputs[i]))
	}
	bottom := j == 0
	kept := slices.Clone(files[:j])
	var out *keyFile
	num := t.man.nextNum
	name := fileName(t.dir, num)
	fps, empty, err := t.writeMerged(name, srcs, bottom)
	if err != nil {
		return err
	}
	if !empty {
		f, err := openFile(name, num)
		if err != nil {
			return err
		}
		f.setFingerprints(fps)
		out = f
		kept = append(kept, out)
	}
	if t.opts.BeforeDrop != nil {
		if err := t.opts.BeforeDrop(); err != nil {
			if out != nil {
				out.close()
				os.Remove(out.name)
			}
			return err
		}
	}
	m := manifest{logStart: logStart, nextNum: num + 1}
	for _, f := range kept {
		m.files = append(m.files, f.num)
	}
	if err := writeManifest(t.dir, &m); err != nil {
		if out != nil {
			out.close()
			os.Remove(out.name)
		}
		return err
	}
	t.man = m
	t.mu.Lock()
	t.files = kept
	t.setSearch()
	t.frozen = nil
	t.mu.Unlock()
	// Lookups use the new files from here; scans that began before
	// still hold the old ones.
	t.fmu.Lock()
	for _, f := range inputs {
		f.close()
	}
	t.fmu.Unlock()
	for _, f := range inputs {
		os.Remove(f.name)
	}
	t.smu.Lock()
	for t.syncing {
		t.scond.Wait()
	}
	t.wmu.Lock()
	old := t.oldLogs
	t.oldLogs = nil
	t.wmu.Unlock()
	for _, f := range old {
		f.Close()
		os.Remove(f.Name())
	}
	t.smu.Unlock()
	return nil
}

// writeMerged writes the merge of srcs into the key file name, in one
// walk of the sources, and returns the fingerprints of its keys; or
// reports that the merge is empty (every key deleted), and writes no
// file.
func (t *Table) writeMerged(name string, srcs []*source, bottom bool) (fps []byte, empty bool, err error) {
	var maxLive uint64 // the live keys if no two sources share one
	for _, s := range srcs {
		maxLive += uint64(s.nLive)
	}
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("keytable: %w", err)
	}
	defer func() {
		f.Close()
		os.Remove(tmp)
	}()
	var rerr error // a read error of the sources
	entries := func(yield func(*Key, bool) bool) {
		rerr = mergeSources(srcs, bottom, func(k *Key, live, dead bool) bool {
			return (!live || yield(k, false)) && (!dead || yield(k, true))
		})
	}
	h, fps, err := writeFile(f, maxLive, entries)
	if rerr != nil {
		return nil, false, rerr
	}
	if err != nil {
		return nil, false, fmt.Errorf("keytable: write %s: %w", name, err)
	}
	if h.count+h.deleted == 0 {
		return nil, true, nil
	}
	if err := f.Sync(); err != nil {
		return nil, false, fmt.Errorf("keytable: fsync %s: %w", name, err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return nil, false, fmt.Errorf("keytable: %w", err)
	}
	return fps, false, syncDir(t.dir)
}

// Scan calls fn with each live key that starts with the first bits bits
// of prefix, in key order, until fn returns an error. It sees the table as
// it was when it started, and holds no lock writers wait for.
func (t *Table) Scan(prefix []byte, bits int, fn func(k *Key) error) error {
	t.fmu.RLock()
	defer t.fmu.RUnlock()
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return store.ErrClosed
	}
	// The delta changes under writers: a copy of it. The frozen one does
	// not.
	srcs := []*source{deltaSource(t.delta.clone())}
	if t.frozen != nil {
		srcs = append(srcs, deltaSource(t.frozen))
	}
	for i := len(t.files) - 1; i >= 0; i-- {
		srcs = append(srcs, fileSource(t.files[i]))
	}
	t.mu.RUnlock()
	lo, hi := prefixRange(prefix, bits)
	for _, s := range srcs {
		s.di = lowerBound(s.dead, s.nDead, &lo)
		if hi != nil {
			s.nDead = lowerBound(s.dead, s.nDead, hi)
		}
		if s.win == nil {
			s.li = lowerBound(s.live, s.nLive, &lo)
			if hi != nil {
				s.nLive = lowerBound(s.live, s.nLive, hi)
			}
			continue
		}
		// A file's keys are read in order: its buckets give the bounds
		// to a bucket, and a walk through it the rest.
		s.li = s.win.lowerBound(&lo)
		if hi != nil {
			s.nLive = s.win.lowerBound(hi)
		}
		if err := s.err(); err != nil {
			return err
		}
	}
	var err error
	if rerr := mergeSources(srcs, true, func(k *Key, live, _ bool) bool {
		if live {
			c := *k // fn may keep it
			err = fn(&c)
		}
		return err == nil
	}); rerr != nil {
		return rerr
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

// lowerBound returns the index of the first live key of the file not
// less than k (reading its bucket).
func (w *keyWindow) lowerBound(k *Key) int {
	i, hi := w.f.bucket(k)
	for ; i < hi; i++ {
		e := w.at(i)
		if e == nil || bytes.Compare(e[:], k[:]) >= 0 {
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

// Verify checks every key file's checksum and order.
func (t *Table) Verify() error {
	t.fmu.RLock()
	defer t.fmu.RUnlock()
	t.mu.RLock()
	files := slices.Clone(t.files)
	t.mu.RUnlock()
	var errs []error
	for _, f := range files {
		if err := f.verify(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// Close waits for a merge to finish, syncs the log and closes the table.
// Changes not merged stay in the log for the next Open.
func (t *Table) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	t.wmu.Lock()
	t.stopMerge = true
	t.wmu.Unlock()
	t.mergeWG.Wait()
	err := t.Sync()
	t.wmu.Lock()
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.stopBuilds.Store(true)
	t.builds.Wait()
	if t.log != nil {
		if cerr := t.log.Close(); err == nil {
			err = cerr
		}
		t.log = nil
	}
	for _, f := range t.oldLogs {
		f.Close()
	}
	t.oldLogs = nil
	if merr := t.mark.close(); err == nil {
		err = merr
	}
	err2 := t.mergeErr
	t.wmu.Unlock()
	t.fmu.Lock()
	t.closeFiles()
	t.fmu.Unlock()
	if err == nil {
		err = err2
	}
	return err
}

func (t *Table) closeFiles() {
	for _, f := range t.files {
		f.close()
	}
}
