package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// A key-table key is a hash's 32 bytes: the owner hands the key table
// the caller's hashes without copying them.
var (
	_ [hashkey.Size - keytable.KeySize]struct{}
	_ [keytable.KeySize - hashkey.Size]struct{}
)

// asKeys views hashes as key-table keys (the same bytes).
func asKeys(hs []hashkey.Hash) []keytable.Key {
	return unsafe.Slice((*keytable.Key)(unsafe.Pointer(unsafe.SliceData(hs))), len(hs))
}

// sortKeys sorts key-table keys.
func sortKeys(ks []keytable.Key) {
	slices.SortFunc(ks, func(a, b keytable.Key) int { return bytes.Compare(a[:], b[:]) })
}

// write stores entries[order[j]] for each j where put[j], at its home
// (see stores.home), and finishes the moves that makes: an entry found
// (f.at[j], from locate) in the other store is deleted there once it is
// written at its home. keep[j] (keep may be nil) writes a key-table row's
// columns and keeps the value it holds (a revisit: the value is not read).
// rec, when not nil, is stored with answer: in Badger ahead of the
// entries, or, when the key table takes every entry, in the key table's
// log entry with them and then in Badger (see addBare): no entry of the
// write is stored without its idempotency record (see Record). The caller
// holds the entries' write locks and has admitted new keys to the
// filter; the counts learn what the write changes from locate's answers.
//
// The steps, in order: Badger (the record, the entries at home there),
// the key table (the entries at home there, and the key-table copies of
// the entries just written to Badger: the second half of their moves),
// Badger (the Badger copies of entries now in the key table: the second
// half of those moves). A key both stores hold is Badger's, so a crash
// between two steps finishes a move into Badger and takes back a move out
// of it (see reconcile).
func (st *stores) write(entries []store.Entry, order []int, put, keep []bool, f *found, rec *Record, answer []byte) error {
	var toBadger []*badger.Entry
	var kb keytable.Batch    // kb.Deleted: second halves of moves into Badger
	var badgerDel [][]byte   // second halves of moves into the key table
	var moved []hashkey.Hash // keys whose move this write makes
	addSet := func(set keytable.Set, left int) {
		if kb.Set == nil {
			kb.Set = make([]keytable.Set, 0, left) // at most: not grown by doubling
		}
		kb.Set = append(kb.Set, set)
	}
	for j, i := range order {
		if !put[j] {
			continue
		}
		e := &entries[i]
		inKT := f.at[j]&inKeyTable != 0
		switch st.home(e) {
		case homeKeyTable:
			keepValue := keep != nil && keep[j] && inKT && f.at[j]&inBadger == 0
			switch {
			case keepValue || !isKeyOnly(e):
				addSet(keytable.Set{Key: keytable.Key(e.Hash), Cols: tableCols(&e.Value), Value: tableValue(&e.Value), KeepValue: keepValue}, len(order)-j)
			case !inKT:
				kb.Added = append(kb.Added, keytable.Key(e.Hash))
			case f.cols[j] != (keytable.Cols{}) || f.valued[j]:
				// A key-only entry over a row with columns or a value:
				// written bare.
				addSet(keytable.Set{Key: keytable.Key(e.Hash)}, len(order)-j)
			}
			if f.at[j]&inBadger != 0 {
				badgerDel = append(badgerDel, dbKey(e))
				moved = append(moved, e.Hash)
			}
		case homeBadger:
			toBadger = append(toBadger, badgerEntry(e))
			if inKT {
				kb.Deleted = append(kb.Deleted, keytable.Key(e.Hash))
				moved = append(moved, e.Hash)
			}
		}
	}
	ktWrites := len(kb.Added)+len(kb.Set)+len(kb.Deleted) > 0
	// The record rides in the key table's log entry when the key table
	// takes the whole write.
	noted := rec != nil && ktWrites && len(toBadger) == 0
	if !noted {
		if err := st.writeBadger(toBadger, rec, answer); err != nil {
			return err
		}
	}
	if ktWrites {
		if err := st.moveHalf(len(kb.Deleted) > 0); err != nil {
			st.unfinish(kb.Deleted)
			return err
		}
		var expires int64
		if noted {
			expires = time.Now().Add(rec.TTL).Unix()
			kb.Opaque = appendRecordNote(nil, rec.Key, expires, answer)
		}
		if err := st.keyTableWrite(&kb, nil); err != nil {
			st.unfinish(kb.Deleted)
			return err
		}
		if noted {
			if err := st.putNotedRecord(rec, expires, answer); err != nil {
				return err
			}
		}
	}
	if len(badgerDel) > 0 {
		if err := st.moveHalf(true); err != nil {
			st.unfinishBadger(badgerDel)
			return err
		}
		if err := st.deleteBadger(badgerDel); err != nil {
			st.unfinishBadger(badgerDel)
			return err
		}
	}
	for i := range moved {
		st.unfinished.remove(&moved[i])
	}
	return nil
}

// keyTableWrite writes b to the key table (after view, when not nil: see
// keytable.Table.WriteAfter), the persisted filter snapshot marked stale
// first. What the counts learn from it is in the caller's lookups: an
// expired row they found is not live.
func (st *stores) keyTableWrite(b *keytable.Batch, view *bareView) error {
	if err := st.markSnapshotStale(); err != nil {
		return err
	}
	var err error
	if view != nil {
		_, err = st.kt.WriteAfter(b, *view, nil)
	} else {
		_, err = st.kt.Write(b, nil)
	}
	if err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	return nil
}

// moveHalf runs the test hook between the two halves of a move.
func (st *stores) moveHalf(moving bool) error {
	if st.testMoveCrash != nil && moving {
		return st.testMoveCrash()
	}
	return nil
}

// unfinish records that the moves into Badger of keys stopped before
// their second half: lookups answer Badger's copy until finishMoves or
// the next Open's reconcile deletes the key table's.
func (st *stores) unfinish(keys []keytable.Key) {
	for i := range keys {
		st.unfinished.add((*hashkey.Hash)(&keys[i]))
	}
}

// unfinishBadger is unfinish for moves into the key table (Badger keys of
// full entries): Badger's copy stays the entry, as reconcile will keep it.
func (st *stores) unfinishBadger(keys [][]byte) {
	for _, k := range keys {
		st.unfinished.add((*hashkey.Hash)(k[1:]))
	}
}

// writeBadger writes rec (with answer) and then the entries in one
// ordered Badger write; nothing when there is neither.
func (st *stores) writeBadger(entries []*badger.Entry, rec *Record, answer []byte) error {
	if len(entries) == 0 && rec == nil {
		return nil
	}
	if rec != nil {
		entries = append([]*badger.Entry{rec.entry(answer)}, entries...)
	}
	return st.writeEntries(entries)
}

// deleteBadger deletes Badger keys in one batch.
func (st *stores) deleteBadger(keys [][]byte) error {
	return st.batch(func() error {
		wb := st.bdb.NewWriteBatch()
		defer wb.Cancel()
		for _, k := range keys {
			if err := wb.Delete(k); err != nil {
				return translate(err)
			}
		}
		return translate(wb.Flush())
	})
}

// changeKeyTable applies b to the key table, the persisted filter
// snapshot marked stale first.
func (st *stores) changeKeyTable(b *keytable.Batch) error {
	if err := st.markSnapshotStale(); err != nil {
		return err
	}
	if _, err := st.kt.Add(b, nil, nil); err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	return nil
}

// remove deletes the stored keys (existed[j]) of entries[order[j]] from
// every store that holds them (at[j]): the key table first, so that a
// crash between the two leaves Badger's copy, the entry, as it was. The
// caller holds the entries' write locks.
func (st *stores) remove(entries []store.Entry, order []int, existed []bool, at []location) error {
	var ktDel []keytable.Key
	var badgerDel [][]byte
	for j, i := range order {
		if !existed[j] {
			continue
		}
		e := &entries[i]
		if at[j]&inKeyTable != 0 {
			ktDel = append(ktDel, keytable.Key(e.Hash))
		}
		if at[j]&inBadger != 0 {
			badgerDel = append(badgerDel, dbKey(e))
		}
	}
	if len(ktDel) > 0 {
		if err := st.changeKeyTable(&keytable.Batch{Deleted: ktDel}); err != nil {
			return err
		}
	}
	if len(badgerDel) > 0 {
		if err := st.deleteBadger(badgerDel); err != nil {
			return err
		}
	}
	for _, k := range ktDel {
		st.unfinished.remove((*hashkey.Hash)(&k))
	}
	return nil
}

// deletePrefix deletes every entry under the bit prefix from both stores
// (the key table first, as remove) and returns the tally of what it
// deleted. The caller holds every write lock and has verified the tables
// of the range. Once begun it runs to its end: Badger's write batch may
// commit parts as it goes, and a part removed must reach the counts.
func (st *stores) deletePrefix(ctx context.Context, prefix []byte, bits int) (tally, error) {
	var t tally
	var ktDel []keytable.Key
	var ktExp []int64
	for e, err := range st.keyTableEntries(prefix, bits, false) {
		if err != nil {
			return t, err
		}
		ktDel = append(ktDel, e.Key)
		ktExp = append(ktExp, e.Cols.Expires)
	}
	// Collected first: the scan holds the table's files, and a delete may
	// start a merge that replaces them.
	for rest := ktDel; len(rest) > 0; {
		m := min(len(rest), 1<<16)
		if err := st.changeKeyTable(&keytable.Batch{Deleted: rest[:m]}); err != nil {
			return t, err
		}
		for i := range rest[:m] {
			h := (*hashkey.Hash)(&rest[i])
			if st.unfinished.has(h) {
				st.unfinished.remove(h) // counted as Badger's below
				continue
			}
			t.change(false, true, uint64(ktExp[i]), false, 0)
		}
		rest, ktExp = rest[m:], ktExp[m:]
	}
	err := st.batch(func() error {
		wb := st.bdb.NewWriteBatch()
		defer wb.Cancel()
		err := st.scanBadger(context.WithoutCancel(ctx), prefix, bits, false, func(key []byte, e *store.Entry) error {
			t.change(e.IsPrefix(), true, expiresAt(&e.Value), false, 0)
			return wb.Delete(bytes.Clone(key))
		})
		if err == nil {
			err = wb.Flush()
		}
		return err
	})
	return t, translate(err)
}

// lookupBareFirst looks keys (key order) up in the first store of the
// lookup order when that is the key table, without locks: most stored
// keys of a seen-set are answered here. found[n] is set for those found.
func (st *stores) lookupBareFirst(keys []hashkey.Hash, found []bool) error {
	if st.kt == nil {
		return nil
	}
	if _, err := st.kt.HasBatch(asKeys(keys), found); err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	for n := range keys {
		if found[n] && st.unfinished.has(&keys[n]) {
			found[n] = false
		}
	}
	return nil
}

// A bareView is what lookupBare learnt for addBare: the key files that
// hold none of the keys it did not find, which the add need not search
// again.
type bareView = keytable.View

// lookupBare settles, under the keys' write locks, which of cands (key
// order) are stored: maybe[n] says whether the filter let cands[n]
// through (the others are stored nowhere); found[n] is set for those
// stored, in lookup order (the key table, then Badger: see has). sc's
// Badger key space is reused.
func (st *stores) lookupBare(cands []hashkey.Hash, maybe, found []bool, sc *addScratch) (bareView, error) {
	look, lookPos := sc.look[:0], sc.lookPos[:0]
	for n := range cands {
		if maybe[n] {
			look = append(look, cands[n])
			lookPos = append(lookPos, int32(n))
		}
	}
	lookFound := bools(sc.lookFound, len(look))
	sc.look, sc.lookPos, sc.lookFound = look, lookPos, lookFound
	var view bareView
	if st.kt != nil {
		var err error
		if _, view, err = st.kt.HasBatchView(asKeys(look), lookFound); err != nil {
			return view, fmt.Errorf("index: key table: %w", err)
		}
	}
	bkeys, bpos, arena := sc.bkeys[:0], sc.bpos[:0], sc.barena[:0]
	askBadger := st.badgerMayHoldFull()
	for m, n := range lookPos {
		if lookFound[m] && !st.unfinished.has(&cands[n]) {
			found[n] = true
			continue
		}
		if !askBadger {
			continue
		}
		bpos = append(bpos, n)
		fk := fullKey(&cands[n])
		arena = append(arena, fk[:]...)
	}
	for m := range bpos {
		bkeys = append(bkeys, arena[m*fullKeyLen:(m+1)*fullKeyLen:(m+1)*fullKeyLen])
	}
	sc.bkeys, sc.bpos, sc.barena = bkeys, bpos, arena
	live, _, err := st.existKeys(bkeys)
	if err != nil {
		return view, err
	}
	for m, n := range bpos {
		found[n] = live[m]
	}
	return view, nil
}

// addBare stores fresh, key-only full entries stored nowhere (key order,
// under their write locks, admitted to the filter), at their home, with
// rec (when not nil) and its answer. In the key table the record rides in
// the same log entry as the keys (see restoreRecords) and then goes to
// Badger; in Badger it is written ahead of the keys.
func (st *stores) addBare(fresh []hashkey.Hash, view bareView, rec *Record, answer []byte) error {
	if st.bareHome() == homeBadger {
		entries := make([]*badger.Entry, len(fresh))
		for i := range fresh {
			k := fullKey(&fresh[i])
			entries[i] = badger.NewEntry(k[:], nil)
		}
		return st.writeBadger(entries, rec, answer)
	}
	return st.keyTableWriteNoted(&keytable.Batch{Added: asKeys(fresh)}, view, rec, answer)
}

// keyTableWriteNoted writes b to the key table after view, with rec (when
// not nil) and its answer riding in the same log entry and then written
// to Badger (see addBare).
func (st *stores) keyTableWriteNoted(b *keytable.Batch, view bareView, rec *Record, answer []byte) error {
	var expires int64
	if rec != nil {
		expires = time.Now().Add(rec.TTL).Unix()
		b.Opaque = appendRecordNote(nil, rec.Key, expires, answer)
	}
	if err := st.keyTableWrite(b, &view); err != nil || rec == nil {
		return err
	}
	return st.putNotedRecord(rec, expires, answer)
}

// visitsBare reports whether a visit of key-only full entries may take
// the bare path (visitBare): every full entry, with columns or not, lives
// in the key table alone, and no move is unfinished.
func (st *stores) visitsBare() bool {
	return st.place(true, true, 0) == homeKeyTable && st.place(true, false, 0) == homeKeyTable &&
		!st.badgerMayHoldFull() && st.unfinished.n.Load() == 0
}

// lookupColsFirst looks keys (key order) up in the key table without
// locks, for visitHashes on an index where visitsBare: cols[n] is what it
// holds for keys[n].
func (st *stores) lookupColsFirst(keys []hashkey.Hash, cols []keytable.Found) error {
	if _, err := st.kt.GetBatch(asKeys(keys), cols, nil); err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	return nil
}

// lookupCols is lookupColsFirst under the keys' write locks, and returns
// the view it searched, for visitBare.
func (st *stores) lookupCols(keys []hashkey.Hash, cols []keytable.Found) (bareView, error) {
	_, view, err := st.kt.GetBatchView(asKeys(keys), cols)
	if err != nil {
		return view, fmt.Errorf("index: key table: %w", err)
	}
	return view, nil
}

// visitBare writes a visit of key-only full entries found by lookupCols
// (view), under their write locks, on an index where visitsBare: fresh
// (key order, stored nowhere, admitted to the filter) added with first and
// last seen now (unix seconds), due rows set with their value kept, and
// rec (when not nil) with answer, as addBare writes it.
func (st *stores) visitBare(fresh []hashkey.Hash, now int64, due []keytable.Set, view bareView, rec *Record, answer []byte) error {
	b := keytable.Batch{Added: asKeys(fresh), AddedCols: keytable.Cols{First: now, Last: now}, Set: due}
	return st.keyTableWriteNoted(&b, view, rec, answer)
}

// putNotedRecord writes to Badger the record a key-table write just
// carried in its log entry (a note), as Badger's copy: its commit takes
// one Badger version, which sync need not make durable, as the key
// table's log holds the record (see sync).
func (st *stores) putNotedRecord(rec *Record, expires int64, answer []byte) error {
	if st.testRecordCrash != nil {
		if err := st.testRecordCrash(); err != nil {
			return err
		}
	}
	e := badger.NewEntry(metaKey(metaRecord+rec.Key), answer)
	e.ExpiresAt = uint64(expires)
	st.recMu.RLock()
	err := st.writeEntries([]*badger.Entry{e})
	if err == nil {
		st.recordVersions.Add(1)
	}
	st.recMu.RUnlock()
	if err != nil {
		return translate(err)
	}
	st.recordsPending.Store(true)
	return nil
}

// putRecord stores rec with answer alone.
func (st *stores) putRecord(rec *Record, answer []byte) error {
	return st.writeEntries([]*badger.Entry{rec.entry(answer)})
}

// recorded returns the bytes of the idempotency record named key.
func (st *stores) recorded(key string) (_ []byte, ok bool, err error) {
	var b []byte
	err = st.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(metaKey(metaRecord + key))
		if err != nil {
			return err
		}
		b, err = item.ValueCopy(nil)
		return err
	})
	if err == badger.ErrKeyNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, translate(err)
	}
	return b, true, nil
}

// Idempotency records of key-table batches. A batch with a record (see
// Record) that adds keys to the key table carries the record in its log
// entry (keytable.Batch.Opaque: the record's note), in the same append
// as the keys; the record is then written to Badger. A crash between the
// two leaves the record in the log only: Open writes the records of the
// log's unmerged entries to Badger again (restoreRecords), and a merge
// (which drops log segments) first makes Badger durable (syncRecords). So
// a key of the batch is never stored without its record.
//
// A note: uvarint len(key), key, uvarint expiry (Unix seconds), uvarint
// len(answer), answer. Replay hands the notes of all entries
// concatenated.

// appendRecordNote appends the note of a record.
func appendRecordNote(b []byte, key string, expires int64, answer []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(expires))
	b = binary.AppendUvarint(b, uint64(len(answer)))
	return append(b, answer...)
}

// errBadRecordNote is returned for a damaged note.
var errBadRecordNote = fmt.Errorf("%w: key table: bad idempotency record", store.ErrCorrupt)

// decodeRecordNotes calls fn for each record of b, notes one after
// another. Its cost is bounded by len(b).
func decodeRecordNotes(b []byte, fn func(key string, expires int64, answer []byte) error) error {
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > MaxRecordKeyLen || n > uint64(len(b)-k) {
			return errBadRecordNote
		}
		key := string(b[k : k+int(n)])
		b = b[k+int(n):]
		x, k := binary.Uvarint(b)
		if k <= 0 || x > 1<<62 {
			return errBadRecordNote
		}
		b = b[k:]
		n, k = binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return errBadRecordNote
		}
		answer := b[k : k+int(n)]
		b = b[k+int(n):]
		if err := fn(key, int64(x), answer); err != nil {
			return err
		}
	}
	return nil
}

// restoreRecords writes the records of the notes replayed from the key
// table's log to Badger (those not expired), and syncs them before a
// merge drops the log (see syncRecords).
func (st *stores) restoreRecords(notes []byte) error {
	now := time.Now().Unix()
	var es []*badger.Entry
	err := decodeRecordNotes(notes, func(key string, expires int64, answer []byte) error {
		if expires <= now {
			return nil
		}
		e := badger.NewEntry(metaKey(metaRecord+key), answer) // notes outlive the write
		e.ExpiresAt = uint64(expires)
		es = append(es, e)
		return nil
	})
	if err != nil {
		return err
	}
	if len(es) == 0 {
		return nil
	}
	if err := st.writeEntries(es); err != nil {
		return err
	}
	st.recordsPending.Store(true)
	return nil
}

// syncRecords makes Badger durable when it holds idempotency records
// written since the last time that came from the key table's log (the
// key table's merge calls it before it drops log segments).
func (st *stores) syncRecords() error {
	if !st.recordsPending.Swap(false) {
		return nil
	}
	if err := st.bdb.Sync(); err != nil {
		st.recordsPending.Store(true)
		return translate(err)
	}
	if err := st.syncMemtables(); err != nil {
		st.recordsPending.Store(true)
		return err
	}
	return nil
}

// putRecords writes idempotency records (those not expired at now; of
// two with one key, the later) to Badger: Recover's, into a new index.
func (st *stores) putRecords(recs []recovered, now time.Time) error {
	if len(recs) == 0 {
		return nil
	}
	last := make(map[string]int, len(recs))
	for i := range recs {
		last[recs[i].key] = i
	}
	var es []*badger.Entry
	for i := range recs {
		rec := &recs[i]
		if last[rec.key] != i || rec.expires != 0 && rec.expires <= uint64(now.Unix()) {
			continue
		}
		e := badger.NewEntry(metaKey(metaRecord+rec.key), rec.answer)
		e.ExpiresAt = rec.expires
		es = append(es, e)
	}
	if len(es) == 0 {
		return nil
	}
	return st.writeEntries(es)
}
