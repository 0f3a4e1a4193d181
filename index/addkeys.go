package index

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
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
// With a key table the batch allocates nothing per key: its scratch
// space is kept for the next batch. Without one it is AddBatch.
func (db *DB) AddKeys(ctx context.Context, keys []hashkey.Hash, added []bool, rec *Record) (err error) {
	if len(added) != len(keys) {
		return fmt.Errorf("%w: %d answers for %d keys", store.ErrInvalidOptions, len(added), len(keys))
	}
	if err := rec.check(); err != nil {
		return err
	}
	if db.kt == nil { // set by Open only
		entries := make([]store.Entry, len(keys))
		for i := range keys {
			entries[i] = store.Entry{Hash: keys[i], Len: hashkey.Size}
		}
		res, err := db.writeRecorded(ctx, entries, true, rec)
		copy(added, res)
		return err
	}
	if err := db.addKeysShared(ctx, keys, added, rec); err != nil {
		return err
	}
	db.maybeGrow()
	return nil
}

// addKeysShared is AddKeys under the shared lock, with a key table.
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

// addKeys is writeLocked for an add of key-only full entries with a key
// table (addHashes of their keys). The caller holds db.mu shared.
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
// (DB.addScratch): a served seen-set adds batch after batch of the same
// size, and allocating these for each cost as much memory as the keys.
// About 54 bytes a key.
type addScratch struct {
	words   []uint64       // sortUnique's sort
	order   []int32        // the positions of the batch's keys, once each, in key order
	work    []keytable.Key // the keys of a step: looked up, then candidates, then fresh
	workPos []int32
	found   []bool
	stored  []bool
	bkeys   [][]byte // Badger keys of the candidates the filter let through
	bpos    []int32  // bkeys[n] is the key of work[bpos[n]]
	barena  []byte   // the bytes of bkeys
	// Under the stripes: the candidates the filter lets through
	// (work[lookPos[n]]), looked up again in the key table.
	look      []keytable.Key
	lookPos   []int32
	lookFound []bool
}

// maxScratchKeys bounds the batch whose scratch is kept for reuse
// (larger ones are left to the collector).
const maxScratchKeys = 1 << 18

func (db *DB) getScratch() *addScratch {
	if sc, ok := db.addScratch.Get().(*addScratch); ok {
		return sc
	}
	return new(addScratch)
}

func (db *DB) putScratch(sc *addScratch, n int) {
	if n <= maxScratchKeys {
		clear(sc.bkeys) // they point into barena
		db.addScratch.Put(sc)
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

// bools returns b resized to n falses.
func bools(b []bool, n int) []bool {
	b = slices.Grow(b[:0], n)[:n]
	clear(b)
	return b
}

// addHashes adds keys, key-only full entries, with a key table, and sets
// added (as long as keys) to which it added: the batch's keys are sorted
// once; the filter answers most new keys, the key table (looked up in
// key order) most stored ones; only the keys left (new to the key table,
// and "maybe" for the filter) are looked up in Badger, with the stripes
// of those keys locked, and added to the key table, with rec in the same
// log entry. The caller holds db.mu shared.
func (db *DB) addHashes(keys []hashkey.Hash, added []bool, rec *Record) error {
	clear(added)
	if len(keys) == 0 {
		return db.writeRecordOnly(rec, added)
	}
	sc := db.getScratch()
	defer db.putScratch(sc, len(keys))
	sc.sortUnique(keys)
	uniq := sc.order
	// The keys the filter lets through (uniq[workPos[n]]), looked up in
	// the key table.
	work, workPos := slices.Grow(sc.work[:0], len(uniq)), slices.Grow(sc.workPos[:0], len(uniq))
	db.fmu.RLock()
	for j, i := range uniq {
		if db.f.MayHaveFull(&keys[i]) {
			work = append(work, keytable.Key(keys[i]))
			workPos = append(workPos, int32(j))
		}
	}
	db.fmu.RUnlock()
	found := bools(sc.found, len(work))
	sc.found = found
	if _, err := db.kt.HasBatch(work, found); err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	stored := bools(sc.stored, len(uniq))
	sc.stored = stored
	for n, j := range workPos {
		stored[j] = found[n]
	}
	// The filter's answers: absent, and found in the key table (the
	// others are settled in Badger below).
	db.probes.add(len(uniq)-len(work)+len(found), found)
	// The candidates: the keys not in the key table (work[k], from
	// keys[workPos[k]]).
	work, workPos = work[:0], workPos[:0]
	for j, i := range uniq {
		if !stored[j] {
			work = append(work, keytable.Key(keys[i]))
			workPos = append(workPos, i)
		}
	}
	sc.work, sc.workPos = work, workPos
	if len(work) == 0 {
		return db.writeRecordOnly(rec, added)
	}
	unlock := db.lockKeys(work)
	defer unlock()
	// Under the stripes no other writer of these keys runs, and each
	// write of one that finished put it in the filter first: a key the
	// filter says absent now is stored nowhere. The others are looked up
	// again in the key table (another adder may have added them), then
	// in Badger. (With pread, a lookup of a key new to the table reads
	// every file: most candidates of a seen-set are new, and the filter
	// spares them that.)
	look, lookPos := sc.look[:0], sc.lookPos[:0]
	db.fmu.RLock()
	for k := range work {
		if db.f.MayHaveFull((*hashkey.Hash)(&work[k])) {
			look = append(look, work[k])
			lookPos = append(lookPos, int32(k))
		}
	}
	db.fmu.RUnlock()
	lookFound := bools(sc.lookFound, len(look))
	sc.look, sc.lookPos, sc.lookFound = look, lookPos, lookFound
	// The view: the key files that hold none of the fresh keys below
	// (searched for the looked-up ones; the others are stored nowhere),
	// which the add need not search again.
	_, view, err := db.kt.HasBatchView(look, lookFound)
	if err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	found = bools(sc.found, len(work))
	sc.found = found
	bkeys, bpos, arena := sc.bkeys[:0], sc.bpos[:0], sc.barena[:0]
	asked := len(work)
	for n, k := range lookPos {
		if lookFound[n] {
			found[k] = true
			asked--
			continue
		}
		bpos = append(bpos, k)
		fk := fullKey((*hashkey.Hash)(&work[k]))
		arena = append(arena, fk[:]...)
	}
	for n := range bpos {
		bkeys = append(bkeys, arena[n*fullKeyLen:(n+1)*fullKeyLen:(n+1)*fullKeyLen])
	}
	sc.bkeys, sc.bpos, sc.barena = bkeys, bpos, arena
	ex, _, err := db.existKeys(bkeys, asked)
	if err != nil {
		return err
	}
	// The fresh keys: the candidates in neither, moved to the front of
	// work (in key order still).
	m, n := 0, 0
	for k := range work {
		if found[k] {
			continue
		}
		if n < len(bpos) && int(bpos[n]) == k {
			n++
			if ex[n-1] {
				continue
			}
		}
		added[workPos[k]] = true
		work[m] = work[k]
		m++
	}
	fresh := work[:m]
	if len(fresh) == 0 {
		return db.writeRecordOnly(rec, added)
	}
	if err := db.ktDirty(); err != nil {
		clear(added)
		return err
	}
	// The filter first: it never says "absent" for a stored key.
	db.admitKeys(fresh)
	b := keytable.Batch{Added: fresh}
	var answer []byte
	var expires int64
	if rec != nil {
		answer = rec.Answer(added)
		expires = time.Now().Add(rec.TTL).Unix()
		b.Opaque = appendRecordOpaque(nil, rec.Key, expires, answer)
	}
	// kt.Add sets ok[k] for each key it added: all of them, as the
	// stripes keep every other writer of the keys out.
	ok := bools(sc.found, len(fresh))
	sc.found = ok
	if _, err := db.kt.AddAfter(&b, view, ok, nil); err != nil {
		clear(added)
		return fmt.Errorf("index: key table: %w", err)
	}
	for k, a := range ok {
		if !a {
			panic(fmt.Sprintf("index: key table: key %x not added under its stripe", fresh[k]))
		}
	}
	db.entries.Add(int64(len(fresh)))
	if rec != nil {
		if db.testRecordCrash != nil {
			if err := db.testRecordCrash(); err != nil {
				return err
			}
		}
		e := badger.NewEntry(metaKey(metaRecord+rec.Key), answer)
		e.ExpiresAt = uint64(expires)
		// Its commit takes one Badger version, which Sync need not make
		// durable: the key table's log holds the record (see syncLocked).
		db.recMu.RLock()
		err := db.bdb.Update(func(txn *badger.Txn) error { return txn.SetEntry(e) })
		if err == nil {
			db.recordVersions.Add(1)
		}
		db.recMu.RUnlock()
		if err != nil {
			return translate(err)
		}
		db.recordsPending.Store(true)
	}
	return nil
}

// lockKeys locks the stripes of keys, in ascending order, and returns
// the unlock function.
func (db *DB) lockKeys(keys []keytable.Key) func() {
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
func (db *DB) admitKeys(keys []keytable.Key) {
	db.fmu.Lock()
	defer db.fmu.Unlock()
	for i := range keys {
		h := (*hashkey.Hash)(&keys[i])
		db.f.AddFull(h)
		if db.next != nil {
			db.next.AddFull(h)
		}
	}
}
