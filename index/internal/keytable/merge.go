package keytable

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/urlhash/urlhash/store"
)

// rotateLocked freezes the delta and starts its merge in the background
// unless one runs (force: also an empty delta, to drop replayed segments).
// The caller holds wmu.
func (t *Table) rotateLocked(force bool) {
	if t.merging || t.stopMerge || t.opts.noMerge || t.mergeErr != nil || (!force && len(t.delta.m) == 0) {
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
	// DeltaKeys while a merge ran would make every later one as large.
	t.frozen, t.delta = t.delta, newDelta(t.opts.DeltaKeys)
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
	// f, when the source is a file, has its pages released as the
	// source moves on; released is the live key index up to which they
	// were.
	f        *keyFile
	released int
}

// releaseEvery is how many keys of a file a source reads between two
// releases of its pages (32 MiB).
const releaseEvery = 1 << 20

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

func (s *source) advance(live, dead bool) {
	if live {
		s.li++
		if s.f != nil && s.li-s.released >= releaseEvery {
			s.f.release(headerSize+KeySize*s.released, headerSize+KeySize*s.li)
			s.released = s.li
		}
	}
	if dead {
		s.di++
	}
}

func fileSource(f *keyFile) *source {
	return &source{live: f.key, dead: f.tombstone, nLive: int(f.hdr.count), nDead: int(f.hdr.deleted), f: f}
}

func deltaSource(d map[Key]deltaEntry) *source {
	var live, dead []Key
	for k, e := range d {
		if e.live {
			live = append(live, k)
		} else {
			dead = append(dead, k)
		}
	}
	slices.SortFunc(live, compareKeys)
	slices.SortFunc(dead, compareKeys)
	return &source{live: func(i int) *Key { return &live[i] }, dead: func(i int) *Key { return &dead[i] }, nLive: len(live), nDead: len(dead)}
}

// mergeSources walks the sources (newest first) in key order and calls fn
// with each key's state in the merged output: live when the newest
// source holding it holds it live; dead (a tombstone hiding older files)
// when the oldest source holding it holds a tombstone and bottom is false.
func mergeSources(srcs []*source, bottom bool, fn func(k *Key, live, dead bool) bool) {
	for {
		var min *Key
		for _, s := range srcs {
			if k, _, _ := s.peek(); k != nil && (min == nil || bytes.Compare(k[:], min[:]) < 0) {
				min = k
			}
		}
		if min == nil {
			return
		}
		k := *min
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
			return
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
	err := t.mergeFiles(frozen.m, files, logStart)
	t.wmu.Lock()
	t.merging = false
	if err != nil {
		t.mergeErr = err
	}
	t.mergeDone.Broadcast()
	t.wmu.Unlock()
}

func (t *Table) mergeFiles(frozen map[Key]deltaEntry, files []*keyFile, logStart uint64) error {
	j := planMerge(files, uint64(len(frozen)))
	inputs := files[j:]
	srcs := []*source{deltaSource(frozen)}
	for i := len(inputs) - 1; i >= 0; i-- {
		srcs = append(srcs, fileSource(inputs[i]))
	}
	bottom := j == 0
	// Count first (the header and the bucket array need the counts).
	var nLive, nDead uint64
	mergeSources(cloneSources(srcs), bottom, func(_ *Key, live, dead bool) bool {
		if live {
			nLive++
		}
		if dead {
			nDead++
		}
		return true
	})
	kept := slices.Clone(files[:j])
	var out *keyFile
	num := t.man.nextNum
	if nLive+nDead > 0 {
		name := fileName(t.dir, num)
		if err := t.writeMerged(name, srcs, bottom, nLive, nDead); err != nil {
			return err
		}
		f, err := openFile(name, num)
		if err != nil {
			return err
		}
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

func cloneSources(srcs []*source) []*source {
	out := make([]*source, len(srcs))
	for i, s := range srcs {
		c := *s
		out[i] = &c
	}
	return out
}

func (t *Table) writeMerged(name string, srcs []*source, bottom bool, nLive, nDead uint64) error {
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("keytable: %w", err)
	}
	defer func() {
		f.Close()
		os.Remove(tmp)
	}()
	liveSeq := func(yield func(*Key) bool) {
		mergeSources(cloneSources(srcs), bottom, func(k *Key, live, _ bool) bool {
			return !live || yield(k)
		})
	}
	deadSeq := func(yield func(*Key) bool) {
		mergeSources(cloneSources(srcs), bottom, func(k *Key, _, dead bool) bool {
			return !dead || yield(k)
		})
	}
	if _, err := writeFile(f, nLive, nDead, liveSeq, deadSeq); err != nil {
		return fmt.Errorf("keytable: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("keytable: fsync %s: %w", name, err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return fmt.Errorf("keytable: %w", err)
	}
	return syncDir(t.dir)
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
	srcs := []*source{deltaSource(t.delta.m)}
	if t.frozen != nil {
		srcs = append(srcs, deltaSource(t.frozen.m))
	}
	for i := len(t.files) - 1; i >= 0; i-- {
		srcs = append(srcs, fileSource(t.files[i]))
	}
	t.mu.RUnlock()
	lo, hi := prefixRange(prefix, bits)
	for _, s := range srcs {
		s.li = lowerBound(s.live, s.nLive, &lo)
		s.released = s.li
		s.di = lowerBound(s.dead, s.nDead, &lo)
		if hi != nil {
			s.nLive = lowerBound(s.live, s.nLive, hi)
			s.nDead = lowerBound(s.dead, s.nDead, hi)
		}
	}
	var err error
	mergeSources(srcs, true, func(k *Key, live, _ bool) bool {
		if live {
			err = fn(k)
		}
		return err == nil
	})
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
