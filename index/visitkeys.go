package index

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// VisitKeys is VisitBatch of key-only full entries (a revisiting
// crawler's sightings: no text, data or expiry given), without an entry
// per key: visited[i] is set to whether keys[i] is new (see VisitBatch).
// rec, when not nil, is stored with the keys as VisitBatchRecorded
// stores it. visited must be as long as keys; keys are not changed.
//
// On an index whose full entries all live in the key table (format 3),
// a sighting of a stored key that is not due is answered without a lock
// or a write, and the batch allocates nothing per key: its scratch space
// is kept for the next batch.
func (db *DB) VisitKeys(ctx context.Context, keys []hashkey.Hash, revisitAfter time.Duration, visited []bool, rec *Record) (err error) {
	if len(visited) != len(keys) {
		return fmt.Errorf("%w: %d answers for %d keys", store.ErrInvalidOptions, len(visited), len(keys))
	}
	if err := rec.check(); err != nil {
		return err
	}
	if err := db.visitKeysShared(ctx, keys, revisitAfter, visited, rec); err != nil {
		return err
	}
	db.maybeGrow()
	return nil
}

// visitKeysShared is VisitKeys under the shared lock.
func (db *DB) visitKeysShared(ctx context.Context, keys []hashkey.Hash, revisitAfter time.Duration, visited []bool, rec *Record) (err error) {
	defer db.catch(&err)
	if err := db.beginWrite(ctx); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	if err := db.roomFor(int64(len(keys)) * (entryCostOf(hashkey.Size, 0) + 2*16)); err != nil {
		return err
	}
	if err := db.prepareWrite(); err != nil {
		return err
	}
	if db.st.visitsBare() {
		return db.visitHashes(keys, revisitAfter, visited, rec)
	}
	entries := make([]store.Entry, len(keys))
	for i := range keys {
		entries[i].Hash = keys[i]
	}
	out, err := db.visitLocked(entries, revisitAfter, rec)
	copy(visited, out)
	return err
}

// bareKeys returns the keys of entries when every one is a key-only full
// entry (ok false otherwise).
func bareKeys(entries []store.Entry) (keys []hashkey.Hash, ok bool) {
	if !allKeyOnly(entries) {
		return nil, false
	}
	keys = make([]hashkey.Hash, len(entries))
	for i := range entries {
		keys[i] = entries[i].Hash
	}
	return keys, true
}

// prepassChunk is the number of keys visitHashes looks up at once
// without locks.
const prepassChunk = 2048

// notDue reports whether a row with columns c, seen at now (unix seconds),
// is not new: it has times and was last reported new less than
// revisitAfter ago (revisitAfter <= 0: never new again). The columns hold
// both times or neither (store.Value.SeenUnix).
func notDue(c *keytable.Cols, now int64, revisitAfter time.Duration) bool {
	if c.Last == 0 {
		return false
	}
	return revisitAfter <= 0 || time.Duration(now-c.Last)*time.Second < revisitAfter
}

// visitHashes visits keys (key-only full entries) on an index whose full
// entries all live in the key table, and sets visited. As addHashes: the
// batch's keys are sorted once; the filter answers most new keys, and a
// lookup of the rest's columns without locks answers the stored ones not
// due (a concurrent visitor can only make them less due, and a delete is
// ordered after the answer); only the keys left are looked up again with
// their stripes locked, and written in one key-table batch: the new ones
// added with first and last seen now, the due ones' last-seen time set
// (their value kept unread). The caller holds db.mu shared.
func (db *DB) visitHashes(keys []hashkey.Hash, revisitAfter time.Duration, visited []bool, rec *Record) error {
	clear(visited)
	if len(keys) == 0 {
		return db.writeRecordOnly(rec, visited)
	}
	sc := db.st.getScratch()
	defer db.st.putScratch(sc, len(keys))
	sc.sortUnique(keys)
	uniq := sc.order
	work, workPos := db.mayHold(sc, keys)
	now := db.opts.now().Unix()
	settled := bools(sc.stored, len(uniq))
	sc.stored = settled
	hits := 0 // the settled: the due are looked up (and counted) again
	// In chunks: the lookup's working space (about 150 bytes a key) is
	// then a chunk's, not a served batch's (16Ki keys).
	for start := 0; start < len(work); start += prepassChunk {
		end := min(start+prepassChunk, len(work))
		cols := slices.Grow(sc.cols[:0], end-start)[:end-start]
		sc.cols = cols
		if err := db.st.lookupColsFirst(work[start:end], cols); err != nil {
			return err
		}
		for n, j := range workPos[start:end] {
			if cols[n].Live && notDue(&cols[n].Cols, now, revisitAfter) {
				settled[j] = true
				hits++
			}
		}
	}
	prepassAbsent := len(uniq) - len(work)
	db.probes.prepass(prepassAbsent, hits)
	// The candidates: new, or due (work[k], from keys[workPos[k]]).
	work, workPos = sc.unsettled(keys, settled)
	if len(work) == 0 {
		return db.writeRecordOnly(rec, visited)
	}
	unlock := db.lockKeys(work)
	defer unlock()
	// Under the stripes, as in addHashes: a key the filter says absent
	// now is stored nowhere; the others are looked up again (another
	// visitor may have written them), with a later clock.
	now = db.opts.now().Unix()
	look, lookPos := sc.look[:0], sc.lookPos[:0]
	db.fmu.RLock()
	for k := range work {
		if db.f.MayHaveFull(&work[k]) {
			look = append(look, work[k])
			lookPos = append(lookPos, int32(k))
		}
	}
	db.fmu.RUnlock()
	sc.look, sc.lookPos = look, lookPos
	cols := slices.Grow(sc.cols[:0], len(look))[:len(look)]
	sc.cols = cols
	view, err := db.st.lookupCols(look, cols)
	if err != nil {
		return err
	}
	// found[k]: work[k] is stored (live). The due ones are set; the fresh
	// ones move to the front of work (in key order still).
	found := bools(sc.found, len(work))
	sc.found = found
	sets := sc.sets[:0]
	hits = 0
	for m, k := range lookPos {
		c := &cols[m]
		if !c.Live {
			continue
		}
		found[k] = true
		hits++
		if notDue(&c.Cols, now, revisitAfter) {
			continue
		}
		visited[workPos[k]] = true
		first := c.Cols.First
		if first == 0 {
			first = now
		}
		sets = append(sets, keytable.Set{Key: keytable.Key(work[k]), Cols: keytable.Cols{First: first, Last: now, Expires: c.Cols.Expires}, KeepValue: true})
	}
	sc.sets = sets
	db.probes.locked(len(work), len(look), hits, prepassAbsent)
	m := 0
	for k := range work {
		if found[k] {
			continue
		}
		visited[workPos[k]] = true
		work[m] = work[k]
		m++
	}
	fresh := work[:m]
	if len(fresh) == 0 && len(sets) == 0 {
		return db.writeRecordOnly(rec, visited)
	}
	db.admitKeys(fresh)
	var answer []byte
	if rec != nil {
		answer = rec.Answer(visited)
	}
	if err := db.st.visitBare(fresh, now, sets, view, rec, answer); err != nil {
		clear(visited)
		return err
	}
	var t tally
	t.n[kindFull] += int64(len(fresh))
	db.apply(&t)
	return nil
}
