package keytable

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlhash/urlhash/index/internal/valuefile"
	"github.com/urlhash/urlhash/store"
)

// DefaultDeltaKeys is the smallest delta of the default sizing (see
// Options.DeltaKeys): 49,152 keys, about 2.5 MiB a delta (40 bytes a key, a
// quarter more entries allocated, its index and bitset). Measured with go
// run ./bench/shared -n 1000000 (peak RSS of the server): 168-176 MiB with
// 196,608 keys, 162-168 with 98,304, 154 with 49,152, throughput the same
// within the noise (branch kt-read); on the final code, with the served
// path's other memory gone, 49,152 saved 3 MiB more of 45. The merges'
// writes grow as the delta shrinks (keys written per key added, by the
// geometric plan: 4.7, 5.5 and 7.1 at 10M keys for 196,608, 98,304 and
// 49,152; 7.5, 9.1, 9.7 at 100M).
const DefaultDeltaKeys = 3 << 14

// By default a delta holds a deltaShare-th of the table's keys, between
// DefaultDeltaKeys and maxAutoDeltaKeys (about 13 MiB a delta): a small
// delta is the small table's memory, but as the table grows each merge
// rewrites more, and a small delta filled while a large merge still ran
// stalled the writers (go run ./bench/shared -n 10000000, serve's CPU
// and wall: 72.7 s and 62.5-64.9 s with 49,152 keys, 3.2 s of stalls in
// 13 waits; 65.6 s and 56.3 s with 262,144, none; peak RSS 120 and 144
// MiB; a 32nd of the keys instead: 68.6 s, 59.5 s, 121 MiB; a 16th:
// 67.4 s, 58.0 s, 133 MiB).
const (
	deltaShare       = 16
	maxAutoDeltaKeys = 1 << 18
)

// DefaultDeltaBytes bounds a delta's entries and values (see
// Options.DeltaBytes): 32 MiB, more than a full default delta of key-only
// entries (about 13 MiB) or of entries with times (26 MiB), so that the
// number of keys decides unless the entries carry values.
const DefaultDeltaBytes = 32 << 20

// DefaultValueCache is the default size of the cache of decoded value
// blocks for single reads (Options.ValueCache): 4 MiB, a thousand blocks.
const DefaultValueCache = 4 << 20

// maxDeltaKeys bounds Options.DeltaKeys (a delta numbers its entries with
// 32 bits).
const maxDeltaKeys = 1 << 30

// Options configures Open. A nil *Options means defaults.
type Options struct {
	// ReadOnly opens without writing: no merge, no new log segment, and
	// writes return store.ErrReadOnly. Default false.
	ReadOnly bool
	// DeltaKeys is the number of changed keys the delta holds before it is
	// frozen and merged into a key file; two deltas at most are in
	// memory. At most 2^30. Default: a 16th of the table's keys when the
	// delta starts, at least DefaultDeltaKeys (49,152: about 2.5 MiB) and
	// at most 262,144 (about 13 MiB).
	DeltaKeys int
	// DeltaBytes bounds the bytes of a delta's entries and values (40
	// bytes a key-only entry, 88 with columns, and the values' bytes): a
	// delta that reaches it is merged too. Default DefaultDeltaBytes.
	DeltaBytes int64
	// Now is the table's clock, in unix seconds: an entry expires when it
	// reaches its Cols.Expires. Default: the wall clock.
	Now func() int64
	// Expired is called by a merge with the expired records it dropped
	// (counts by expiry second), once the key file without them is
	// installed: the table's count (Len) then no longer holds them. It
	// must not call the table. Default nil.
	Expired func(dropped []ExpiryCount)
	// ValueCache is the bytes of decoded value blocks kept for single
	// reads (Get). Default DefaultValueCache; negative: none.
	ValueCache int64
	// ValueBlockSize is the decoded size of the value blocks merges and
	// ingests write (the blocks a merge copies keep theirs). Default
	// DefaultValueBlockSize.
	ValueBlockSize int
	// StoredValues writes those blocks uncompressed
	// (valuefile.Options.Stored): a single read then costs a pread, not
	// a decode. Blocks already written keep their form. Default false.
	StoredValues bool
	// Replay is called at Open with the opaque bytes of each logged batch
	// not yet merged, in log order (see Batch.Opaque). Default nil.
	Replay func(opaque []byte) error
	// BeforeDrop is called by a merge before the log segments it merged
	// stop being read at Open (before the manifest that drops them is
	// written), so that the caller makes durable what it derived from
	// their opaque bytes. An error fails the merge. Default nil.
	BeforeDrop func() error
	// IgnoreSynced opens a table whose log lost records a sync
	// acknowledged (see ErrLost), to copy what is left. Default false.
	IgnoreSynced bool
	// noMerge keeps merges from starting (tests).
	noMerge bool
	// fs is the file system (tests); nil: the operating system's.
	fs fsys
}

// Table is an open key table. Its methods are safe for concurrent use.
type Table struct {
	dir  string
	opts Options
	fs   fsys

	// mu guards files, delta, frozen and closed; lookups hold it shared.
	mu     sync.RWMutex
	files  []*keyFile // oldest first
	search []*keyFile // the files in the order lookups search them (see setSearch)
	delta  *delta
	frozen *delta // being merged, or nil
	closed bool
	// readers counts the reads that use files beyond mu (scans, value
	// reads); Close waits for them.
	readers sync.WaitGroup

	// wmu serialises writers: the log append and the delta update.
	// deltaKeys is the size of the delta, set as it starts (see
	// Options.DeltaKeys).
	wmu       sync.Mutex
	deltaKeys int
	log       file
	logNum    uint64
	oldLogs   []file // segments of the frozen delta, synced
	man       manifest
	buf       []byte
	segBytes  int64 // bytes in the current segment
	mark      syncMark
	// merging is set while a merge runs; mergeDone is signalled (under
	// wmu) when it ends. inputs are the files it merges with the frozen
	// delta, and mergeNow the clock it drops expired records by.
	merging   bool
	mergeDone *sync.Cond
	mergeErr  error
	mergeWG   sync.WaitGroup
	stopMerge bool        // Close started
	merged    mergeCounts // the merges finished, for Merges
	inputs    []*keyFile
	mergeNow  int64

	// Group commit: written counts the records appended (the position of
	// the last), synced the position known durable.
	written atomic.Uint64
	smu     sync.Mutex
	scond   *sync.Cond
	synced  uint64
	syncing bool
	syncErr error // sticky: after a failed fsync nothing is known durable
	syncs   atomic.Int64

	count atomic.Int64
	// bufs holds the *lookupBufs lookups work in (a read is at most
	// maxReadKeys rows), hitPool the *hitBufs of writes.
	bufs    lookupBufList
	hitPool sync.Pool
	// builds counts the fingerprint builds running (see keyFile.fp);
	// Close sets stopBuilds and waits for them.
	builds     sync.WaitGroup
	stopBuilds atomic.Bool

	// cache holds the value files' decoders and decoded blocks.
	cache *valuefile.Cache
}

// Open opens the key table in dir, creating it unless opts.ReadOnly.
// Damage (a listed file missing, a checksum mismatch, a log record damaged
// anywhere but at the tail of the newest segment) is an error wrapping
// store.ErrCorrupt that names the file.
func Open(dir string, opts *Options) (_ *Table, err error) {
	t := &Table{dir: dir}
	if opts != nil {
		t.opts = *opts
	}
	t.fs = t.opts.fs
	if t.fs == nil {
		t.fs = osFS{}
	}
	t.opts.DeltaKeys = min(t.opts.DeltaKeys, maxDeltaKeys)
	if t.opts.DeltaBytes <= 0 {
		t.opts.DeltaBytes = DefaultDeltaBytes
	}
	if t.opts.ValueBlockSize <= 0 {
		t.opts.ValueBlockSize = DefaultValueBlockSize
	}
	switch {
	case t.opts.ValueCache == 0:
		t.opts.ValueCache = DefaultValueCache
	case t.opts.ValueCache < 0:
		t.opts.ValueCache = 0
	}
	t.cache = valuefile.NewCache(t.opts.ValueCache)
	t.deltaKeys = t.deltaKeysFor(0)
	t.delta = newDelta(t.deltaKeys)
	t.scond = sync.NewCond(&t.smu)
	t.mergeDone = sync.NewCond(&t.wmu)
	if !t.opts.ReadOnly {
		if err := t.fs.MkdirAll(dir); err != nil {
			return nil, fmt.Errorf("keytable: %w", err)
		}
	}
	m, ok, err := readManifest(t.fs, dir)
	if err != nil {
		return nil, err
	}
	names, err := t.fs.ReadDir(dir)
	if err != nil && !(t.opts.ReadOnly && errors.Is(err, os.ErrNotExist)) {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	var logs, stray []uint64
	for _, name := range names {
		num, kind := parseName(name)
		switch {
		case kind == "log":
			logs = append(logs, num)
		case (kind == "keys" || kind == "values") && (!ok || !slices.Contains(m.files, num)):
			stray = append(stray, num)
		}
	}
	if !ok {
		if len(logs) > 0 || len(m.files) > 0 {
			// Segments without a manifest: the manifest is written
			// before the first segment, so this is damage.
			return nil, fmt.Errorf("%w: %s: log segments but no %s", store.ErrCorrupt, dir, manifestName)
		}
		m = manifest{logStart: 1, nextNum: 1}
		if !t.opts.ReadOnly {
			if err := writeManifest(t.fs, dir, &m); err != nil {
				return nil, err
			}
			// The table's directory itself, perhaps just made.
			if err := syncDir(t.fs, filepath.Dir(dir)); err != nil {
				return nil, err
			}
		}
	}
	t.man = m
	defer func() {
		if err != nil {
			t.stopBuilds.Store(true) // a replay's lookups may have started one
			t.builds.Wait()
			t.delta.release()
			t.closeFiles()
			t.cache.Close()
		}
	}()
	var live int64
	for _, num := range m.files {
		f, err := openFile(t.fs, fileName(dir, num), num, t.cache)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				err = fmt.Errorf("%w: %s listed in the manifest is missing", store.ErrCorrupt, fileName(dir, num))
			}
			return nil, err
		}
		t.files = append(t.files, f)
		live += int64(f.hdr.count) - int64(f.hdr.deleted)
	}
	t.count.Store(live)
	t.deltaKeys = t.deltaKeysFor(live)
	t.delta = newDelta(t.deltaKeys)
	t.setSearch()
	slices.Sort(logs)
	var need []uint64
	for _, n := range logs {
		if n >= m.logStart {
			need = append(need, n)
		}
	}
	for i := range need {
		if need[i] != m.logStart+uint64(i) && !t.opts.IgnoreSynced {
			return nil, fmt.Errorf("%w: %s is missing (the log holds later segments)", ErrLost, logName(dir, m.logStart+uint64(i)))
		}
	}
	r := replay{dir: dir, ignoreMarked: t.opts.IgnoreSynced}
	if r.markSeg, r.markSeq, err = readMark(t.fs, dir); err != nil {
		return nil, err
	}
	for i, n := range need {
		last := i == len(need)-1
		name := logName(dir, n)
		data, err := t.fs.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("keytable: %w", err)
		}
		end, torn, err := readLog(data, last, func(rec *record) error {
			seq, err := r.next(rec, n)
			if err != nil {
				return err
			}
			if err := t.apply(rec, seq, true); err != nil {
				return err
			}
			if len(rec.opaque) > 0 && t.opts.Replay != nil {
				return t.opts.Replay(rec.opaque)
			}
			return nil
		})
		if err != nil {
			if errors.Is(err, ErrLost) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if last {
			r.torn, r.tornSeg = torn, n
			// Before the tail is cut: a refused log stays as it is.
			if err := r.check(m.logStart); err != nil {
				return nil, err
			}
		}
		if (end < int64(len(data)) || len(data) < logHeader) && !t.opts.ReadOnly {
			// A torn tail, or a header not written whole: never
			// acknowledged. Cut it (or write the header), durably, so
			// that the segment reads whole once it is no longer the
			// newest (a cut a power loss undid would read as damage).
			if err := cutLog(t.fs, name, end); err != nil {
				return nil, err
			}
		}
	}
	if err := r.check(m.logStart); err != nil {
		return nil, err
	}
	// Numbers go on from the last record, or from the last one marked
	// when a merge dropped it.
	seq := max(r.seq, r.markSeq)
	t.written.Store(seq)
	t.synced = seq
	t.mark.seg, t.mark.marked = r.seg, r.markSeq
	if t.opts.ReadOnly {
		return t, nil
	}
	// Key and value files no manifest lists are the output of a merge a
	// crash interrupted, or the inputs of one that completed: copies.
	for _, num := range stray {
		t.fs.Remove(fileName(dir, num))
		t.fs.Remove(valuesName(dir, num))
	}
	for _, n := range logs {
		if n < m.logStart {
			t.fs.Remove(logName(dir, n))
		}
	}
	t.fs.Remove(filepath.Join(dir, manifestName+".tmp"))
	for _, name := range names {
		if strings.HasSuffix(name, ".tmp") {
			t.fs.Remove(filepath.Join(dir, name))
		}
	}
	t.logNum = m.logStart + uint64(len(need))
	if t.log, err = createLog(t.fs, logName(dir, t.logNum)); err != nil {
		return nil, err
	}
	if t.mark.f, err = t.fs.OpenFile(filepath.Join(dir, SyncedName), os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		t.log.Close()
		return nil, fmt.Errorf("keytable: %w", err)
	}
	if err := syncDir(t.fs, dir); err != nil {
		return nil, err
	}
	for _, n := range need {
		f, err := t.fs.OpenFile(logName(dir, n), os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("keytable: %w", err)
		}
		t.oldLogs = append(t.oldLogs, f)
	}
	if len(need) > 0 || t.hasVersion1() {
		// Merge what the log replayed, so that segments do not pile up
		// over reopenings (and rewrite version 1 files).
		t.wmu.Lock()
		t.rotateLocked(true)
		t.wmu.Unlock()
	}
	return t, nil
}

// hasVersion1 reports whether a file is of version 1 (written before
// columns and page checksums), which merges rewrite.
func (t *Table) hasVersion1() bool {
	for _, f := range t.files {
		if f.hdr.version == fileVersion1 {
			return true
		}
	}
	return false
}

// now returns the table's clock.
func (t *Table) now() int64 {
	if t.opts.Now != nil {
		return t.opts.Now()
	}
	return time.Now().Unix()
}

// parseName returns the number and kind ("keys", "values", "log") of a
// file name of the table, or kind "".
func parseName(name string) (uint64, string) {
	base, kind, ok := strings.Cut(name, ".")
	if !ok || (kind != "keys" && kind != "log" && kind != "values") || len(base) < 6 {
		return 0, ""
	}
	n, err := strconv.ParseUint(base, 10, 64)
	if err != nil {
		return 0, ""
	}
	return n, kind
}

// apply applies a logged record to the delta: writers after their append
// (which decided its changes from the same state), and Open's replay
// (replaying: opCond and opKeep rows look the key up in the files). The
// caller holds mu exclusively or is Open. It keeps the count of records.
func (t *Table) apply(rec *record, seq uint64, replaying bool) error {
	d := t.delta
	for i := range rec.added {
		k := &rec.added[i]
		prev, ok := d.get(k)
		e := deltaEntry{seq: seq, row: true, cols: rec.addedCols}
		switch {
		case ok && prev.row: // an expired row of the delta, replaced
			e.hides = prev.hides
		case ok: // over the delta's tombstone, which hid a row
			e.hides = true
			t.count.Add(1)
		default:
			t.count.Add(1)
		}
		d.put(k, e)
	}
	for i := range rec.deleted {
		k := &rec.deleted[i]
		prev, ok := d.get(k)
		switch {
		case ok && prev.row && !prev.hides:
			d.remove(k) // absent below
		case ok && !prev.row:
			continue // not logged: nothing to delete
		default:
			d.put(k, deltaEntry{seq: seq})
		}
		t.count.Add(-1)
	}
	for i := range rec.sets {
		o := &rec.sets[i]
		prev, ok := d.get(&o.k)
		e := deltaEntry{seq: seq, row: true, cols: o.cols, val: dval{b: o.value}}
		var below hit
		if !ok && replaying && o.flags&(opCond|opKeep) != 0 {
			if err := t.lookupBelow(&o.k, &below); err != nil {
				return err
			}
		}
		switch {
		case ok && prev.row:
			e.hides = prev.hides
		case ok:
			e.hides = true
			t.count.Add(1)
		case o.flags&opCond != 0:
			e.hides = replaying && below.st == stRow
			if !e.hides {
				t.count.Add(1)
			}
		default:
			e.hides = o.flags&opHides != 0
			if !e.hides {
				t.count.Add(1)
			}
		}
		if o.flags&opKeep != 0 {
			switch {
			case ok:
				e.val = prev.val
			case replaying:
				if below.st == stRow {
					e.val = below.value()
				}
			default:
				e.val = o.kept
			}
		}
		d.put(&o.k, e)
	}
	return nil
}

// lookupBelow looks k up in the key files only (Open's replay: the frozen
// delta is empty, and the delta is searched first by the caller). The
// caller holds mu or is Open.
func (t *Table) lookupBelow(k *Key, h *hit) error {
	*h = hit{}
	lb := t.lookupBufs()
	defer t.bufs.put(lb)
	for _, f := range t.search {
		st, row, buf, err := f.find(k, lb.keys)
		t.maybeBuild(f)
		lb.keys = buf[:0]
		if err != nil {
			return err
		}
		if st != stAbsent {
			h.setFile(f, st, row)
			return nil
		}
	}
	return nil
}

// Where a lookup found a key.
const (
	inNone = iota
	inDelta
	inFrozen
	inFile
)

// hit is what a lookup found for a key: the newest source that holds it,
// and its state there.
type hit struct {
	where uint8
	st    uint8 // stRow or stDead (where != inNone)
	hides bool  // a row of a delta over a row below it
	seq   uint64
	cols  Cols
	f     *keyFile // inFile
	ref   uint32   // inFile: value ordinal + 1
	val   dval     // a delta's
}

func (h *hit) setDelta(e *deltaEntry, where uint8) {
	*h = hit{where: where, st: stDead, hides: e.hides, seq: e.seq, cols: e.cols, val: e.val}
	if e.row {
		h.st = stRow
	}
}

func (h *hit) setFile(f *keyFile, st int, row []byte) {
	*h = hit{where: inFile, st: uint8(st), f: f}
	if st == stRow {
		h.cols = f.hdr.lay.cols(row)
		h.ref = f.hdr.lay.ref(row)
	}
}

// isLive reports whether the key is live at now (now is called only for
// a row with an expiry).
func (h *hit) isLive(now func() int64) bool {
	return h.st == stRow && (h.cols.Expires == 0 || h.cols.Expires > now())
}

// value returns where the row's value is.
func (h *hit) value() dval {
	if h.where == inFile {
		if h.ref == 0 {
			return dval{}
		}
		return dval{f: h.f, ord: h.ref}
	}
	return h.val
}

// lookup sets h to what the table holds for k. The caller holds mu.
func (t *Table) lookup(k *Key, h *hit) error {
	if e, ok := t.delta.get(k); ok {
		h.setDelta(&e, inDelta)
		return nil
	}
	if e, ok := t.frozen.get(k); ok {
		h.setDelta(&e, inFrozen)
		return nil
	}
	return t.lookupBelow(k, h)
}

// lookupBufs returns a lookup's working memory, to put back in t.bufs.
func (t *Table) lookupBufs() *lookupBufs {
	if lb := t.bufs.get(); lb != nil {
		return lb
	}
	return &lookupBufs{keys: make([]byte, 0, maxReadKeys*KeySize)}
}

// A lookupBufList keeps a few lookups' working memory for the next ones.
// Unlike a sync.Pool, a collection does not empty it: serve collects
// often (GOGC 10), and its lookups allocated their 128 KiB again after
// each collection (a frontier's drain of 1M URLs: 362 MB of 4.5 GB).
type lookupBufList struct {
	mu   sync.Mutex
	free []*lookupBufs
}

// The bounds of a lookupBufList: the buffers it keeps, and the largest
// batch whose candidate ranges it keeps (larger ones are let go).
const (
	lookupBufsKept     = 8
	lookupBufsMaxSpans = 1 << 16
)

func (l *lookupBufList) get() *lookupBufs {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.free)
	if n == 0 {
		return nil
	}
	lb := l.free[n-1]
	l.free = l.free[:n-1]
	return lb
}

func (l *lookupBufList) put(lb *lookupBufs) {
	if cap(lb.spans) > lookupBufsMaxSpans || cap(lb.keys) > 2*maxReadKeys*KeySize {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.free) < lookupBufsKept {
		l.free = append(l.free, lb)
	}
}

// lookupBatch sets hits[i] to what the table holds for keys[i], for each i
// of pending (which it reorders), but searches none of the files in skip
// (see WriteAfter). The files are searched with coalesced reads, in key
// order when keys are sorted. The caller holds mu.
func (t *Table) lookupBatch(keys []Key, pending []int, hits []hit, skip []*keyFile) error {
	rest := pending[:0]
	for _, i := range pending {
		if e, ok := t.delta.get(&keys[i]); ok {
			hits[i].setDelta(&e, inDelta)
		} else if e, ok := t.frozen.get(&keys[i]); ok {
			hits[i].setDelta(&e, inFrozen)
		} else {
			hits[i] = hit{}
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 || len(t.search) == 0 {
		return nil
	}
	lb := t.lookupBufs()
	defer t.bufs.put(lb)
	for _, f := range t.search {
		if slices.Contains(skip, f) {
			continue
		}
		var err error
		rest, err = f.findBatch(keys, rest, lb, func(i, st int, row []byte) { hits[i].setFile(f, st, row) })
		t.maybeBuild(f)
		if err != nil || len(rest) == 0 {
			return err
		}
	}
	return nil
}

// maybeBuild starts building f's fingerprints in the background once
// lookups have searched it enough (keyFile.wantsFingerprints). The caller
// holds mu, shared, on an open table: Close, which takes mu to close the
// table, then waits for the build.
func (t *Table) maybeBuild(f *keyFile) {
	if f.wantsFingerprints() {
		f.acquire()
		t.builds.Go(func() {
			defer f.release()
			f.buildFingerprints(&t.stopBuilds)
		})
	}
}

// setSearch sets the order lookups search the files in: newest first,
// where the first file that holds a key, a row or a tombstone, decides;
// but when no file holds a tombstone, a key is in one file at most (a row
// written over another comes with a tombstone) and any order answers the
// same, so the largest first, which holds most of the keys (a present key
// is then found by the first search, not the last). The caller holds mu
// exclusively or is Open.
func (t *Table) setSearch() {
	t.search = slices.Clone(t.files)
	slices.Reverse(t.search)
	for _, f := range t.files {
		if f.hdr.deleted > 0 {
			return
		}
	}
	slices.SortStableFunc(t.search, func(a, b *keyFile) int { return cmp.Compare(b.hdr.count, a.hdr.count) })
}

// Has reports whether k is live. The answer may rest on a change not yet
// durable: Has returns the log position to pass to SyncTo before relying
// on it (0 when durable).
func (t *Table) Has(k *Key) (bool, uint64, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return false, 0, store.ErrClosed
	}
	var h hit
	if err := t.lookup(k, &h); err != nil {
		return false, 0, err
	}
	return t.isLive(&h), h.seq, nil
}

// isLive reports whether h is live by the table's clock, read only for a
// row with an expiry.
func (t *Table) isLive(h *hit) bool {
	return h.st == stRow && (h.cols.Expires == 0 || h.cols.Expires > t.now())
}

// HasBatch sets found[i] to whether keys[i] is live and returns the log
// position to pass to SyncTo before relying on the answers. Sorted keys
// are looked up in order, neighbouring keys of a file in one read.
func (t *Table) HasBatch(keys []Key, found []bool) (uint64, error) {
	seq, _, err := t.HasBatchView(keys, found)
	return seq, err
}

// A View is the key files one lookup searched. A key the lookup found
// absent and added since is in the delta or in a file written since: a
// later lookup of it need not search the view's files again (see
// AddAfter), unless the lookup found an expired record of it.
type View struct {
	files   []*keyFile
	expired map[Key]struct{}
}

// HasBatchView is HasBatch, and returns the view it searched.
func (t *Table) HasBatchView(keys []Key, found []bool) (uint64, View, error) {
	return t.lookupView(keys, func(i int, h *hit, live bool) { found[i] = live })
}

// GetBatchView is GetBatch without values (found[i].HasValue says which
// have one), and returns the view it searched, as HasBatchView.
func (t *Table) GetBatchView(keys []Key, found []Found) (uint64, View, error) {
	return t.lookupView(keys, func(i int, h *hit, live bool) {
		found[i] = Found{Live: live, Seq: h.seq}
		if live {
			v := h.value()
			found[i].Cols, found[i].HasValue = h.cols, v.has()
		}
	})
}

// lookupView looks keys up, calls fn with each key's hit and whether it
// is live, and returns the log position of the live ones and the view.
func (t *Table) lookupView(keys []Key, fn func(i int, h *hit, live bool)) (uint64, View, error) {
	hb, pending := t.getHits(len(keys))
	defer t.hitPool.Put(hb)
	hits := hb.a
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return 0, View{}, store.ErrClosed
	}
	if err := t.lookupBatch(keys, pending, hits, nil); err != nil {
		return 0, View{}, err
	}
	var need uint64
	now := t.clock()
	v := View{files: t.search}
	for i := range keys {
		h := &hits[i]
		live := h.isLive(now)
		fn(i, h, live)
		if live {
			need = max(need, h.seq)
		} else if h.st == stRow {
			if v.expired == nil {
				v.expired = map[Key]struct{}{}
			}
			v.expired[keys[i]] = struct{}{}
		}
	}
	return need, v, nil
}

// getHits returns hit buffers (to put back in t.hitPool) with n hits in
// hb.a, and the indexes 0..n-1 in pending.
func (t *Table) getHits(n int) (*hitBufs, []int) {
	hb, _ := t.hitPool.Get().(*hitBufs)
	if hb == nil {
		hb = &hitBufs{}
	}
	hb.a = slices.Grow(hb.a[:0], n)[:n]
	hb.pending = slices.Grow(hb.pending[:0], n)[:n]
	for i := range hb.pending {
		hb.pending[i] = i
	}
	return hb, hb.pending
}

// clock returns a clock that reads the table's once, at its first call:
// a batch's keys expire by one time.
func (t *Table) clock() func() int64 {
	var now int64
	read := false
	return func() int64 {
		if !read {
			now, read = t.now(), true
		}
		return now
	}
}

// Get returns what the table holds for k and, when withValue and k is
// live with a value, appends its value to dst and returns it.
func (t *Table) Get(k *Key, dst []byte, withValue bool) (Found, []byte, error) {
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return Found{}, dst, store.ErrClosed
	}
	var h hit
	if err := t.lookup(k, &h); err != nil {
		t.mu.RUnlock()
		return Found{}, dst, err
	}
	fd := Found{Live: t.isLive(&h), Seq: h.seq}
	if !fd.Live {
		t.mu.RUnlock()
		return fd, dst, nil
	}
	fd.Cols = h.cols
	v := h.value()
	fd.HasValue = v.has()
	if !withValue || !fd.HasValue {
		t.mu.RUnlock()
		return fd, dst, nil
	}
	if v.f == nil {
		dst = append(dst, v.b...)
		t.mu.RUnlock()
		return fd, dst, nil
	}
	v.f.acquire()
	t.readers.Add(1)
	t.mu.RUnlock()
	defer t.readers.Done()
	defer v.f.release()
	out, err := v.f.vals.Value(v.ord-1, dst)
	return fd, out, err
}

// GetBatch sets found[i] to what the table holds for keys[i] and returns
// the log position to pass to SyncTo before relying on the answers (as
// HasBatch). With value not nil, it then reads the values of the live
// keys that have one and calls value(i, v) for each, v valid during the
// call, grouped by value file in ordinal order: sorted keys read each
// block once. An error of value ends the reads and is returned.
func (t *Table) GetBatch(keys []Key, found []Found, value func(i int, v []byte) error) (uint64, error) {
	hb, pending := t.getHits(len(keys))
	defer t.hitPool.Put(hb)
	hits := hb.a
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return 0, store.ErrClosed
	}
	if err := t.lookupBatch(keys, pending, hits, nil); err != nil {
		t.mu.RUnlock()
		return 0, err
	}
	var need uint64
	now := t.clock()
	var reads []valueRead
	if value != nil {
		reads = make([]valueRead, 0, len(keys))
	}
	for i := range keys {
		h := &hits[i]
		fd := Found{Live: h.isLive(now), Seq: h.seq}
		if fd.Live {
			need = max(need, h.seq)
			fd.Cols = h.cols
			v := h.value()
			fd.HasValue = v.has()
			if value != nil && fd.HasValue {
				if v.f != nil {
					v.f.acquire()
				}
				reads = append(reads, valueRead{i: i, v: v})
			}
		}
		found[i] = fd
	}
	if len(reads) == 0 {
		t.mu.RUnlock()
		return need, nil
	}
	t.readers.Add(1)
	t.mu.RUnlock()
	defer t.readers.Done()
	return need, readValues(reads, value)
}

// valueRead is a value GetBatch reads: for the key of index i.
type valueRead struct {
	i int
	v dval
}

// readValues calls fn with each value of reads (whose files are acquired:
// it releases them), the delta's first, then file by file in ordinal
// order.
func readValues(reads []valueRead, fn func(i int, v []byte) error) error {
	slices.SortFunc(reads, func(a, b valueRead) int {
		if c := cmp.Compare(fileNum(a.v.f), fileNum(b.v.f)); c != 0 {
			return c
		}
		return cmp.Compare(a.v.ord, b.v.ord)
	})
	var err error
	var cur *valuefile.Cursor
	var curFile *keyFile
	for j := range reads {
		r := &reads[j]
		if r.v.f == nil {
			if err == nil {
				err = fn(r.i, r.v.b)
			}
			continue
		}
		if err == nil {
			if r.v.f != curFile {
				curFile, cur = r.v.f, r.v.f.vals.NewSharingCursor()
			}
			var b []byte
			if b, err = cur.Value(r.v.ord - 1); err == nil {
				err = fn(r.i, b)
			}
		}
		r.v.f.release()
	}
	return err
}

// fileNum orders files for readValues (nil, the delta's values, first).
func fileNum(f *keyFile) uint64 {
	if f == nil {
		return 0
	}
	return f.num + 1
}

// Len returns the number of records: live keys, and those expired by the
// clock that no merge has dropped yet and no write replaced. While a merge
// runs, an expired record it drops that a write replaced meanwhile is
// counted until the merge installs its file (and reports it).
func (t *Table) Len() int64 { return t.count.Load() }

// deltaKeysFor returns the size of a delta that starts when the table
// holds live keys (see Options.DeltaKeys).
func (t *Table) deltaKeysFor(live int64) int {
	if t.opts.DeltaKeys > 0 {
		return t.opts.DeltaKeys
	}
	return int(min(max(live/deltaShare, DefaultDeltaKeys), maxAutoDeltaKeys))
}

// full reports whether the delta is full (by keys or bytes). The caller
// holds wmu.
func (t *Table) full() bool {
	return t.delta.len() >= t.deltaKeys || t.delta.bytes() >= t.opts.DeltaBytes
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
	t.readers.Wait()
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
	t.delta.release()
	t.frozen.release()
	t.closeFiles()
	t.cache.Close()
	if err == nil {
		err = err2
	}
	return err
}

// closeFiles drops the table's count of its files (closing them).
func (t *Table) closeFiles() {
	for _, f := range t.files {
		f.release()
	}
	t.files = nil
}
