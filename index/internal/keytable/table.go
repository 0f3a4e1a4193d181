// Package keytable stores a set of 32-byte keys: immutable sorted key
// files with a bucket-offset array (a lookup is one or two reads of a
// mapped file), a bounded in-memory delta of recent changes, and an
// append-only log that makes every change durable, shared between
// concurrent writers (group commit). When the delta is full it is frozen
// and merged into a new key file in the background, beside the writers.
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

// DefaultDeltaKeys is the default Options.DeltaKeys: 196,608 keys, 3/4 of
// the 2^18 slots a Go map of them allocates (it grows at 7/8 full, so that
// 2^18 keys would take 2^19 slots and twice the memory: 28 against 14 MiB).
const DefaultDeltaKeys = 3 << 16

// Options configures Open. A nil *Options means defaults.
type Options struct {
	// ReadOnly opens without writing: no merge, no new log segment, and
	// writes return store.ErrReadOnly. Default false.
	ReadOnly bool
	// DeltaKeys is the number of changed keys the delta holds before it is
	// frozen and merged into a key file; two deltas at most are in
	// memory. Default DefaultDeltaKeys (196,608: about 14 MiB).
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
	// exclusively to unmap files a merge replaced.
	fmu sync.RWMutex

	// wmu serialises writers: the log append and the delta update.
	wmu      sync.Mutex
	log      *os.File
	logNum   uint64
	oldLogs  []*os.File // segments of the frozen delta, synced
	man      manifest
	buf      []byte
	segBytes int64 // bytes in the current segment
	mark     syncMark
	// merging is set while a merge runs; mergeDone is signalled (under
	// wmu) when it ends.
	merging   bool
	mergeDone *sync.Cond
	mergeErr  error
	mergeWG   sync.WaitGroup
	stopMerge bool // Close started

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
	// lookups counts lookups; every releaseLookups of them the files'
	// pages are released (see keyFile.release).
	lookups atomic.Uint64
}

// releaseLookups is how many lookups run between two releases of the
// files' pages (random lookups touch a page each: 16 MiB at most between
// two), once the files are larger than releaseAbove: a smaller table stays
// resident, and its lookups never fault (a release costs the next lookups
// a page fault each: a lookup took 1.0 µs against 0.6 µs at 1M keys with
// releases every 2^18 lookups).
const (
	releaseLookups = 1 << 12
	releaseAbove   = 256 << 20
)

// looked counts n lookups and releases the files' pages when due. The
// caller holds mu shared.
func (t *Table) looked(n int) {
	if n == 0 || len(t.files) == 0 {
		return
	}
	v := t.lookups.Add(uint64(n))
	if v/releaseLookups == (v-uint64(n))/releaseLookups {
		return
	}
	size := 0
	for _, f := range t.files {
		size += len(f.data)
	}
	if size <= releaseAbove {
		return
	}
	for _, f := range t.files {
		f.release(0, len(f.data))
	}
}

// Open opens the key table in dir, creating it unless opts.ReadOnly.
// Damage (a listed file missing, a checksum mismatch, a log record damaged
// anywhere but at the tail of the newest segment) is an error wrapping
// store.ErrCorrupt that names the file.
func Open(dir string, opts *Options) (_ *Table, err error) {
	t := &Table{dir: dir, delta: newDelta(0)}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.DeltaKeys <= 0 {
		t.opts.DeltaKeys = DefaultDeltaKeys
	}
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
			delete(t.delta.m, b.Added[i]) // live again below
		} else {
			t.delta.put(&b.Added[i], deltaEntry{seq: seq, live: true})
		}
	}
	for i := range b.Deleted {
		if e, ok := t.delta.get(&b.Deleted[i]); ok && e.live {
			delete(t.delta.m, b.Deleted[i]) // absent below
		} else {
			t.delta.put(&b.Deleted[i], deltaEntry{seq: seq})
		}
	}
	t.count.Add(int64(len(b.Added)) - int64(len(b.Deleted)))
}

// lookup returns whether k is live and the log position of the change
// that made it so (0: in a key file, durable). The caller holds mu.
func (t *Table) lookup(k *Key) (bool, uint64) {
	if e, ok := t.delta.get(k); ok {
		return e.live, e.seq
	}
	if e, ok := t.frozen.get(k); ok {
		return e.live, e.seq
	}
	for _, f := range t.search {
		switch f.find(k) {
		case 1:
			return true, 0
		case -1:
			return false, 0
		}
	}
	return false, 0
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
	ok, seq := t.lookup(k)
	t.looked(1)
	return ok, seq, nil
}

// HasBatch sets found[i] to whether keys[i] is live and returns the log
// position to pass to SyncTo before relying on the answers. Sorted keys
// are looked up in order (neighbouring reads).
func (t *Table) HasBatch(keys []Key, found []bool) (uint64, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return 0, store.ErrClosed
	}
	var need uint64
	for i := range keys {
		ok, seq := t.lookup(&keys[i])
		found[i] = ok
		if ok {
			need = max(need, seq)
		}
		if i%releaseLookups == releaseLookups-1 {
			t.looked(releaseLookups) // within a large batch too
		}
	}
	t.looked(len(keys) % releaseLookups)
	return need, nil
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
	if t.opts.ReadOnly {
		return 0, store.ErrReadOnly
	}
	// Phase one, shared: most keys of a seen-set batch are live already.
	var need uint64
	var candAdd, candDel []int
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return 0, store.ErrClosed
	}
	for i := range b.Added {
		ok, s := t.lookup(&b.Added[i])
		if ok {
			need = max(need, s)
		} else {
			candAdd = append(candAdd, i)
		}
	}
	for i := range b.Deleted {
		if ok, _ := t.lookup(&b.Deleted[i]); ok {
			candDel = append(candDel, i)
		}
	}
	t.looked(len(b.Added) + len(b.Deleted))
	t.mu.RUnlock()
	if len(candAdd) == 0 && len(candDel) == 0 && len(b.Opaque) == 0 {
		return need, nil
	}
	// Phase two, one writer at a time: the candidates again (another
	// writer may have changed them), the log, the delta.
	t.wmu.Lock()
	defer t.wmu.Unlock()
	for t.merging && len(t.delta.m) >= t.opts.DeltaKeys {
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
	for _, i := range candAdd {
		k := &b.Added[i]
		if _, dup := seen[*k]; dup {
			continue
		}
		if ok, s := t.lookup(k); ok {
			need = max(need, s)
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
		if ok, _ := t.lookup(k); !ok {
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
	full := len(t.delta.m) >= t.opts.DeltaKeys
	t.mu.Unlock()
	if full || t.segBytes > int64(128*t.opts.DeltaKeys) {
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

// A delta holds the changes not yet in a key file, with a bitset over the
// leading deltaBits bits of every key put, so that most lookups of a key
// it does not hold (a seen-set's present keys are in the files) cost one
// probe of the bitset rather than a map lookup. Deleted entries leave
// their bit set (a "maybe").
type delta struct {
	m    map[Key]deltaEntry
	bits []uint64
}

// deltaBits sizes a delta's bitset: 2^22 bits, 512 KiB, a few percent set
// by a full default delta.
const deltaBits = 22

func newDelta(n int) *delta {
	return &delta{m: make(map[Key]deltaEntry, n), bits: make([]uint64, 1<<deltaBits/64)}
}

// get returns the entry of k (a nil delta holds none).
func (d *delta) get(k *Key) (deltaEntry, bool) {
	if d == nil {
		return deltaEntry{}, false
	}
	b := leading(k, deltaBits)
	if d.bits[b/64]&(1<<(b%64)) == 0 {
		return deltaEntry{}, false
	}
	e, ok := d.m[*k]
	return e, ok
}

func (d *delta) put(k *Key, e deltaEntry) {
	b := leading(k, deltaBits)
	d.bits[b/64] |= 1 << (b % 64)
	d.m[*k] = e
}
