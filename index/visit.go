package index

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/store"
)

// metaTTL is the metadata key recorded before the first entry with an
// expiry is written (its value is empty).
const metaTTL = "ttl"

// errExpired stops a read that found an expired entry.
var errExpired = errors.New("index: expired")

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
	if err := db.st.update(func(txn *badger.Txn) error { return txn.Set(metaKey(metaTTL), nil) }); err != nil {
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
	var out []bool
	if keys, ok := bareKeys(entries); ok && db.st.visitsBare() {
		out = make([]bool, len(keys))
		err = db.visitHashes(keys, revisitAfter, out, rec)
	} else {
		out, err = db.visitLocked(entries, revisitAfter, rec)
	}
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
	// A key-table row's text and data are read only when the sighting
	// gives one of the two: given neither, the write keeps the row's
	// value without reading it; given both, it replaces it.
	old, err := db.st.values(entries, p.order, &p.found, func(j int) bool {
		v := &entries[p.order[j]].Value
		return (len(v.Text) == 0) != (len(v.Data) == 0)
	})
	if err != nil {
		return nil, err
	}
	var fresh []int // keys not stored before (for the filter; the counts come from p)
	put := make([]bool, len(p.order))
	keep := make([]bool, len(p.order))
	var ws []store.Entry // what is written (the caller's entries are not changed), once a key is due
	expiring := false
	var t tally
	for j, i := range p.order {
		e := &entries[i]
		v := e.Value
		if !p.existed[j] {
			v.FirstSeen, v.LastSeen = now, now
			fresh = append(fresh, i)
		} else {
			o := &old[j]
			if o.HasTimes() && (revisitAfter <= 0 || now.Sub(o.LastSeen) < revisitAfter) {
				continue
			}
			// A row the key table alone holds keeps its value (the
			// columns are written); another's is carried over.
			keep[j] = len(v.Text) == 0 && len(v.Data) == 0 && p.at[j] == inKeyTable
			if len(v.Text) == 0 {
				v.Text = o.Text
			}
			if len(v.Data) == 0 {
				v.Data = o.Data
			}
			if v.Expires.IsZero() {
				v.Expires = o.Expires
			}
			v.FirstSeen, v.LastSeen = o.FirstSeen, now
			if v.FirstSeen.IsZero() {
				v.FirstSeen = now
			}
		}
		if ws == nil {
			ws = slices.Clone(entries)
		}
		ws[i] = store.Entry{Hash: e.Hash, Len: e.Len, Value: v}
		put[j], out[i] = true, true
		x := expiresAt(&v)
		expiring = expiring || x != 0
		t.change(e.IsPrefix(), p.existed[j], p.oldExp[j], true, x)
	}
	if ws == nil {
		return out, db.writeRecordOnly(rec, out)
	}
	db.admit(entries, fresh, nil)
	if expiring {
		if err := db.markTTL(); err != nil {
			return nil, err
		}
	}
	var answer []byte
	if rec != nil {
		answer = rec.Answer(out)
	}
	if err := db.st.write(ws, p.order, put, keep, &p.found, rec, answer); err != nil {
		return nil, err
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
	if err := db.st.guard.CheckRanges(ranges); err != nil {
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
	t, err := db.st.deletePrefix(ctx, prefix, bits)
	db.apply(&t)
	if err != nil {
		return 0, 0, err
	}
	return -t.n[kindFull], -t.n[kindPrefix], nil // each removal counted -1
}
