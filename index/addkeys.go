package index

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// AddKeys adds the key-only full entries keys (no text, data, times or
// expiry: a seen-set's keys) that are not stored, and sets added[i] to
// whether it added keys[i]: AddBatch of such entries, without an entry
// per key. When a key repeats, only its first occurrence can be added.
// rec, when not nil, is stored with the keys as AddBatchRecorded stores
// it (rec.Answer gets added). added must be as long as keys; keys are
// not changed.
//
// The batch allocates nothing per key in the key table: its scratch
// space is kept for the next batch.
func (db *DB) AddKeys(ctx context.Context, keys []hashkey.Hash, added []bool, rec *Record) (err error) {
	if len(added) != len(keys) {
		return fmt.Errorf("%w: %d answers for %d keys", store.ErrInvalidOptions, len(added), len(keys))
	}
	if err := rec.check(); err != nil {
		return err
	}
	if err := db.addKeysShared(ctx, keys, added, rec); err != nil {
		return err
	}
	db.maybeGrow()
	return nil
}

// addKeysShared is AddKeys under the shared lock.
func (db *DB) addKeysShared(ctx context.Context, keys []hashkey.Hash, added []bool, rec *Record) (err error) {
	defer db.catch(&err)
	if err := db.beginWrite(ctx); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	if err := db.roomFor(int64(len(keys)) * entryCostOf(hashkey.Size, 0)); err != nil {
		return err
	}
	if err := db.prepareWrite(); err != nil {
		return err
	}
	return db.addHashes(keys, added, rec)
}

// addKeys is writeLocked for an add of key-only full entries (addHashes
// of their keys). The caller holds db.mu shared.
func (db *DB) addKeys(entries []store.Entry, rec *Record) ([]bool, error) {
	keys := make([]hashkey.Hash, len(entries))
	for i := range entries {
		keys[i] = entries[i].Hash
	}
	result := make([]bool, len(entries))
	if err := db.addHashes(keys, result, rec); err != nil {
		return nil, err
	}
	return result, nil
}

// addScratch is the working space of one addHashes, reused by the next
// (stores.scratch): a served seen-set adds batch after batch of the same
// size, and allocating these for each cost as much memory as the keys.
// About 54 bytes a key.
type addScratch struct {
	words   []uint64       // sortUnique's sort
	order   []int32        // the positions of the batch's keys, once each, in key order
	work    []hashkey.Hash // the keys of a step: looked up, then candidates, then fresh
	workPos []int32
	found   []bool
	stored  []bool
	maybe   []bool
	bkeys   [][]byte // Badger keys of the candidates the filter let through
	bpos    []int32  // bkeys[n] is the key of work[bpos[n]]
	barena  []byte   // the bytes of bkeys
	// Under the write locks: the candidates the filter lets through
	// (work[lookPos[n]]), looked up again in the stores.
	look      []hashkey.Hash
	lookPos   []int32
	lookFound []bool
	// A visit's (visitHashes): the columns looked up, the due rows set.
	cols []keytable.Found
	sets []keytable.Set
}

// maxScratchKeys bounds the batch whose scratch is kept for reuse
// (larger ones are left to the collector).
const maxScratchKeys = 1 << 18

func (st *stores) getScratch() *addScratch {
	if sc, ok := st.scratch.Get().(*addScratch); ok {
		return sc
	}
	return new(addScratch)
}

func (st *stores) putScratch(sc *addScratch, n int) {
	if n <= maxScratchKeys {
		clear(sc.bkeys) // they point into barena
		st.scratch.Put(sc)
	}
}

// sortUnique sets sc.order to the positions of keys, once each (the
// first occurrence), in key order. It sorts 8-byte words, a key's leading
// bits with its position in the low bits, which slices.Sort orders
// without a comparison function (a sort of positions comparing keys took
// 3 s of a 10M served run's 65); keys whose leading bits tie (rare, unless
// chosen) are then ordered by their whole bytes.
func (sc *addScratch) sortUnique(keys []hashkey.Hash) {
	mask := uint64(1)<<bits.Len(uint(len(keys))) - 1 // holds every position
	words := slices.Grow(sc.words[:0], len(keys))
	for i := range keys {
		words = append(words, binary.BigEndian.Uint64(keys[i][:8])&^mask|uint64(i))
	}
	slices.Sort(words)
	sc.words = words
	tie := func(j int) bool { return words[j-1]&^mask == words[j]&^mask }
	for a := 1; a < len(words); a++ {
		if !tie(a) {
			continue
		}
		b := a + 1
		for b < len(words) && tie(b) {
			b++
		}
		slices.SortFunc(words[a-1:b], func(x, y uint64) int {
			if c := bytes.Compare(keys[x&mask][:], keys[y&mask][:]); c != 0 {
				return c
			}
			return cmp.Compare(x&mask, y&mask)
		})
		a = b
	}
	order := slices.Grow(sc.order[:0], len(keys))
	for j, w := range words {
		if j > 0 && tie(j) && keys[words[j-1]&mask] == keys[w&mask] {
			continue
		}
		order = append(order, int32(w&mask))
	}
	sc.order = order
}

// mayHold returns the keys of sc.order (key order) the filter lets
// through as full keys, and their places in sc.order; they are sc.work and
// sc.workPos.
func (db *DB) mayHold(sc *addScratch, keys []hashkey.Hash) ([]hashkey.Hash, []int32) {
	uniq := sc.order
	work, workPos := slices.Grow(sc.work[:0], len(uniq)), slices.Grow(sc.workPos[:0], len(uniq))
	db.fmu.RLock()
	for j, i := range uniq {
		if db.f.MayHaveFull(&keys[i]) {
			work = append(work, keys[i])
			workPos = append(workPos, int32(j))
		}
	}
	db.fmu.RUnlock()
	sc.work, sc.workPos = work, workPos
	return work, workPos
}

// unsettled returns the keys of sc.order (key order) not settled
// (settled[j] for sc.order[j]) and their positions in keys; they are
// sc.work and sc.workPos.
func (sc *addScratch) unsettled(keys []hashkey.Hash, settled []bool) ([]hashkey.Hash, []int32) {
	work, workPos := sc.work[:0], sc.workPos[:0]
	for j, i := range sc.order {
		if !settled[j] {
			work = append(work, keys[i])
			workPos = append(workPos, i)
		}
	}
	sc.work, sc.workPos = work, workPos
	return work, workPos
}

// bools returns b resized to n falses.
func bools(b []bool, n int) []bool {
	b = slices.Grow(b[:0], n)[:n]
	clear(b)
	return b
}

// addHashes adds keys, key-only full entries, and sets added (as long as
// keys) to which it added: the batch's keys are sorted once; the filter
// answers most new keys, the first store of the lookup order (looked up
// in key order, without locks) most stored ones; only the keys left (new
// there, and "maybe" for the filter) are looked up in every store, with
// the stripes of those keys locked, and added at their home, with rec.
// The caller holds db.mu shared.
func (db *DB) addHashes(keys []hashkey.Hash, added []bool, rec *Record) error {
	clear(added)
	if len(keys) == 0 {
		return db.writeRecordOnly(rec, added)
	}
	sc := db.st.getScratch()
	defer db.st.putScratch(sc, len(keys))
	sc.sortUnique(keys)
	uniq := sc.order
	// The keys the filter lets through, looked up without locks.
	work, workPos := db.mayHold(sc, keys)
	found := bools(sc.found, len(work))
	sc.found = found
	if err := db.st.lookupBareFirst(work, found); err != nil {
		return err
	}
	stored := bools(sc.stored, len(uniq))
	sc.stored = stored
	hits := 0
	for n, j := range workPos {
		if stored[j] = found[n]; found[n] {
			hits++
		}
	}
	// The filter's answers: absent, and found (the others are settled
	// under the locks below).
	prepassAbsent := len(uniq) - len(work)
	db.probes.prepass(prepassAbsent, hits)
	// The candidates: the keys not found.
	work, workPos = sc.unsettled(keys, stored)
	if len(work) == 0 {
		return db.writeRecordOnly(rec, added)
	}
	unlock := db.lockKeys(work)
	defer unlock()
	// Under the stripes no other writer of these keys runs, and each
	// write of one that finished put it in the filter first: a key the
	// filter says absent now is stored nowhere. The others are looked up
	// again in every store (another adder may have added them). (With
	// pread, a lookup of a key new to the key table reads every file:
	// most candidates of a seen-set are new, and the filter spares them
	// that.)
	maybe := bools(sc.maybe, len(work))
	sc.maybe = maybe
	asked := 0
	db.fmu.RLock()
	for k := range work {
		if maybe[k] = db.f.MayHaveFull(&work[k]); maybe[k] {
			asked++
		}
	}
	db.fmu.RUnlock()
	found = bools(sc.found, len(work))
	sc.found = found
	view, err := db.st.lookupBare(work, maybe, found, sc)
	if err != nil {
		return err
	}
	// The fresh keys: the candidates stored nowhere, moved to the front
	// of work (in key order still).
	m := 0
	hits = 0
	for k := range work {
		if found[k] {
			hits++
			continue
		}
		added[workPos[k]] = true
		work[m] = work[k]
		m++
	}
	// The filter's answers under the locks, for the candidates it let
	// through before (those it did not were counted above).
	db.probes.locked(len(work), asked, hits, prepassAbsent)
	fresh := work[:m]
	if len(fresh) == 0 {
		return db.writeRecordOnly(rec, added)
	}
	// The filter first: it never says "absent" for a stored key.
	db.admitKeys(fresh)
	var answer []byte
	if rec != nil {
		answer = rec.Answer(added)
	}
	if err := db.st.addBare(fresh, view, rec, answer); err != nil {
		clear(added)
		return err
	}
	var t tally
	t.n[kindFull] += int64(len(fresh))
	db.apply(&t)
	return nil
}

// lockKeys locks the stripes of keys, in ascending order, and returns
// the unlock function.
func (db *DB) lockKeys(keys []hashkey.Hash) func() {
	var need [256]bool
	for i := range keys {
		need[keys[i][0]] = true
	}
	for i := range need {
		if need[i] {
			db.stripes[i].Lock()
		}
	}
	return func() {
		for i := range need {
			if need[i] {
				db.stripes[i].Unlock()
			}
		}
	}
}

// admitKeys is admit for full keys.
func (db *DB) admitKeys(keys []hashkey.Hash) {
	db.fmu.Lock()
	defer db.fmu.Unlock()
	for i := range keys {
		db.f.AddFull(&keys[i])
		if db.next != nil {
			db.next.AddFull(&keys[i])
		}
	}
}
