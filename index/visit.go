package index

import (
	"context"
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// metaTTL is the metadata key recorded before the first entry with an
// expiry is written (its value is empty).
const metaTTL = "ttl"

// errExpired stops a read that found an expired entry.
var errExpired = errors.New("index: expired")

// expired reports whether item has expired by the index's clock. Badger
// hides an entry once the wall clock reaches its ExpiresAt; this applies
// the index's clock as well, so that every read and the existence checks of
// writes agree on one clock.
func (db *DB) expired(item *badger.Item) bool {
	x := item.ExpiresAt()
	return x != 0 && int64(x) <= db.opts.now().Unix()
}

// expiresOf returns item's expiry (zero: none).
func expiresOf(item *badger.Item) time.Time { return store.Unix(int64(item.ExpiresAt())) }

// expiresAt returns v's expiry as Badger's ExpiresAt (0: none).
func expiresAt(v *store.Value) uint64 {
	if x := store.UnixOf(v.Expires); x > 0 {
		return uint64(x)
	}
	return 0
}

// badgerEntry returns the Badger entry that stores e.
func badgerEntry(e *store.Entry) *badger.Entry {
	be := badger.NewEntry(dbKey(e), appendValue(nil, e.Value))
	be.ExpiresAt = expiresAt(&e.Value)
	return be
}

// readTTL sets db.ttl when the index records that it holds entries with an
// expiry.
func (db *DB) readTTL() error {
	return db.bdb.View(func(txn *badger.Txn) error {
		_, err := txn.Get(metaKey(metaTTL))
		switch {
		case err == nil:
			db.ttl.Store(true)
		case !errors.Is(err, badger.ErrKeyNotFound):
			return err
		}
		return nil
	})
}

// noteTTL records, before the first entry with an expiry is written, that
// the index holds such entries (Stats then counts them by iteration).
func (db *DB) noteTTL(entries []store.Entry) error {
	if db.ttl.Load() {
		return nil
	}
	for i := range entries {
		if expiresAt(&entries[i].Value) != 0 {
			return db.markTTL()
		}
	}
	return nil
}

// markTTL records that the index holds entries with an expiry.
func (db *DB) markTTL() error {
	if db.ttl.Load() {
		return nil
	}
	if err := db.bdb.Update(func(txn *badger.Txn) error { return txn.Set(metaKey(metaTTL), nil) }); err != nil {
		return translate(err)
	}
	db.ttl.Store(true)
	return nil
}

// VisitBatch records a sighting of each entry and reports, in input order,
// which are new: absent or expired, stored without times, or last
// reported new revisitAfter or longer ago by the index's clock (the wall
// clock; tests set a fake one), to the second
// (revisitAfter <= 0: a stored entry with times is never new again). A new
// entry is written with LastSeen now, FirstSeen kept (now when it was
// absent), and the entry's Text, Data and Expires where set, else the
// stored ones; other entries are left as they were. It holds the same
// stripe locks as AddBatch, so among concurrent callers (and Add*) each
// sighting is reported new once. A key repeated in the batch is new at
// most once (the first).
func (db *DB) VisitBatch(ctx context.Context, entries []store.Entry, revisitAfter time.Duration) ([]bool, error) {
	return db.visitBatch(ctx, entries, revisitAfter, nil)
}

// visitBatch is VisitBatch that stores rec (when not nil) with the entries.
func (db *DB) visitBatch(ctx context.Context, entries []store.Entry, revisitAfter time.Duration, rec *Record) (_ []bool, err error) {
	for i := range entries {
		if err := db.check(&entries[i]); err != nil {
			return nil, err
		}
	}
	defer db.catch(&err)
	if err := db.beginWrite(ctx); err != nil {
		return nil, err
	}
	defer db.mu.RUnlock()
	if err := db.roomFor(writeCost(entries) + int64(len(entries))*2*16); err != nil {
		return nil, err
	}
	if err := db.prepareWrite(); err != nil {
		return nil, err
	}
	out, err := db.visitLocked(entries, revisitAfter, rec)
	if err == nil {
		db.maybeGrow()
	}
	return out, err
}

func (db *DB) visitLocked(entries []store.Entry, revisitAfter time.Duration, rec *Record) ([]bool, error) {
	out := make([]bool, len(entries))
	if len(entries) == 0 {
		return out, db.writeRecordOnly(rec, out)
	}
	unlock := db.lockFor(entries)
	defer unlock()
	// Read under the locks: a later visitor of a key reads a later clock.
	now := time.Unix(db.opts.now().Unix(), 0).UTC()
	p, err := db.plan(entries, false)
	if err != nil {
		return nil, err
	}
	type write struct {
		i, j int // index into entries, into p.order
		e    store.Entry
	}
	var writes []write
	var fresh []int          // keys not stored before (for the filter; the counts come from p)
	var moved []keytable.Key // from the key table to Badger
	err = db.bdb.View(func(txn *badger.Txn) error {
		for j, i := range p.order {
			e := entries[i]
			v := e.Value
			if !p.existed[j] {
				v.FirstSeen, v.LastSeen = now, now
				fresh = append(fresh, i)
				writes = append(writes, write{i, j, store.Entry{Hash: e.Hash, Len: e.Len, Value: v}})
				continue
			}
			var old store.Value // a key-table entry has no value
			if p.inKT[j] {
				moved = append(moved, keytable.Key(e.Hash))
			} else {
				item, err := txn.Get(dbKey(&e))
				if err != nil {
					// Stored a moment ago and held by the stripe lock since.
					return err
				}
				if old, err = db.itemValue(item); err != nil {
					return err
				}
			}
			if old.HasTimes() && (revisitAfter <= 0 || now.Sub(old.LastSeen) < revisitAfter) {
				continue
			}
			if len(v.Text) == 0 {
				v.Text = old.Text
			}
			if len(v.Data) == 0 {
				v.Data = old.Data
			}
			if v.Expires.IsZero() {
				v.Expires = old.Expires
			}
			v.FirstSeen, v.LastSeen = old.FirstSeen, now
			if v.FirstSeen.IsZero() {
				v.FirstSeen = now
			}
			writes = append(writes, write{i, j, store.Entry{Hash: e.Hash, Len: e.Len, Value: v}})
		}
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	if len(writes) == 0 {
		return out, db.writeRecordOnly(rec, out)
	}
	db.admit(entries, fresh, nil)
	ws := make([]store.Entry, len(writes))
	for k := range writes {
		ws[k] = writes[k].e
	}
	if err := db.noteTTL(ws); err != nil {
		return nil, err
	}
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	for _, w := range writes {
		out[w.i] = true
	}
	if rec != nil {
		if err := rec.add(wb, out, true); err != nil {
			return nil, err
		}
	}
	for k := range ws {
		if err := wb.SetEntry(badgerEntry(&ws[k])); err != nil {
			return nil, translate(err)
		}
	}
	if err := wb.Flush(); err != nil {
		return nil, translate(err)
	}
	if err := db.ktMove(moved); err != nil {
		return nil, err
	}
	var t tally
	for k, w := range writes {
		t.change(w.e.IsPrefix(), p.existed[w.j], p.oldExp[w.j], true, expiresAt(&ws[k].Value))
	}
	db.apply(&t)
	return out, nil
}

// DeletePrefix removes every entry Scan(prefix, bits, 0, ...) would
// visit, and returns how many full and prefix entries it removed. Writers
// wait while it runs (it holds every stripe lock); readers do not, and
// see the entries go in key order. The removed keys stay in the filter
// ("maybe") until it is rebuilt. The tables of the range are verified
// first, so that damage is an error before anything is removed.
func (db *DB) DeletePrefix(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error) {
	if err := store.CheckPrefix(prefix, bits); err != nil {
		return 0, 0, err
	}
	ranges := scanRanges(prefix, bits)
	defer db.catch(&err, ranges...)
	if err := db.beginWrite(ctx); err != nil {
		return 0, 0, err
	}
	defer db.mu.RUnlock()
	if err := db.roomFor(64 << 10); err != nil {
		return 0, 0, err
	}
	if err := db.prepareWrite(); err != nil {
		return 0, 0, err
	}
	if err := db.guard.CheckRanges(ranges); err != nil {
		return 0, 0, err
	}
	for i := range db.stripes {
		db.stripes[i].Lock()
	}
	db.pmu.Lock()
	defer func() {
		db.pmu.Unlock()
		for i := range db.stripes {
			db.stripes[i].Unlock()
		}
	}()
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	var t tally
	// Once begun, the delete runs to its end: the write batch may commit
	// parts as it goes, and a part removed must reach the counts.
	err = db.scanBadger(context.WithoutCancel(ctx), prefix, bits, false, func(key []byte, e *store.Entry) error {
		t.change(e.IsPrefix(), true, expiresAt(&e.Value), false, 0)
		return wb.Delete(append([]byte(nil), key...))
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return 0, 0, translate(err)
	}
	n, err := db.ktDeletePrefix(prefix, bits)
	t.n[kindFull] -= n
	db.apply(&t)
	if err != nil {
		return 0, 0, err
	}
	return -t.n[kindFull], -t.n[kindPrefix], nil // each removal counted -1
}
