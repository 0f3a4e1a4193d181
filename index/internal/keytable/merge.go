package keytable

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/urlhash/urlhash/index/internal/valuefile"
	"github.com/urlhash/urlhash/store"
)

// rotateLocked freezes the delta and starts its merge in the background
// unless one runs (force: also an empty delta, to drop replayed segments
// or rewrite version 1 files). The caller holds wmu.
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
	next, err := createLog(t.fs, logName(t.dir, t.logNum+1))
	if err == nil {
		err = syncDir(t.fs, t.dir)
	}
	if err != nil {
		if next != nil {
			next.Close()
			t.fs.Remove(logName(t.dir, t.logNum+1))
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
	j := planMerge(files, uint64(t.frozen.len()))
	t.merging = true
	t.inputs = files[j:]
	t.mergeNow = t.now()
	t.mergeWG.Add(1)
	go t.merge(t.frozen, files, j, t.logNum)
}

// planMerge chooses the newest files to merge with a frozen delta of n
// keys: a file joins while it is at most three times the size of what
// joins before it, so file sizes grow geometrically (each key is rewritten
// a logarithmic number of times). Version 1 files always join (with every
// newer file): merges rewrite them in the current format. It returns the
// index of the oldest file that joins (files[j:] are merged).
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
	for i, f := range files[:j] {
		if f.hdr.version == fileVersion1 {
			return i
		}
	}
	return j
}

// source is one input of a merge in key order: its rows and its
// tombstones, each sorted. A file's are read through a window (a read
// error or a checksum mismatch stops the merge: see err); a delta's are
// its entries, in the order of an index of them.
type source struct {
	win        *keyWindow // a file's
	f          *keyFile
	d          *delta // a delta's
	live, dead []uint32
	// nLive and nDead bound the rows and tombstones read; li and di are
	// the next ones.
	nLive, nDead int
	li, di       int
	// pos is the source's place among a merge's (its tombstones'
	// references: see fileWriter.tombstoneAt).
	pos int
}

// key returns row i's key.
func (s *source) key(i int) *Key {
	if s.win != nil {
		row := s.win.at(i)
		if row == nil {
			return &maxKey // the walk ends at the error (see err)
		}
		return (*Key)(row)
	}
	return &s.d.ents[s.live[i]].k
}

// deadKey returns tombstone i.
func (s *source) deadKey(i int) *Key {
	if s.win != nil {
		return s.f.tombstone(i)
	}
	return &s.d.ents[s.dead[i]].k
}

// hasCols reports whether the source's rows may have columns or values.
func (s *source) hasCols() bool {
	if s.win != nil {
		return s.f.hdr.lay.rw > KeySize
	}
	return s.d.cols != nil || s.d.vals != nil
}

// cols returns row i's columns.
func (s *source) cols(i int) Cols {
	if s.win != nil {
		if row := s.win.at(i); row != nil {
			return s.f.hdr.lay.cols(row)
		}
		return Cols{}
	}
	if s.d.cols == nil {
		return Cols{}
	}
	return s.d.cols[s.live[i]]
}

// val returns where row i's value is.
func (s *source) val(i int) dval {
	if s.win != nil {
		if row := s.win.at(i); row != nil {
			if r := s.f.hdr.lay.ref(row); r != 0 {
				return dval{f: s.f, ord: r}
			}
		}
		return dval{}
	}
	if s.d.vals == nil {
		return dval{}
	}
	e, _ := s.d.entry(int(s.live[i]))
	return e.val
}

// maxKey stands for a key a read could not read.
var maxKey = Key{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// peek returns the smallest key not consumed and whether the source
// holds it as a row and as a tombstone.
func (s *source) peek() (k *Key, live, dead bool) {
	var kl, kd *Key
	if s.li < s.nLive {
		kl = s.key(s.li)
	}
	if s.di < s.nDead {
		kd = s.deadKey(s.di)
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

// fileSource reads f's rows in order through a window.
func fileSource(f *keyFile) *source {
	return &source{win: &keyWindow{f: f}, f: f, nLive: int(f.hdr.count), nDead: int(f.hdr.deleted)}
}

// deltaSource returns the entries of d in order. d must not change while
// the source is used: a frozen delta (the merge sorts an index of its
// entries, 4 bytes a key, and no copy of its keys), or a copy.
func deltaSource(d *delta) *source {
	live, dead := d.sorted()
	return &source{d: d, live: live, dead: dead, nLive: len(live), nDead: len(dead)}
}

// mergeSources walks the sources (newest first) in key order and calls fn
// with each key's state in the merged output: its row (src and i, src nil
// for none) when the newest source holding it holds a row; dead (a
// tombstone hiding older files) when the oldest source holding it holds a
// tombstone and bottom is false. A source's read error ends the walk and
// is returned (fn has then been called with the keys before it only).
// k is valid until fn returns.
//
// The tombstone is passed as its source and its number there (dead nil:
// none), which a merge's writer keeps instead of the key (see
// fileWriter.tombstoneAt).
func mergeSources(srcs []*source, bottom bool, fn func(k *Key, src *source, i int, dead *source, di int) bool) error {
	var k Key // one for the walk: a key each escaped to the heap
	for {
		var min *Key
		for _, s := range srcs {
			k, _, _ := s.peek()
			if err := s.err(); err != nil {
				return err
			}
			if k != nil && (min == nil || bytes.Compare(k[:], min[:]) < 0) {
				min = k
			}
		}
		if min == nil {
			return nil
		}
		k = *min
		first := true
		var src, dead *source
		row, di := 0, 0
		for _, s := range srcs {
			sk, l, d := s.peek()
			if sk == nil || *sk != k {
				continue
			}
			if first {
				if l {
					src, row = s, s.li
				}
				first = false
			}
			// The oldest holder's tombstone is the one that counts.
			dead = nil
			if d && !bottom {
				dead, di = s, s.di
			}
			s.advance(l, d)
		}
		if !fn(&k, src, row, dead, di) {
			return nil
		}
	}
}

// merge writes the frozen delta and the files files[j:] into one key
// file, installs it with a new manifest, and drops the inputs and the
// frozen segments. It runs in the background; an error stops later
// writes.
func (t *Table) merge(frozen *delta, files []*keyFile, j int, logStart uint64) {
	defer t.mergeWG.Done()
	start, out := time.Now(), fileName(t.dir, t.man.nextNum)
	err := t.mergeFiles(frozen, files, j, logStart)
	if err == nil {
		t.merged.done(start, out)
	}
	t.wmu.Lock()
	t.merging = false
	t.inputs = nil
	if err != nil {
		t.mergeErr = err
	}
	t.mergeDone.Broadcast()
	t.wmu.Unlock()
}

func (t *Table) mergeFiles(frozen *delta, files []*keyFile, j int, logStart uint64) error {
	inputs := files[j:]
	srcs := []*source{deltaSource(frozen)}
	for i := len(inputs) - 1; i >= 0; i-- {
		srcs = append(srcs, fileSource(inputs[i]))
	}
	bottom := j == 0
	kept := slices.Clone(files[:j])
	var out *keyFile
	num := t.man.nextNum
	w, err := t.writeMerged(num, srcs, bottom, t.mergeNow)
	if err != nil {
		return err
	}
	if !w.empty {
		f, err := openFile(t.fs, fileName(t.dir, num), num, t.cache)
		if err != nil {
			return err
		}
		f.setFingerprints(w.fps)
		out = f
		kept = append(kept, out)
	}
	discard := func() {
		if out != nil {
			out.retired.Store(true)
			out.release()
		}
	}
	if t.opts.BeforeDrop != nil {
		if err := t.opts.BeforeDrop(); err != nil {
			discard()
			return err
		}
	}
	m := manifest{logStart: logStart, nextNum: num + 1}
	for _, f := range kept {
		m.files = append(m.files, f.num)
	}
	if err := writeManifest(t.fs, t.dir, &m); err != nil {
		discard()
		return err
	}
	t.man = m
	t.mu.Lock()
	t.files = kept
	t.setSearch()
	t.frozen = nil
	t.count.Add(-w.expired)
	t.mu.Unlock()
	// Lookups use the new files from here; scans and reads that began
	// before still hold the old ones, which close (and go) with the last.
	frozen.release()
	for _, f := range inputs {
		f.retired.Store(true)
		f.release()
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
		t.fs.Remove(f.Name())
	}
	t.smu.Unlock()
	if len(w.dropped) > 0 && t.opts.Expired != nil {
		t.opts.Expired(w.dropped)
	}
	return nil
}

// merged is what writeMerged wrote.
type merged struct {
	fps     []byte // the rows' fingerprints
	empty   bool   // every key deleted: no file written
	expired int64  // expired records dropped
	dropped []ExpiryCount
}

// writeMerged writes the merge of srcs into the key file num (and its
// value file), in one walk of the sources, dropping the records expired at
// now; or reports that the merge is empty (every key deleted), and writes
// no file. Every page, block and version 1 file it reads is checked: a
// damaged input fails the merge, naming it.
func (t *Table) writeMerged(num uint64, srcs []*source, bottom bool, now int64) (merged, error) {
	var res merged
	var maxLive uint64 // the rows if no two sources share a key
	var span colRange
	values := false
	for _, s := range srcs {
		maxLive += uint64(s.nLive)
		if s.win != nil {
			r := s.win.f.hdr.lay.rangeOf()
			span.join(&r)
			values = values || s.win.f.hdr.values > 0
		}
	}
	if d := srcs[0].d; d != nil {
		r, v := d.ranges()
		span.join(&r)
		values = values || v
	}
	name := fileName(t.dir, num)
	f, err := t.fs.OpenFile(name+".tmp", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return res, fmt.Errorf("keytable: %w", err)
	}
	defer func() {
		f.Close()
		t.fs.Remove(name + ".tmp")
	}()
	var vw *valueOut
	// The value files kept as they are: their blocks copied, nothing
	// decoded; a row's value keeps its ordinal, from the copy's base.
	// Those of files whose rows refer to less than half their values
	// are rewritten (their live values decoded and compressed again),
	// which drops the values replaced, deleted or expired since.
	base := map[*keyFile]uint32{}
	if values {
		if vw, err = t.newValueOut(num); err != nil {
			return res, err
		}
		defer vw.abort()
		for _, s := range srcs {
			if f := s.f; f != nil && f.vals != nil && 2*f.hdr.values >= f.vals.Len() {
				if base[f], err = vw.w.CopyBlocks(f.vals); err != nil {
					return res, err
				}
			}
		}
	}
	fw := newFileWriter(f, maxLive, layoutOf(span, values), vw.writer(), vw.pairing())
	maxDead := 0 // the tombstones if no two sources share one
	for n, s := range srcs {
		s.pos = n
		maxDead += s.nDead
	}
	if !bottom {
		fw.refTombstones(maxDead, func(pos, i int) *Key { return srcs[pos].deadKey(i) })
	}
	var werr error
	drops := map[int64]int64{}
	// The values of files rewritten are read through a window (each
	// block once); a copied value is referred to, not read.
	rows := newValueWindow(func(e *Entry, v dval) error {
		if b, ok := base[v.f]; ok {
			return fw.addRef(&e.Key, &e.Cols, b+v.ord-1)
		}
		return fw.add(&e.Key, &e.Cols, e.Value)
	})
	put := func(e *Entry, v dval) error {
		_, copied := base[v.f] // v.f is nil without a value in a file
		return rows.add(e, v, !copied)
	}
	var e Entry // one for every row: put copies what it holds
	rerr := mergeSources(srcs, bottom, func(k *Key, src *source, i int, dead *source, di int) bool {
		switch {
		case src == nil:
		case !src.hasCols():
			e = Entry{Key: *k}
			werr = put(&e, dval{})
		default:
			c := src.cols(i)
			if expired(c.Expires, now) {
				drops[c.Expires]++
				res.expired++
				break
			}
			e = Entry{Key: *k, Cols: c}
			werr = put(&e, src.val(i))
		}
		if dead != nil && werr == nil {
			werr = fw.tombstoneAt(dead.pos, di)
		}
		return werr == nil
	})
	if rerr == nil && werr == nil {
		werr = rows.flush()
	}
	if rerr != nil {
		return res, rerr
	}
	if werr != nil {
		return res, fmt.Errorf("keytable: write %s: %w", name, werr)
	}
	for _, s := range srcs {
		if s.win != nil {
			if err := s.win.checkSum(); err != nil {
				return res, err
			}
		}
	}
	h, fps, err := fw.finish()
	if err != nil {
		return res, fmt.Errorf("keytable: write %s: %w", name, err)
	}
	for x, n := range drops {
		res.dropped = append(res.dropped, ExpiryCount{Expires: x, Count: n})
	}
	slices.SortFunc(res.dropped, func(a, b ExpiryCount) int { return cmp.Compare(a.Expires, b.Expires) })
	if h.count+h.deleted == 0 {
		res.empty = true
		return res, nil
	}
	if h.values > 0 {
		if err = vw.commit(); err != nil {
			return res, err
		}
	}
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("keytable: fsync %s: %w", name, err)
	}
	if err := t.fs.Rename(name+".tmp", name); err != nil {
		return res, fmt.Errorf("keytable: %w", err)
	}
	res.fps = fps
	return res, syncDir(t.fs, t.dir)
}

// valueOut is a value file being written beside a key file: NNNNNN.values,
// written as NNNNNN.values.tmp until commit.
type valueOut struct {
	t    *Table
	name string
	f    file
	w    *valuefile.Writer
	pair uint64
	done bool
}

// newValueOut starts the value file of key file num.
func (t *Table) newValueOut(num uint64) (*valueOut, error) {
	name := valuesName(t.dir, num)
	f, err := t.fs.OpenFile(name+".tmp", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	vo := &valueOut{t: t, name: name, f: f, pair: rand.Uint64() | 1}
	vo.w = valuefile.NewWriter(f, valueOptions(vo.pair, vo.t.opts.ValueBlockSize, vo.t.opts.StoredValues))
	return vo, nil
}

func (vo *valueOut) writer() *valuefile.Writer {
	if vo == nil {
		return nil
	}
	return vo.w
}

func (vo *valueOut) pairing() uint64 {
	if vo == nil {
		return 0
	}
	return vo.pair
}

// commit finishes the value file, syncs it and gives it its name.
func (vo *valueOut) commit() error {
	_, err := vo.w.Close()
	if err == nil {
		err = vo.f.Sync()
	}
	if err == nil {
		err = vo.f.Close()
		vo.f = nil
	}
	if err == nil {
		err = vo.t.fs.Rename(vo.name+".tmp", vo.name)
	}
	if err != nil {
		return fmt.Errorf("keytable: write %s: %w", vo.name, err)
	}
	vo.done = true
	return nil
}

// DefaultValueBlockSize is the decoded size the table's value blocks are
// cut at (Options.ValueBlockSize). They are compressed without a
// dictionary: zstd decodes a block with one through its generic code,
// without one through its assembly, and the dictionary's tables are
// copied in before each block is encoded.
// On 200,000 URLs derived from the corpus (as go run ./bench derives
// them) in key order, a loaded machine (valuefile's BenchmarkWrite and
// BenchmarkRead): 8 KiB blocks with a trained 16 KiB dictionary took 0.439
// of the URLs' bytes and 34-65 µs to decode a block (226-427 ns a value);
// without one, 8 KiB blocks 0.486 and 17 µs, 16 KiB 0.459 and 28 µs (91 ns
// a value), 32 KiB 0.441 and 98 µs; encoding took about half the time
// without. Files written with a dictionary (before) still read, and a
// merge copies their blocks as they are.
//
// A read of one value decodes its whole block: a reader whose values are
// read one at a time from random places (a crawl frontier's records) is
// better served by smaller blocks.
const DefaultValueBlockSize = 16 << 10

// valueOptions are the options of the value files the table writes,
// paired with their key file by pair, cut in blocks of blockSize, stored
// uncompressed or not.
func valueOptions(pair uint64, blockSize int, stored bool) valuefile.Options {
	return valuefile.Options{Pair: pair, NoTrain: true, BlockSize: blockSize, Stored: stored}
}

// abort removes the value file unless committed (and not then claimed by
// a key file: the caller removes it with the key file).
func (vo *valueOut) abort() {
	if !vo.done {
		vo.w.Abort()
	}
	if vo.f != nil {
		vo.f.Close()
	}
	if !vo.done {
		vo.t.fs.Remove(vo.name + ".tmp")
	}
}

// Verify checks every key file's checksums and order, and every value
// file's blocks.
func (t *Table) Verify() error {
	files, err := t.acquireFiles()
	if err != nil {
		return err
	}
	defer t.releaseFiles(files)
	var errs []error
	for _, f := range files {
		if err := f.verify(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// acquireFiles returns the table's files, counted (releaseFiles), and
// counts the caller among the readers Close waits for.
func (t *Table) acquireFiles() ([]*keyFile, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return nil, store.ErrClosed
	}
	files := slices.Clone(t.files)
	for _, f := range files {
		f.acquire()
	}
	t.readers.Add(1)
	return files, nil
}

func (t *Table) releaseFiles(files []*keyFile) {
	for _, f := range files {
		f.release()
	}
	t.readers.Done()
}
