package keytable

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/urlhash/urlhash/store"
)

// Add is Write for a batch of key-only adds and deletes, reporting added[i]
// (b.Added[i] was not live and was added; a key repeated in b.Added is
// added once) and deleted[i] (b.Deleted[i] was live). Either result slice
// may be nil.
func (t *Table) Add(b *Batch, added, deleted []bool) (seq uint64, err error) {
	return t.addBools(b, nil, added, deleted)
}

// AddAfter is Add for a batch whose keys to add were all found absent by
// the lookup that returned v (HasBatchView): it searches the delta and the
// files written since v for them, not v's files again (except for the keys
// v found expired). A key of b.Added that was live in v would be added
// twice.
func (t *Table) AddAfter(b *Batch, v View, added, deleted []bool) (seq uint64, err error) {
	return t.addBools(b, &v, added, deleted)
}

func (t *Table) addBools(b *Batch, v *View, added, deleted []bool) (uint64, error) {
	var r Result
	if added != nil {
		r.Added = make([]Prev, len(b.Added))
	}
	if deleted != nil {
		r.Deleted = make([]Prev, len(b.Deleted))
	}
	seq, err := t.write(b, v, &r)
	for i := range added {
		added[i] = err == nil && !r.Added[i].Live
	}
	for i := range deleted {
		deleted[i] = err == nil && r.Deleted[i].Live
	}
	return seq, err
}

// Write applies b in one atomic log record: the keys of b.Added that are
// not live are added (key-only: an expired record of the key is
// replaced), the records of b.Deleted are deleted (live or expired), and
// the entries of b.Set are written, replacing whatever their keys had. r
// (nil, or any of its slices nil) receives what each write found (Prev).
//
// The change is visible to every lookup when Write returns, and it is in
// the operating system's hands (a killed process loses nothing); it is
// durable once SyncTo(seq) returns. seq also covers the keys found live
// by changes not yet durable.
func (t *Table) Write(b *Batch, r *Result) (seq uint64, err error) {
	return t.write(b, nil, r)
}

// WriteAfter is Write for a batch whose keys to add were all found absent
// by the lookup that returned v (see AddAfter).
func (t *Table) WriteAfter(b *Batch, v View, r *Result) (seq uint64, err error) {
	return t.write(b, &v, r)
}

// check refuses a batch the table cannot apply: times out of range, a key
// set twice or in two lists.
func (b *Batch) check() error {
	if err := b.AddedCols.check(); err != nil {
		return err
	}
	for i := range b.Set {
		if err := b.Set[i].Cols.check(); err != nil {
			return err
		}
		if len(b.Set[i].Value) > maxRecord {
			return fmt.Errorf("keytable: a value of %d bytes exceeds the %d-byte record limit", len(b.Set[i].Value), maxRecord)
		}
	}
	n := len(b.Set)
	if len(b.Deleted) > 0 {
		n++
	}
	if len(b.Added) > 0 {
		n++
	}
	if n <= 1 {
		return nil // one list (Added and Deleted may repeat a key)
	}
	seen := make(map[Key]uint8, len(b.Added)+len(b.Deleted)+len(b.Set))
	for _, l := range []struct {
		bit  uint8
		keys func(yield func(*Key) bool)
	}{
		{1, keysIn(b.Added)}, {2, keysIn(b.Deleted)}, {4, func(yield func(*Key) bool) {
			for i := range b.Set {
				if !yield(&b.Set[i].Key) {
					return
				}
			}
		}},
	} {
		for k := range l.keys {
			in := seen[*k]
			if in&^l.bit != 0 || in&4 != 0 {
				return fmt.Errorf("keytable: key %x twice in a batch (set twice, or in two of its lists)", k[:])
			}
			seen[*k] = in | l.bit
		}
	}
	return nil
}

func keysIn(ks []Key) func(yield func(*Key) bool) {
	return func(yield func(*Key) bool) {
		for i := range ks {
			if !yield(&ks[i]) {
				return
			}
		}
	}
}

// prevOf returns what a write over h (the key's state) finds, and the
// flags its row is logged with when the key is not in the delta: opHides
// over a row below, opCond over an expired row of the running merge's
// inputs (which the merge drops, and reports). The caller holds wmu.
func (t *Table) prevOf(h *hit, now int64) (Prev, uint8) {
	if h.st != stRow {
		return Prev{}, 0 // absent, or a tombstone (nothing counted)
	}
	p := Prev{Live: !expired(h.cols.Expires, now), Removed: true, Expires: h.cols.Expires}
	switch {
	case h.where == inDelta:
		return p, 0
	case t.merging && expired(h.cols.Expires, t.mergeNow) && (h.where == inFrozen || slices.Contains(t.inputs, h.f)):
		return Prev{Live: p.Live}, opCond
	}
	return p, opHides
}

// hitBufs are lookups' results, kept for the next.
type hitBufs struct {
	a, d, s []hit
	pending []int
}

func (t *Table) write(b *Batch, v *View, r *Result) (seq uint64, err error) {
	if t.opts.ReadOnly {
		return 0, store.ErrReadOnly
	}
	if err := b.check(); err != nil {
		return 0, err
	}
	if r == nil {
		r = &Result{}
	}
	var searched []*keyFile
	var expiredIn map[Key]struct{}
	if v != nil {
		searched, expiredIn = v.files, v.expired
	}
	// Phase one, shared: most keys of a seen-set batch are live already,
	// and most deletes of absent keys find nothing to delete.
	var need uint64
	var candAdd, candDel []int
	hb, _ := t.hitPool.Get().(*hitBufs)
	if hb == nil {
		hb = &hitBufs{}
	}
	defer t.hitPool.Put(hb)
	hitsA := slices.Grow(hb.a[:0], len(b.Added))[:len(b.Added)]
	hitsD := slices.Grow(hb.d[:0], len(b.Deleted))[:len(b.Deleted)]
	hitsS := slices.Grow(hb.s[:0], len(b.Set))[:len(b.Set)]
	hb.a, hb.d, hb.s = hitsA, hitsD, hitsS
	n := max(len(b.Added), len(b.Deleted), len(b.Set))
	hb.pending = slices.Grow(hb.pending[:0], n)[:n]
	pending := hb.pending
	for i := range pending {
		pending[i] = i
	}
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return 0, store.ErrClosed
	}
	err = t.lookupBatch(b.Added, pending[:len(b.Added)], hitsA, searched)
	if err == nil {
		for i := range pending {
			pending[i] = i
		}
		err = t.lookupBatch(b.Deleted, pending[:len(b.Deleted)], hitsD, nil)
	}
	searchedNow := t.search // replaced, never changed, by setSearch
	t.mu.RUnlock()
	if err != nil {
		return 0, err
	}
	now := t.now()
	// A key found expired must be searched everywhere again: its row is
	// replaced (and hidden).
	var again map[Key]struct{}
	for i := range hitsA {
		h := &hitsA[i]
		switch {
		case h.st == stRow && !expired(h.cols.Expires, now):
			need = max(need, h.seq)
			if r.Added != nil {
				r.Added[i] = Prev{Live: true}
			}
		default:
			candAdd = append(candAdd, i)
			_, exp := expiredIn[b.Added[i]]
			if exp || h.st == stRow {
				if again == nil {
					again = map[Key]struct{}{}
				}
				again[b.Added[i]] = struct{}{}
			}
		}
	}
	for i := range hitsD {
		if hitsD[i].st == stRow {
			candDel = append(candDel, i)
		} else if r.Deleted != nil {
			r.Deleted[i] = Prev{}
		}
	}
	if len(candAdd) == 0 && len(candDel) == 0 && len(b.Set) == 0 && len(b.Opaque) == 0 {
		return need, nil
	}
	// Phase two, one writer at a time: the candidates again (another
	// writer may have changed them), the log, the delta.
	t.wmu.Lock()
	defer t.wmu.Unlock()
	for t.merging && t.full() {
		t.mergeDone.Wait() // both deltas full: wait for the merge
	}
	if t.mergeErr != nil {
		return 0, t.mergeErr
	}
	// Sized for the batch: grown by appends from nil, the record's
	// slices were a tenth of what a frontier's put allocates.
	rec := record{addedCols: b.AddedCols, opaque: b.Opaque}
	if len(b.Set) > 0 {
		rec.sets = make([]op, 0, len(b.Set))
	}
	if len(candAdd) > 0 {
		rec.added = make([]Key, 0, len(candAdd))
	}
	// Repeated keys are added once: strictly ascending keys (the index's
	// sorted batches) have none, others are checked with a set.
	var seen map[Key]struct{}
	if !ascending(b.Added) || !ascending(b.Deleted) {
		seen = make(map[Key]struct{}, len(candAdd))
	}
	// Files a kept value is read from, counted until the record is
	// applied (a merge may retire them meanwhile).
	var held []*keyFile
	defer func() {
		for _, f := range held {
			f.release()
		}
	}()
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return 0, store.ErrClosed
	}
	// A key absent at phase one and added since is in a delta or in a
	// file a merge wrote since: the files phase one searched need no
	// second search. (A key live at phase one and deleted since may be
	// dropped by a merge: those are searched everywhere; so are keys
	// found expired.)
	var fresh, stale []int
	for _, i := range candAdd {
		if _, ok := again[b.Added[i]]; ok {
			stale = append(stale, i)
		} else {
			fresh = append(fresh, i)
		}
	}
	err = t.lookupBatch(b.Added, append(pending[:0], fresh...), hitsA, searchedNow)
	if err == nil && len(stale) > 0 {
		err = t.lookupBatch(b.Added, append(pending[:0], stale...), hitsA, nil)
	}
	if err == nil {
		err = t.lookupBatch(b.Deleted, append(pending[:0], candDel...), hitsD, nil)
	}
	var setKeys []Key
	if err == nil && len(b.Set) > 0 {
		setKeys = make([]Key, len(b.Set))
		for i := range b.Set {
			setKeys[i] = b.Set[i].Key
			pending[i] = i
		}
		err = t.lookupBatch(setKeys, pending[:len(b.Set)], hitsS, nil)
	}
	if err != nil {
		t.mu.RUnlock()
		return 0, err
	}
	for _, i := range candAdd {
		k := &b.Added[i]
		if _, dup := seen[*k]; dup {
			if r.Added != nil {
				r.Added[i] = Prev{Live: true}
			}
			continue
		}
		p, flags := t.prevOf(&hitsA[i], now)
		if r.Added != nil {
			r.Added[i] = p
		}
		if p.Live {
			need = max(need, hitsA[i].seq)
			continue
		}
		if seen != nil {
			seen[*k] = struct{}{}
		}
		if flags == 0 {
			rec.added = append(rec.added, *k)
		} else {
			rec.sets = append(rec.sets, op{k: *k, flags: flags, cols: b.AddedCols})
		}
	}
	clear(seen)
	for _, i := range candDel {
		k := &b.Deleted[i]
		p, flags := Prev{}, uint8(0)
		if _, dup := seen[*k]; !dup {
			p, flags = t.prevOf(&hitsD[i], now)
		}
		if flags&opCond != 0 {
			// The running merge drops the expired row, and reports it.
			p.Removed = false
		} else if p.Removed {
			if seen != nil {
				seen[*k] = struct{}{}
			}
			rec.deleted = append(rec.deleted, *k)
		}
		if r.Deleted != nil {
			r.Deleted[i] = p
		}
	}
	for i := range b.Set {
		s := &b.Set[i]
		h := &hitsS[i]
		p, flags := t.prevOf(h, now)
		if r.Set != nil {
			r.Set[i] = p
		}
		o := op{k: s.Key, flags: flags, cols: s.Cols}
		if s.KeepValue {
			o.flags |= opKeep
			if h.st == stRow {
				o.kept = h.value()
				if o.kept.f != nil {
					o.kept.f.acquire()
					held = append(held, o.kept.f)
				}
			}
		} else {
			o.value = s.Value
		}
		rec.sets = append(rec.sets, o)
	}
	t.mu.RUnlock()
	if rec.isEmpty() {
		return need, nil
	}
	s, err := t.appendLocked(&rec)
	if err != nil {
		clear(r.Added)
		clear(r.Deleted)
		clear(r.Set)
		return 0, err
	}
	t.mu.Lock()
	err = t.apply(&rec, s, false)
	full := t.full()
	t.mu.Unlock()
	if err != nil {
		return 0, err // not reached: a writer's apply looks nothing up
	}
	if full || t.segBytes > int64(128*t.deltaKeys)+t.opts.DeltaBytes {
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
