package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/extsort"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// The key table (see Options.KeyTable) holds the index's key-only full
// entries: no text, data, times or expiry. Badger holds every other
// entry. A key is stored in one of the two: an add looks in both, and a
// write that gives a key-table entry a value moves it to Badger (written
// there first, then deleted from the table: a crash between the two
// leaves it in both, and Badger's copy, the newer, is the one Get reads).
//
// The filter is in front of both, and the entry count covers both.
const (
	keyTableDir = "keytable"
	// metaKeyTableDirty is written (to any new value) and synced by the
	// first key-table write after Open or a filter snapshot: the persisted
	// snapshot, which covers the key table too, is stale from then on.
	metaKeyTableDirty = "keytable-dirty"
)

// Format versions: formatBadger is an index of Badger entries only (what
// every index before the key table is, and what an index without one
// still records); formatKeyTable adds the key table, which a program that
// reads only formatBadger would not see.
const (
	formatBadger   = 1
	formatKeyTable = 2
)

// openKeyTable opens the key table when the index has one (format 2), or
// creates it, and records format 2, for a new index (unless
// Options.NoKeyTable) and for an existing one when Options.KeyTable asks
// for the upgrade.
func (db *DB) openKeyTable() error {
	has := db.format >= formatKeyTable
	want := db.opts.KeyTable || (db.created && !db.opts.NoKeyTable)
	if db.opts.InMemory || (!has && (!want || db.opts.ReadOnly)) {
		return nil
	}
	dir := filepath.Join(db.path, keyTableDir)
	var replayed []byte // records restored from the log, see ktRecord
	kt, err := keytable.Open(dir, &keytable.Options{
		ReadOnly:  db.opts.ReadOnly,
		DeltaKeys: db.opts.keyTableDelta,
		Replay: func(opaque []byte) error {
			replayed = append(replayed, opaque...)
			return nil
		},
		BeforeDrop: db.syncRecords,
	})
	if err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	if !has {
		err = db.bdb.Update(func(txn *badger.Txn) error {
			return txn.Set(metaKey(metaFormat), binary.AppendUvarint(nil, formatKeyTable))
		})
		if err != nil {
			kt.Close()
			return translate(err)
		}
		db.format = formatKeyTable
	}
	if len(replayed) > 0 && !db.opts.ReadOnly {
		if err := db.restoreRecords(replayed); err != nil {
			kt.Close()
			return err
		}
	}
	db.kt = kt
	return nil
}

// Records of key-table writes. A batch with an idempotency record (see
// Record) that adds keys to the key table carries the record in its log
// entry (keytable.Batch.Opaque), in the same append as the keys; the
// record is then written to Badger. A crash between the two leaves the
// record in the log only: Open writes the records of the log's unmerged
// entries to Badger again, and a merge (which drops log segments) first
// makes Badger durable (syncRecords). So a key of the batch is never
// stored without its record.
//
// The opaque form of one record: uvarint len(key), key, uvarint expiry
// (Unix seconds), uvarint len(answer), answer. Replay hands the records
// of all entries concatenated.

// appendRecordOpaque appends the opaque form of a record.
func appendRecordOpaque(b []byte, key string, expires int64, answer []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(expires))
	b = binary.AppendUvarint(b, uint64(len(answer)))
	return append(b, answer...)
}

// errBadRecord is returned for a damaged opaque record.
var errBadRecord = fmt.Errorf("%w: key table: bad idempotency record", store.ErrCorrupt)

// decodeRecordsOpaque calls fn for each record of b, the opaque forms of
// records one after another. Its cost is bounded by len(b).
func decodeRecordsOpaque(b []byte, fn func(key string, expires int64, answer []byte) error) error {
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > MaxRecordKeyLen || n > uint64(len(b)-k) {
			return errBadRecord
		}
		key := string(b[k : k+int(n)])
		b = b[k+int(n):]
		x, k := binary.Uvarint(b)
		if k <= 0 || x > 1<<62 {
			return errBadRecord
		}
		b = b[k:]
		n, k = binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return errBadRecord
		}
		answer := b[k : k+int(n)]
		b = b[k+int(n):]
		if err := fn(key, int64(x), answer); err != nil {
			return err
		}
	}
	return nil
}

// restoreRecords writes the records replayed from the key table's log to
// Badger (those not expired), and syncs them before a merge drops the
// log (see syncRecords).
func (db *DB) restoreRecords(b []byte) error {
	now := time.Now().Unix()
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	n := 0
	err := decodeRecordsOpaque(b, func(key string, expires int64, answer []byte) error {
		if expires <= now {
			return nil
		}
		e := badger.NewEntry(metaKey(metaRecord+key), bytes.Clone(answer))
		e.ExpiresAt = uint64(expires)
		n++
		return wb.SetEntry(e)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := wb.Flush(); err != nil {
		return translate(err)
	}
	db.recordsPending.Store(true)
	return nil
}

// syncRecords makes Badger durable when it holds idempotency records
// written since the last time that came from the key table's log (the
// key table's merge calls it before it drops log segments).
func (db *DB) syncRecords() error {
	if !db.recordsPending.Swap(false) {
		return nil
	}
	if err := db.bdb.Sync(); err != nil {
		db.recordsPending.Store(true)
		return translate(err)
	}
	if err := db.syncMemtables(); err != nil {
		db.recordsPending.Store(true)
		return err
	}
	return nil
}

// isKeyOnly reports whether e belongs in the key table.
func isKeyOnly(e *store.Entry) bool {
	return !e.IsPrefix() && !encodes(&e.Value) && e.Value.Expires.IsZero()
}

// allKeyOnly reports whether every entry belongs in the key table.
func allKeyOnly(entries []store.Entry) bool {
	for i := range entries {
		if !isKeyOnly(&entries[i]) {
			return false
		}
	}
	return true
}

// ktDirty marks the persisted filter snapshot stale, durably, before the
// first key-table write after Open or a snapshot (the snapshot's state is
// Badger's version, which key-table writes do not change).
func (db *DB) ktDirty() error {
	if db.ktWrote.Load() || !db.ktWrote.CompareAndSwap(false, true) {
		return nil
	}
	err := db.bdb.Update(func(txn *badger.Txn) error {
		return txn.Set(metaKey(metaKeyTableDirty), binary.AppendUvarint(nil, db.committed()))
	})
	if err == nil {
		err = db.bdb.Sync()
	}
	if err != nil {
		db.ktWrote.Store(false)
	}
	return translate(err)
}

// addKeys is writeLocked for an add of key-only full entries with a key
// table: the batch's keys are sorted once; the filter answers most new
// keys, the key table (looked up in key order) most stored ones; only the
// keys left (new to the key table, and "maybe" for the filter) are looked
// up in Badger, with the stripes of those keys locked, and added to the
// key table, with rec in the same log entry. The caller holds db.mu
// shared.
func (db *DB) addKeys(entries []store.Entry, rec *Record) ([]bool, error) {
	result := make([]bool, len(entries))
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	sortEntries(entries, order)
	uniq := order[:0]
	for j, i := range order {
		if j > 0 && entries[order[j-1]].Hash == entries[i].Hash {
			continue
		}
		uniq = append(uniq, i)
	}
	db.lookingUp()
	maybe := make([]bool, len(uniq))
	db.fmu.RLock()
	for j, i := range uniq {
		maybe[j] = db.f.MayHaveFull(&entries[i].Hash)
	}
	db.fmu.RUnlock()
	// Stored keys, found in the key table. (The slices are sized once:
	// entries are 160 bytes, and appends copied them about twice.)
	nMaybe := 0
	for _, m := range maybe {
		if m {
			nMaybe++
		}
	}
	look := make([]keytable.Key, 0, nMaybe)
	lookPos := make([]int, 0, nMaybe)
	for j, i := range uniq {
		if maybe[j] {
			look = append(look, keytable.Key(entries[i].Hash))
			lookPos = append(lookPos, j)
		}
	}
	found := make([]bool, len(look))
	if _, err := db.kt.HasBatch(look, found); err != nil {
		return nil, fmt.Errorf("index: key table: %w", err)
	}
	stored := make([]bool, len(uniq))
	for n, j := range lookPos {
		stored[j] = found[n]
	}
	nCand := 0
	for _, st := range stored {
		if !st {
			nCand++
		}
	}
	cand := make([]store.Entry, 0, nCand) // entries not in the key table, in key order
	candPos := make([]int, 0, nCand)
	for j, i := range uniq {
		if !stored[j] {
			cand = append(cand, entries[i])
			candPos = append(candPos, i)
		}
	}
	// The filter's answers: absent, and found in the key table (the
	// others are settled in Badger below).
	db.probes.add(len(uniq)-len(look)+len(found), found)
	if len(cand) == 0 {
		return result, db.writeRecordOnly(rec, result)
	}
	unlock := db.lockFor(cand)
	defer unlock()
	// Under the stripes: no other writer of these keys runs. Again the
	// key table (another adder may have added some), then Badger.
	look = slices.Grow(look[:0], len(cand))
	for k := range cand {
		look = append(look, keytable.Key(cand[k].Hash))
	}
	found = make([]bool, len(look))
	_, view, err := db.kt.HasBatchView(look, found)
	if err != nil {
		return nil, fmt.Errorf("index: key table: %w", err)
	}
	idx := make([]int, 0, len(cand))
	for k := range cand {
		if !found[k] {
			idx = append(idx, k)
		}
	}
	ex, _, err := db.existSorted(cand, idx)
	if err != nil {
		return nil, err
	}
	var fresh []int // into cand
	for n, k := range idx {
		if !ex[n] {
			fresh = append(fresh, k)
		}
	}
	for _, k := range fresh {
		result[candPos[k]] = true
	}
	if len(fresh) == 0 {
		return result, db.writeRecordOnly(rec, result)
	}
	if err := db.ktDirty(); err != nil {
		return nil, err
	}
	// The filter first: it never says "absent" for a stored key.
	db.admit(cand, fresh, nil)
	b := keytable.Batch{Added: make([]keytable.Key, len(fresh))}
	for n, k := range fresh {
		b.Added[n] = keytable.Key(cand[k].Hash)
	}
	var answer []byte
	var expires int64
	if rec != nil {
		answer = rec.Answer(result)
		expires = time.Now().Add(rec.TTL).Unix()
		b.Opaque = appendRecordOpaque(nil, rec.Key, expires, answer)
	}
	added := make([]bool, len(b.Added))
	// The fresh keys were absent from view: Add need not search its
	// files again.
	if _, err := db.kt.AddAfter(&b, view, added, nil); err != nil {
		return nil, fmt.Errorf("index: key table: %w", err)
	}
	var n int64
	for k, ok := range added {
		if !ok {
			// The stripes keep every other writer of the key out.
			panic(fmt.Sprintf("index: key table: key %x not added under its stripe", b.Added[k]))
		}
		n++
	}
	db.entries.Add(n)
	if rec != nil {
		if db.testRecordCrash != nil {
			if err := db.testRecordCrash(); err != nil {
				return nil, err
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
			return nil, translate(err)
		}
		db.recordsPending.Store(true)
	}
	return result, nil
}

// ktHas reports whether the key table holds h (false without one).
func (db *DB) ktHas(h *hashkey.Hash) (bool, error) {
	if db.kt == nil {
		return false, nil
	}
	ok, _, err := db.kt.Has((*keytable.Key)(h))
	if err != nil {
		return false, fmt.Errorf("index: key table: %w", err)
	}
	return ok, nil
}

// ktMark returns in[j]: whether the key table holds the full entry
// entries[idx[j]].
func (db *DB) ktMark(entries []store.Entry, idx []int) ([]bool, error) {
	in := make([]bool, len(idx))
	if db.kt == nil {
		return in, nil
	}
	for j, i := range idx {
		e := &entries[i]
		if e.IsPrefix() {
			continue
		}
		ok, err := db.ktHas(&e.Hash)
		if err != nil {
			return nil, err
		}
		in[j] = ok
	}
	return in, nil
}

// ktDelete deletes keys from the key table (moved to Badger, or deleted).
func (db *DB) ktDelete(keys []keytable.Key) error {
	if len(keys) == 0 {
		return nil
	}
	if err := db.ktDirty(); err != nil {
		return err
	}
	if _, err := db.kt.Add(&keytable.Batch{Deleted: keys}, nil, nil); err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	return nil
}

// ktKeys yields the key table's keys under the bit prefix, in order.
func (db *DB) ktKeys(prefix []byte, bits int) iter.Seq2[*keytable.Key, error] {
	return func(yield func(*keytable.Key, error) bool) {
		if db.kt == nil {
			return
		}
		stopped := false
		err := db.kt.Scan(prefix, bits, func(k *keytable.Key) error {
			if !yield(k, nil) {
				stopped = true
				return errStop
			}
			return nil
		})
		if err != nil && !stopped {
			yield(nil, fmt.Errorf("index: key table: %w", err))
		}
	}
}

// closeKeyTable closes the key table, if any.
func (db *DB) closeKeyTable() error {
	if db.kt == nil {
		return nil
	}
	if err := db.kt.Close(); err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	return nil
}

// ktDeletePrefix deletes the key table's keys under the bit prefix and
// returns how many it deleted. The caller holds every stripe.
func (db *DB) ktDeletePrefix(prefix []byte, bits int) (int64, error) {
	var batch []keytable.Key
	for k, err := range db.ktKeys(prefix, bits) {
		if err != nil {
			return 0, err
		}
		batch = append(batch, *k)
	}
	// Collected first: the scan holds the table's files, and a delete
	// may start a merge that replaces them.
	var n int64
	for len(batch) > 0 {
		m := min(len(batch), 1<<16)
		if err := db.ktDelete(batch[:m]); err != nil {
			return n, err
		}
		n += int64(m)
		batch = batch[m:]
	}
	return n, nil
}

// loadKeys is Load with a key table, under the exclusive lock: the
// sorted, checked input's new key-only entries are written straight into
// a new key file (keytable.Ingest), admitted to the filter before it is
// installed; the other entries are added to Badger in batches, as
// AddBatch adds them.
func (db *DB) loadKeys(ctx context.Context, s *extsort.Sorter, input int64) (_ store.LoadResult, err error) {
	m, err := s.Merge()
	if err != nil {
		return store.LoadResult{}, err
	}
	in, err := db.kt.NewIngest(uint64(s.Full()))
	if err != nil {
		return store.LoadResult{}, fmt.Errorf("index: key table: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			in.Abort()
		}
	}()
	ex := db.newExistence()
	defer ex.close()
	const batchLen = 1 << 16
	var rich []store.Entry
	admit := make([]hashkey.Hash, 0, batchLen)
	var added int64
	flushRich := func() error {
		if len(rich) == 0 {
			return nil
		}
		ok, err := db.writeLocked(rich, true, nil)
		for _, a := range ok {
			if a {
				added++
			}
		}
		rich = rich[:0]
		return err
	}
	flushAdmit := func() {
		db.fmu.Lock()
		for i := range admit {
			db.f.AddFull(&admit[i])
			if db.next != nil {
				db.next.AddFull(&admit[i])
			}
		}
		db.fmu.Unlock()
		admit = admit[:0]
	}
	for {
		key, lv, ok, err := m.Next()
		if err != nil {
			return store.LoadResult{}, err
		}
		if !ok {
			break
		}
		e := store.Entry{Len: len(key) - 1}
		copy(e.Hash[:], key[1:])
		val, exp := splitLoadValue(lv)
		if len(val) > 0 {
			v, err := decodeValue(bytes.Clone(val))
			if err != nil {
				return store.LoadResult{}, err
			}
			e.Value = v
		}
		if exp > 0 {
			e.Value.Expires = store.Unix(int64(exp))
		}
		if !isKeyOnly(&e) {
			if rich = append(rich, e); len(rich) == batchLen {
				if err := flushRich(); err != nil {
					return store.LoadResult{}, err
				}
			}
			continue
		}
		stored, err := ex.has(key)
		if err != nil {
			return store.LoadResult{}, err
		}
		if !stored {
			// The filter said "maybe" (else has said no): the key table.
			db.fmu.RLock()
			maybe := db.f.MayHaveFull(&e.Hash)
			db.fmu.RUnlock()
			if maybe {
				if stored, err = db.ktHas(&e.Hash); err != nil {
					return store.LoadResult{}, err
				}
			}
		}
		if stored {
			continue
		}
		if err := in.Add((*keytable.Key)(&e.Hash)); err != nil {
			return store.LoadResult{}, fmt.Errorf("index: key table: %w", err)
		}
		if admit = append(admit, e.Hash); len(admit) == batchLen {
			flushAdmit()
		}
	}
	if err := flushRich(); err != nil {
		return store.LoadResult{}, err
	}
	flushAdmit()
	if in.Len() > 0 {
		if err := db.ktDirty(); err != nil {
			return store.LoadResult{}, err
		}
	}
	committed = true
	if err := in.Commit(); err != nil {
		return store.LoadResult{}, fmt.Errorf("index: key table: %w", err)
	}
	n := int64(in.Len())
	db.entries.Add(n)
	added += n
	if err := db.syncLocked(); err != nil {
		return store.LoadResult{}, err
	}
	// The key table's new keys were written as a sorted file.
	return store.LoadResult{Added: added, Present: input - added, Streamed: n > 0}, nil
}

// readKeyTable appends the key table's keys, when dir has one, to the
// entries Recover copies. A key table that does not open whole (a
// damaged file or log) is reported and skipped.
func (r *recoverer) readKeyTable(entries []store.Entry) []store.Entry {
	dir := filepath.Join(r.dir, keyTableDir)
	if _, err := os.Stat(dir); err != nil {
		return entries
	}
	f := RecoverFile{Name: keyTableDir, Kind: "key table"}
	kt, err := keytable.Open(dir, &keytable.Options{ReadOnly: true})
	if err == nil {
		err = kt.Scan(nil, 0, func(k *keytable.Key) error {
			entries = append(entries, store.Entry{Hash: hashkey.Hash(*k), Len: hashkey.Size})
			f.Records++
			return nil
		})
		err = errors.Join(err, kt.Close())
	}
	if err != nil {
		f.Problem = integrity.FirstLine(err.Error())
	}
	r.file(f)
	return entries
}
