// Package keytable stores a set of 32-byte keys: immutable sorted key
// files with a bucket-offset array and, once built, a byte of fingerprint
// a key (a lookup reads, with pread, only the keys of its bucket that
// share its fingerprint: in a file without the key, usually none; a
// sorted batch reads each file in key order, neighbouring candidates in
// one read), a bounded in-memory delta of recent changes (its size grows
// with the table), and an append-only log that makes every change
// durable, shared between concurrent writers (group commit). When the
// delta is full it is frozen and merged into a new key file in the
// background, beside the writers, in one walk of its sources.
//
// Deletions are tombstones until a merge reaches the oldest file. A key
// is live in at most one place: the newest source (delta, frozen delta,
// then files from newest to oldest) that holds it, live or deleted,
// decides.
//
// The index package owns the table; it keeps its filter in front of it.
package keytable

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/urlhash/urlhash/store"
)

// KeySize is the size of a key.
const KeySize = 32

// Key is a key of the table.
type Key = [KeySize]byte

// compareKeys orders keys as bytes: the order of key files, merges and
// batches.
func compareKeys(a, b Key) int { return bytes.Compare(a[:], b[:]) }

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
}

// deltaEntry is a key's state in a delta: live (added; absent below) or
// deleted (live below), and the log position that records it.
type deltaEntry struct {
	seq  uint64
	live bool
}

// Table is an open key table. Its methods are safe for concurrent use.
type Table struct {
	dir  string
	opts Options

	// mu guards files, delta, frozen and closed; lookups hold it shared.
	mu     sync.RWMutex
	files  []*keyFile // oldest first
	search []*keyFile // the files in the order lookups search them (see setSearch)
	delta  *delta
	frozen *delta // being merged, or nil
	closed bool
	// fmu is held shared by scans (which use files without mu) and
	// exclusively to close files a merge replaced.
	fmu sync.RWMutex

	// wmu serialises writers: the log append and the delta update.
	// deltaKeys is the size of the delta, set as it starts (see
	// Options.DeltaKeys).
	wmu       sync.Mutex
	deltaKeys int
	log       *os.File
	logNum    uint64
	oldLogs   []*os.File // segments of the frozen delta, synced
	man       manifest
	buf       []byte
	segBytes  int64 // bytes in the current segment
	mark      syncMark
	// merging is set while a merge runs; mergeDone is signalled (under
	// wmu) when it ends.
	merging   bool
	mergeDone *sync.Cond
	mergeErr  error
	mergeWG   sync.WaitGroup
	stopMerge bool        // Close started
	merged    mergeCounts // the merges finished, for Merges

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
	// maxReadKeys keys).
	bufs sync.Pool
	// builds counts the fingerprint builds running (see keyFile.fp);
	// Close sets stopBuilds and waits for them.
	builds     sync.WaitGroup
	stopBuilds atomic.Bool
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
	t.opts.DeltaKeys = min(t.opts.DeltaKeys, maxDeltaKeys)
	t.deltaKeys = t.deltaKeysFor(0)
	t.delta = newDelta(t.deltaKeys)
	t.scond = sync.NewCond(&t.smu)
	t.mergeDone = sync.NewCond(&t.wmu)
	if !t.opts.ReadOnly {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("keytable: %w", err)
		}
	}
	m, ok, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	names, err := os.ReadDir(dir)
	if err != nil && !(t.opts.ReadOnly && errors.Is(err, os.ErrNotExist)) {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	var logs, stray []uint64
	for _, e := range names {
		num, kind := parseName(e.Name())
		switch {
		case kind == "log":
			logs = append(logs, num)
		case kind == "keys" && (!ok || !slices.Contains(m.files, num)):
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
			if err := writeManifest(dir, &m); err != nil {
				return nil, err
			}
		}
	}
	t.man = m
	defer func() {
		if err != nil {
			t.stopBuilds.Store(true) // a replay's lookups may have started one
			t.builds.Wait()
			t.closeFiles()
		}
	}()
	var live int64
	for _, num := range m.files {
		f, err := openFile(fileName(dir, num), num)
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
	if r.markSeg, r.markSeq, err = readMark(dir); err != nil {
		return nil, err
	}
	for i, n := range need {
		last := i == len(need)-1
		name := logName(dir, n)
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("keytable: %w", err)
		}
		end, err := readLog(data, last, func(b Batch) error {
			seq, err := r.next(&b, n)
			if err != nil {
				return err
			}
			t.apply(&b, seq)
			if len(b.Opaque) > 0 && t.opts.Replay != nil {
				return t.opts.Replay(b.Opaque)
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
			// Before the tail is cut: a refused log stays as it is.
			if err := r.check(m.logStart); err != nil {
				return nil, err
			}
		}
		if end < int64(len(data)) && !t.opts.ReadOnly {
			// A torn tail: never acknowledged. Cut it, so that the
			// segment reads whole once it is no longer the newest.
			if err := os.Truncate(name, max(end, logHeader)); err != nil {
				return nil, fmt.Errorf("keytable: %w", err)
			}
			if end < logHeader {
				if err := os.WriteFile(name, append([]byte(logMagic), logVersion), 0o644); err != nil {
					return nil, fmt.Errorf("keytable: %w", err)
				}
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
	// Key files no manifest lists are the output of a merge a crash
	// interrupted, or the inputs of one that completed: both are copies.
	for _, num := range stray {
		os.Remove(fileName(dir, num))
	}
	for _, n := range logs {
		if n < m.logStart {
			os.Remove(logName(dir, n))
		}
	}
	os.Remove(filepath.Join(dir, manifestName+".tmp"))
	removeTemps(dir)
	t.logNum = m.logStart + uint64(len(need))
	if t.log, err = createLog(logName(dir, t.logNum)); err != nil {
		return nil, err
	}
	if t.mark.f, err = os.OpenFile(filepath.Join(dir, SyncedName), os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		t.log.Close()
		return nil, fmt.Errorf("keytable: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	for _, n := range need {
		f, err := os.OpenFile(logName(dir, n), os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("keytable: %w", err)
		}
		t.oldLogs = append(t.oldLogs, f)
	}
	if len(need) > 0 {
		// Merge what the log replayed, so that segments do not pile up
		// over reopenings.
		t.wmu.Lock()
		t.rotateLocked(true)
		t.wmu.Unlock()
	}
	return t, nil
}

func removeTemps(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.keys.tmp"))
	for _, n := range tmps {
		os.Remove(n)
	}
}

// parseName returns the number and kind ("keys", "log") of a file name of
// the table, or kind "".
func parseName(name string) (uint64, string) {
	base, kind, ok := strings.Cut(name, ".")
	if !ok || (kind != "keys" && kind != "log") || len(base) < 6 {
		return 0, ""
	}
	n, err := strconv.ParseUint(base, 10, 64)
	if err != nil {
		return 0, ""
	}
	return n, kind
}

// apply applies a logged batch to the delta (Open's replay, and writers
// after their append). The caller holds mu exclusively or is Open.
func (t *Table) apply(b *Batch, seq uint64) {
	for i := range b.Added {
		if e, ok := t.delta.get(&b.Added[i]); ok && !e.live {
			t.delta.remove(&b.Added[i]) // live again below
		} else {
			t.delta.put(&b.Added[i], deltaEntry{seq: seq, live: true})
		}
	}
	for i := range b.Deleted {
		if e, ok := t.delta.get(&b.Deleted[i]); ok && e.live {
			t.delta.remove(&b.Deleted[i]) // absent below
		} else {
			t.delta.put(&b.Deleted[i], deltaEntry{seq: seq})
		}
	}
	t.count.Add(int64(len(b.Added)) - int64(len(b.Deleted)))
}

// lookup returns whether k is live and the log position of the change
// that made it so (0: in a key file, durable). The caller holds mu.
func (t *Table) lookup(k *Key) (bool, uint64, error) {
	if e, ok := t.delta.get(k); ok {
		return e.live, e.seq, nil
	}
	if e, ok := t.frozen.get(k); ok {
		return e.live, e.seq, nil
	}
	lb := t.lookupBufs()
	defer t.bufs.Put(lb)
	for _, f := range t.search {
		st, buf, err := f.find(k, lb.keys)
		t.maybeBuild(f)
		lb.keys = buf[:0]
		if err != nil {
			return false, 0, err
		}
		if st != 0 {
			return st == 1, 0, nil
		}
	}
	return false, 0, nil
}

// lookupBufs returns a lookup's working memory, to put back in t.bufs.
func (t *Table) lookupBufs() *lookupBufs {
	if lb, ok := t.bufs.Get().(*lookupBufs); ok {
		return lb
	}
	return &lookupBufs{keys: make([]byte, 0, maxReadKeys*KeySize)}
}

// lookupBatch sets live[i] and seqs[i] (seqs may be nil) to what lookup
// returns for keys[i], for each i of pending (which it reorders), but
// searches none of the files in skip (see Add). The files are searched
// with coalesced reads, in key order when keys are sorted. The caller
// holds mu.
func (t *Table) lookupBatch(keys []Key, pending []int, live []bool, seqs []uint64, skip []*keyFile) error {
	rest := pending[:0]
	for _, i := range pending {
		e, ok := t.delta.get(&keys[i])
		if !ok {
			e, ok = t.frozen.get(&keys[i])
		}
		live[i] = e.live
		if seqs != nil {
			seqs[i] = e.seq
		}
		if !ok {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 || len(t.search) == 0 {
		return nil
	}
	lb := t.lookupBufs()
	defer t.bufs.Put(lb)
	found := func(i int, l bool) { live[i] = l }
	for _, f := range t.search {
		if slices.Contains(skip, f) {
			continue
		}
		var err error
		rest, err = f.findBatch(keys, rest, lb, found)
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
		t.builds.Go(func() { f.buildFingerprints(&t.stopBuilds) })
	}
}

// setSearch sets the order lookups search the files in: newest first,
// where the first file that holds a key, live or deleted, decides; but
// when no file holds a tombstone, a key is live in one file at most and
// any order answers the same, so the largest first, which holds most of
// the keys (a present key is then found by the first search, not the
// last). The caller holds mu exclusively or is Open.
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
	return t.lookup(k)
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
// AddAfter).
type View struct{ files []*keyFile }

// HasBatchView is HasBatch, and returns the view it searched.
func (t *Table) HasBatchView(keys []Key, found []bool) (uint64, View, error) {
	pending := make([]int, len(keys))
	for i := range pending {
		pending[i] = i
	}
	seqs := make([]uint64, len(keys))
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return 0, View{}, store.ErrClosed
	}
	if err := t.lookupBatch(keys, pending, found, seqs, nil); err != nil {
		return 0, View{}, err
	}
	var need uint64
	for i, ok := range found[:len(keys)] {
		if ok {
			need = max(need, seqs[i])
		}
	}
	return need, View{t.search}, nil
}

// Len returns the number of live keys.
func (t *Table) Len() int64 { return t.count.Load() }

// Add adds the keys of b.Added that are not live and deletes the keys of
// b.Deleted that are, in one atomic log record together with b.Opaque.
// added[i] reports whether b.Added[i] was added (a key repeated in
// b.Added is added once); deleted[i] whether b.Deleted[i] was live. A key
// may not be both added and deleted in one batch. Either result slice may
// be nil.
//
// The change is visible to every lookup when Add returns, and it is in
// the operating system's hands (a killed process loses nothing); it is
// durable once SyncTo(seq) returns. seq also covers the keys found live
// by changes not yet durable.
func (t *Table) Add(b *Batch, added, deleted []bool) (seq uint64, err error) {
	return t.add(b, nil, added, deleted)
}

// AddAfter is Add for a batch whose keys to add were all found absent by
// the lookup that returned v (HasBatchView): it searches the delta and the
// files written since v for them, not v's files again. (A key of b.Added
// that was live in v would be added twice.)
func (t *Table) AddAfter(b *Batch, v View, added, deleted []bool) (seq uint64, err error) {
	return t.add(b, v.files, added, deleted)
}

// add is Add, searching none of the files in searched for b.Added.
func (t *Table) add(b *Batch, searched []*keyFile, added, deleted []bool) (seq uint64, err error) {
	if t.opts.ReadOnly {
		return 0, store.ErrReadOnly
	}
	// Phase one, shared: most keys of a seen-set batch are live already.
	var need uint64
	var candAdd, candDel []int
	liveA, seqA := make([]bool, len(b.Added)), make([]uint64, len(b.Added))
	liveD := make([]bool, len(b.Deleted))
	pending := make([]int, max(len(b.Added), len(b.Deleted)))
	for i := range pending {
		pending[i] = i
	}
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return 0, store.ErrClosed
	}
	err = t.lookupBatch(b.Added, pending[:len(b.Added)], liveA, seqA, searched)
	if err == nil {
		for i := range pending {
			pending[i] = i
		}
		err = t.lookupBatch(b.Deleted, pending[:len(b.Deleted)], liveD, nil, nil)
	}
	searched = t.search // replaced, never changed, by setSearch
	t.mu.RUnlock()
	if err != nil {
		return 0, err
	}
	for i, ok := range liveA {
		if ok {
			need = max(need, seqA[i])
		} else {
			candAdd = append(candAdd, i)
		}
	}
	for i, ok := range liveD {
		if ok {
			candDel = append(candDel, i)
		}
	}
	if len(candAdd) == 0 && len(candDel) == 0 && len(b.Opaque) == 0 {
		return need, nil
	}
	// Phase two, one writer at a time: the candidates again (another
	// writer may have changed them), the log, the delta.
	t.wmu.Lock()
	defer t.wmu.Unlock()
	for t.merging && t.delta.len() >= t.deltaKeys {
		t.mergeDone.Wait() // both deltas full: wait for the merge
	}
	if t.mergeErr != nil {
		return 0, t.mergeErr
	}
	rec := Batch{Opaque: b.Opaque}
	// Repeated keys are added once: strictly ascending keys (the index's
	// sorted batches) have none, others are checked with a set.
	var seen map[Key]struct{}
	if !ascending(b.Added) || !ascending(b.Deleted) {
		seen = make(map[Key]struct{}, len(candAdd))
	}
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return 0, store.ErrClosed
	}
	// A key absent at phase one and added since is in a delta or in a
	// file a merge wrote since: the files phase one searched need no
	// second search. (A key live at phase one and deleted since may be
	// dropped by a merge: those are searched everywhere.)
	err = t.lookupBatch(b.Added, append(pending[:0], candAdd...), liveA, seqA, searched)
	if err == nil {
		err = t.lookupBatch(b.Deleted, append(pending[:0], candDel...), liveD, nil, nil)
	}
	if err != nil {
		t.mu.RUnlock()
		return 0, err
	}
	for _, i := range candAdd {
		k := &b.Added[i]
		if _, dup := seen[*k]; dup {
			continue
		}
		if liveA[i] {
			need = max(need, seqA[i])
			continue
		}
		if seen != nil {
			seen[*k] = struct{}{}
		}
		rec.Added = append(rec.Added, *k)
		if added != nil {
			added[i] = true
		}
	}
	clear(seen)
	for _, i := range candDel {
		k := &b.Deleted[i]
		if _, dup := seen[*k]; dup {
			continue
		}
		if !liveD[i] {
			continue
		}
		if seen != nil {
			seen[*k] = struct{}{}
		}
		rec.Deleted = append(rec.Deleted, *k)
		if deleted != nil {
			deleted[i] = true
		}
	}
	t.mu.RUnlock()
	if rec.isEmpty() {
		return need, nil
	}
	s, err := t.appendLocked(&rec)
	if err != nil {
		for _, i := range candAdd {
			if added != nil {
				added[i] = false
			}
		}
		for _, i := range candDel {
			if deleted != nil {
				deleted[i] = false
			}
		}
		return 0, err
	}
	t.mu.Lock()
	t.apply(&rec, s)
	full := t.delta.len() >= t.deltaKeys
	t.mu.Unlock()
	if full || t.segBytes > int64(128*t.deltaKeys) {
		t.rotateLocked(false)
	}
	return max(need, s), nil
}

// ascending reports whether keys are strictly ascending.
func ascending(keys []Key) bool {
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1][:], keys[i][:]) >= 0 {
			return false
		}
	}
	return true
}

// A delta holds the changes not yet in a key file: a flat array of
// entries (key, log position, state: 40 bytes), in the order their keys
// were first put, and an open-addressing index of their numbers (linear
// probing, at most 3/4 full: 4 to 8 bytes a key), both allocated once for
// the delta's expected size; a Go map of the same took about 80 bytes a
// key. A key removed keeps its entry, marked, until the delta is dropped.
//
// A bitset over the leading deltaBits bits of every key put answers most
// lookups of a key the delta does not hold (a seen-set's present keys are
// in the files) with one probe; removed entries leave their bit set (a
// "maybe").
type delta struct {
	want  int         // entries to allocate for at the first put
	ents  []deltaSlot // in the order keys were first put
	index []uint32    // entry number + 1; 0: empty
	n     int         // entries not removed
	seed  maphash.Seed
	bits  []uint64
}

// deltaSlot is an entry of a delta: state is the log position << 2 | 2
// when live | 1 when held (0: removed).
type deltaSlot struct {
	k     Key
	state uint64
}

// deltaBits sizes a delta's bitset: 2^22 bits, 512 KiB, a few percent set
// by a full default delta.
const deltaBits = 22

// deltaKeysFor returns the size of a delta that starts when the table
// holds live keys (see Options.DeltaKeys).
func (t *Table) deltaKeysFor(live int64) int {
	if t.opts.DeltaKeys > 0 {
		return t.opts.DeltaKeys
	}
	return int(min(max(live/deltaShare, DefaultDeltaKeys), maxAutoDeltaKeys))
}

// newDelta returns an empty delta that allocates room for n keys at its
// first put, and grows past them only if need be (Open's replay, or a
// batch that fills it past n).
func newDelta(n int) *delta {
	return &delta{want: n, seed: maphash.MakeSeed()}
}

// len returns the number of keys the delta holds.
func (d *delta) len() int { return d.n }

// slot returns the index slot of k: the one that holds its entry, or the
// empty one where it goes. The keys are hashed with a random seed, so
// that chosen keys cannot make the probes long.
func (d *delta) slot(k *Key) int {
	mask := len(d.index) - 1
	s := int(maphash.Bytes(d.seed, k[:])) & mask
	for {
		e := d.index[s]
		if e == 0 || d.ents[e-1].k == *k {
			return s
		}
		s = (s + 1) & mask
	}
}

// get returns the entry of k (a nil delta holds none).
func (d *delta) get(k *Key) (deltaEntry, bool) {
	if d == nil || d.n == 0 {
		return deltaEntry{}, false
	}
	b := leading(k, deltaBits)
	if d.bits[b/64]&(1<<(b%64)) == 0 {
		return deltaEntry{}, false
	}
	e := d.index[d.slot(k)]
	if e == 0 {
		return deltaEntry{}, false
	}
	st := d.ents[e-1].state
	return deltaEntry{seq: st >> 2, live: st&2 != 0}, st&1 != 0
}

func (d *delta) put(k *Key, e deltaEntry) {
	if d.index == nil {
		d.alloc(max(d.want, 16))
	}
	st := e.seq<<2 | 1
	if e.live {
		st |= 2
	}
	s := d.slot(k)
	if x := d.index[s]; x != 0 {
		if d.ents[x-1].state&1 == 0 {
			d.n++
		}
		d.ents[x-1].state = st
		return
	}
	if 4*(len(d.ents)+1) > 3*len(d.index) {
		d.grow()
		s = d.slot(k)
	}
	d.ents = append(d.ents, deltaSlot{k: *k, state: st})
	d.index[s] = uint32(len(d.ents))
	d.n++
	b := leading(k, deltaBits)
	d.bits[b/64] |= 1 << (b % 64)
}

// remove takes k out of the delta (the key's state below it stands).
func (d *delta) remove(k *Key) {
	if d == nil || d.n == 0 {
		return
	}
	if x := d.index[d.slot(k)]; x != 0 && d.ents[x-1].state&1 != 0 {
		d.ents[x-1].state = 0
		d.n--
	}
}

// alloc allocates room for n entries and a quarter more: a delta is
// frozen once full after a batch, and a batch applied to a full delta
// while a merge runs (see Add) would otherwise grow it, copying its
// entries and doubling its index.
func (d *delta) alloc(n int) {
	n += n / 4
	d.ents = make([]deltaSlot, 0, n)
	d.index = make([]uint32, indexSize(n))
	if d.bits == nil {
		d.bits = make([]uint64, 1<<deltaBits/64)
	}
}

// indexSize returns the index slots for n entries: a power of two at
// least 4n/3.
func indexSize(n int) int {
	s := 16
	for 3*s < 4*n {
		s *= 2
	}
	return s
}

// grow doubles the index (and lets append grow the entries): only past
// the size the delta was made for.
func (d *delta) grow() {
	if len(d.ents) >= 1<<31 {
		panic("keytable: delta of 2^31 keys") // DeltaKeys is an int32-sized bound
	}
	d.index = make([]uint32, 2*len(d.index))
	mask := len(d.index) - 1
	for i := range d.ents {
		s := int(maphash.Bytes(d.seed, d.ents[i].k[:])) & mask
		for d.index[s] != 0 {
			s = (s + 1) & mask
		}
		d.index[s] = uint32(i + 1)
	}
}

// sorted returns the numbers of the delta's live entries and of its
// deleted ones, each in key order. The delta must not change meanwhile.
func (d *delta) sorted() (live, dead []uint32) {
	live = make([]uint32, 0, d.n)
	for i := range d.ents {
		switch st := d.ents[i].state; {
		case st&1 == 0:
		case st&2 != 0:
			live = append(live, uint32(i))
		default:
			dead = append(dead, uint32(i))
		}
	}
	byKey := func(a, b uint32) int { return compareKeys(d.ents[a].k, d.ents[b].k) }
	slices.SortFunc(live, byKey)
	slices.SortFunc(dead, byKey)
	return live, dead
}

// clone returns a copy of the entries the delta holds, for reading in
// order (sorted) without holding its lock; it has no index.
func (d *delta) clone() *delta {
	c := &delta{ents: make([]deltaSlot, 0, d.n), n: d.n}
	for _, e := range d.ents {
		if e.state&1 != 0 {
			c.ents = append(c.ents, e)
		}
	}
	return c
}
