package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Put stores v under the full entry h, replacing any stored value
// (store.Put: a batch of one).
func (db *DB) Put(ctx context.Context, h hashkey.Hash, v store.Value) error {
	return store.Put(ctx, db, h, v)
}

// PutPrefix stores v under the prefix entry p (store.MinPrefixEntryLen..
// store.MaxPrefixEntryLen bytes, else store.ErrPrefixLength), replacing any
// stored value (store.PutPrefix).
func (db *DB) PutPrefix(ctx context.Context, p []byte, v store.Value) error {
	return store.PutPrefix(ctx, db, p, v)
}

// PutBatch stores every entry (full or prefix), replacing stored values.
// When a key repeats, the last entry wins. Each entry is written atomically;
// the batch as a whole is not (a crash may keep a part of it).
func (db *DB) PutBatch(ctx context.Context, entries []store.Entry) error {
	_, err := db.write(ctx, entries, false)
	return err
}

// Add stores v under h unless h is stored, and reports whether it did
// (store.Add). It is atomic with respect to every other write in this
// process.
func (db *DB) Add(ctx context.Context, h hashkey.Hash, v store.Value) (added bool, err error) {
	return store.Add(ctx, db, h, v)
}

// AddBatch stores each entry whose key is not stored and reports,
// in input order, which ones it added. When a key repeats in the batch, only
// its first occurrence can be added. It is atomic with respect to every
// other write in this process; after a crash a part of the batch may be
// stored.
func (db *DB) AddBatch(ctx context.Context, entries []store.Entry) ([]bool, error) {
	return db.write(ctx, entries, true)
}

// Delete removes a full or prefix entry. It returns an error wrapping
// store.ErrNotFound when the key is not stored and store.ErrPrefixLength
// for a bad prefix length.
func (db *DB) Delete(ctx context.Context, e store.Entry) error {
	if err := e.Check(); err != nil {
		return err
	}
	n, err := db.remove(ctx, []store.Entry{e})
	if err == nil && n == 0 {
		return fmt.Errorf("%w: %x", store.ErrNotFound, e.Key())
	}
	return err
}

// isKeyOnly reports whether e is a key-only full entry: no text, data,
// times or expiry.
func isKeyOnly(e *store.Entry) bool {
	return !e.IsPrefix() && !encodes(&e.Value) && e.Value.Expires.IsZero()
}

// allKeyOnly reports whether every entry is key-only: a batch that adds
// them takes the bare-key path (addHashes), whatever their home.
func allKeyOnly(entries []store.Entry) bool {
	for i := range entries {
		if !isKeyOnly(&entries[i]) {
			return false
		}
	}
	return true
}

// lockFor locks the stripes the entries need, in ascending order, and
// returns the unlock function.
func (db *DB) lockFor(entries []store.Entry) func() {
	var need [256]bool
	prefix := false
	for i := range entries {
		if entries[i].IsPrefix() {
			prefix = true
		} else {
			need[entries[i].Hash[0]] = true
		}
	}
	for i := range need {
		if need[i] {
			db.stripes[i].Lock()
		}
	}
	if prefix {
		db.pmu.Lock()
	}
	return func() {
		if prefix {
			db.pmu.Unlock()
		}
		for i := range need {
			if need[i] {
				db.stripes[i].Unlock()
			}
		}
	}
}

// write implements Put*, Add*. For ifAbsent it returns, per
// input entry, whether it was added; otherwise it returns nil.
func (db *DB) write(ctx context.Context, entries []store.Entry, ifAbsent bool) (added []bool, err error) {
	return db.writeRecorded(ctx, entries, ifAbsent, nil)
}

// writeRecorded is write that stores rec (when not nil) with the entries.
func (db *DB) writeRecorded(ctx context.Context, entries []store.Entry, ifAbsent bool, rec *Record) (added []bool, err error) {
	for i := range entries {
		if err := db.check(&entries[i]); err != nil {
			return nil, err
		}
	}
	added, err = db.writeShared(ctx, entries, ifAbsent, rec)
	if err == nil {
		db.maybeGrow()
	}
	return added, err
}

// writeShared is write under the shared lock.
func (db *DB) writeShared(ctx context.Context, entries []store.Entry, ifAbsent bool, rec *Record) (added []bool, err error) {
	defer db.catch(&err)
	if err := db.beginWrite(ctx); err != nil {
		return nil, err
	}
	defer db.mu.RUnlock()
	if err := db.roomFor(writeCost(entries)); err != nil {
		return nil, err
	}
	if err := db.prepareWrite(); err != nil {
		return nil, err
	}
	return db.writeLocked(entries, ifAbsent, rec)
}

func (db *DB) writeLocked(entries []store.Entry, ifAbsent bool, rec *Record) ([]bool, error) {
	if len(entries) == 0 {
		var result []bool
		if ifAbsent {
			result = []bool{}
		}
		return result, db.writeRecordOnly(rec, result)
	}
	if ifAbsent && allKeyOnly(entries) {
		return db.addKeys(entries, rec)
	}
	unlock := db.lockFor(entries)
	defer unlock()
	// Add keeps the first of repeated keys, put the last.
	p, err := db.plan(entries, !ifAbsent)
	if err != nil {
		return nil, err
	}
	db.admit(entries, p.order, p.existed)
	if err := db.noteTTL(entries); err != nil {
		return nil, err
	}
	var result []bool
	if ifAbsent {
		result = make([]bool, len(entries))
		for j, i := range p.order {
			result[i] = !p.existed[j]
		}
	}
	var t tally
	put := make([]bool, len(p.order))
	for j, i := range p.order {
		if ifAbsent && p.existed[j] {
			continue
		}
		put[j] = true
		e := &entries[i]
		t.change(e.IsPrefix(), p.existed[j], p.oldExp[j], true, expiresAt(&e.Value))
	}
	var answer []byte
	if rec != nil {
		// A put stores every entry, an add those it found absent.
		answer = rec.Answer(result)
		if rec.Lazy && ifAbsent && !slices.Contains(result, true) {
			rec = nil
		}
	}
	if err := db.st.write(entries, p.order, put, nil, &p.found, rec, answer); err != nil {
		return nil, err
	}
	db.apply(&t)
	return result, nil
}

// A plan is the unique keys of a batch of entries in key order, and
// where each was stored before the batch (see stores.locate).
type plan struct {
	order []int // indexes into the entries, one per key, in key order
	found
}

// plan sorts the entries' keys (stably), keeps one entry per key (the last
// when keepLast, else the first) and finds which are stored: the filter,
// then the stores. The caller keeps the keys from changing meanwhile
// (stripe locks, or db.mu held exclusively).
func (db *DB) plan(entries []store.Entry, keepLast bool) (plan, error) {
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	if len(entries) > 1 {
		sortEntries(entries, order)
	}
	uniq := order[:0]
	for j, i := range order {
		if j > 0 && compareEntries(&entries[order[j-1]], &entries[i]) == 0 {
			if keepLast {
				uniq[len(uniq)-1] = i
			}
			continue
		}
		uniq = append(uniq, i)
	}
	maybe := make([]bool, len(uniq))
	n := 0
	db.fmu.RLock()
	for j, i := range uniq {
		e := &entries[i]
		if maybe[j] = db.f.MayHaveEntry(&e.Hash, e.IsPrefix()); maybe[j] {
			n++
		}
	}
	db.fmu.RUnlock()
	f, err := db.st.locate(entries, uniq, maybe)
	if err != nil {
		return plan{}, err
	}
	found := make([]bool, 0, n)
	for j := range uniq {
		if maybe[j] {
			found = append(found, f.existed[j])
		}
	}
	db.probes.add(len(uniq), found)
	return plan{order: uniq, found: f}, nil
}

// sortEntries sorts order, positions in entries, by key and then by
// position (a stable sort).
func sortEntries(entries []store.Entry, order []int) {
	sortByLead(order, func(i int) (uint64, bool) {
		e := &entries[i]
		return binary.BigEndian.Uint64(e.Hash[:8]), !e.IsPrefix()
	}, func(a, b int) int { return compareEntries(&entries[a], &entries[b]) })
}

// sortByLead sorts idx by key, then by position. lead returns a
// position's leading 8 key bytes as an integer (ok false: compare it with
// cmp only), kept beside the position so that most comparisons touch
// neither the keys nor bytes.Compare (sorting through the positions was
// 15% of a large has in a profile). cmp compares two positions' keys.
func sortByLead(idx []int, lead func(i int) (uint64, bool), cmp func(a, b int) int) {
	type item struct {
		v  uint64
		ok bool
		i  int
	}
	items := make([]item, len(idx))
	for j, i := range idx {
		v, ok := lead(i)
		items[j] = item{v, ok, i}
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.ok && b.ok && a.v != b.v {
			if a.v < b.v {
				return -1
			}
			return 1
		}
		if c := cmp(a.i, b.i); c != 0 {
			return c
		}
		return a.i - b.i
	})
	for j := range items {
		idx[j] = items[j].i
	}
}

// admit adds the keys of entries[idx] to the filter, except those
// existed marks (stored, so in the filter already; existed may be nil).
// Writers call it before their keys become visible, so that the filter
// never says "absent" for a stored key.
func (db *DB) admit(entries []store.Entry, idx []int, existed []bool) {
	db.fmu.Lock()
	defer db.fmu.Unlock()
	for j, i := range idx {
		if existed != nil && existed[j] {
			continue
		}
		e := &entries[i]
		if e.IsPrefix() {
			db.f.AddPrefix(e.Hash[:e.Len]) // db.next shares short
			continue
		}
		db.f.AddFull(&e.Hash)
		if db.next != nil {
			db.next.AddFull(&e.Hash)
		}
	}
}

// remove implements Delete and DeleteBatch: it removes the stored keys of
// entries (repeats once) and returns how many.
func (db *DB) remove(ctx context.Context, entries []store.Entry) (n int, err error) {
	defer db.catch(&err)
	if err := db.beginWrite(ctx); err != nil {
		return 0, err
	}
	defer db.mu.RUnlock()
	if err := db.roomFor(writeCost(entries)); err != nil {
		return 0, err
	}
	if err := db.prepareWrite(); err != nil {
		return 0, err
	}
	unlock := db.lockFor(entries)
	defer unlock()
	p, err := db.plan(entries, false)
	if err != nil {
		return 0, err
	}
	var t tally
	for j, i := range p.order {
		if p.existed[j] {
			t.change(entries[i].IsPrefix(), true, p.oldExp[j], false, 0)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	if err := db.st.remove(entries, p.order, p.existed, p.at); err != nil {
		return 0, err
	}
	// The filter keeps the deleted keys' bits ("maybe"); a rebuild drops
	// them.
	db.apply(&t)
	return n, nil
}

// check refuses an entry the index cannot store: a bad prefix length, or
// (in memory, where every value stays in the tree) a value over Badger's
// threshold.
func (db *DB) check(e *store.Entry) error {
	if err := e.Check(); err != nil {
		return err
	}
	if db.opts.InMemory {
		if n := valueLen(e.Value); int64(n) >= db.bo.ValueThreshold {
			return fmt.Errorf("%w: %d bytes encoded, an in-memory index holds less than %d", store.ErrTooLarge, n, db.bo.ValueThreshold)
		}
	}
	return nil
}
