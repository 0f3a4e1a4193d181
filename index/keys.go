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
// there first, then deleted from the table: see ktMove). A crash (or a
// failed write) between the two leaves it in both; Badger's copy, the
// newer, is the entry: Get reads it, scans and counts see it once, a
// delete deletes both, the filter's rebuild (at the Open after a crash)
// counts it once and deletes the key table's copy, and Verify reports a
// copy it finds.
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
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); has && errors.Is(err, os.ErrNotExist) {
		// Written before format 2 is recorded: the key table (its keys,
		// acknowledged) was removed, and would come back empty.
		return fmt.Errorf("%w: %s: the index records a key table, and %s is missing. Copy what is readable with \"urlhash recover --db %s --to NEW\"",
			store.ErrCorrupt, db.path, filepath.Join(dir, "MANIFEST"), db.path)
	}
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
	if errors.Is(err, keytable.ErrLost) {
		// As for Badger's logs (see checkSynced).
		return fmt.Errorf("index: key table: %w. Copy what is readable with \"urlhash recover --db %s --to NEW\"; to accept the loss and open it anyway, remove %s",
			err, db.path, filepath.Join(dir, keytable.SyncedName))
	}
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

// ktMove deletes from the key table keys just written to Badger (given a
// value): the second step of a move.
func (db *DB) ktMove(keys []keytable.Key) error {
	if db.testMoveCrash != nil && len(keys) > 0 {
		if err := db.testMoveCrash(); err != nil {
			return err
		}
	}
	return db.ktDelete(keys)
}

// ktCopies calls fn for each key of the key table, in order, with whether
// Badger holds a live full entry of it too (a move a crash interrupted),
// and stops at fn's first error. An expired one does not count: the key
// table's entry, added after the expiry, is the key's (see plan).
func (db *DB) ktCopies(fn func(k *keytable.Key, inBadger bool) error) error {
	if db.kt == nil {
		return nil
	}
	txn := db.bdb.NewTransaction(false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{tagFull}})
	defer it.Close()
	kf := keyFinder{it: it, n: uint64(db.entries.Load())}
	var key [fullKeyLen]byte
	key[0] = tagFull
	for k, err := range db.ktKeys(nil, 0) {
		if err != nil {
			return err
		}
		copy(key[1:], k[:])
		item := kf.find(key[:])
		if err := fn(k, item != nil && !db.expired(item)); err != nil {
			return err
		}
	}
	return nil
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
// entries Recover copies, and keeps the idempotency records of its log's
// unmerged batches (see restoreRecords) for readKeyTableRecords. A key
// table that does not open whole (a damaged file or log) is reported and
// skipped; one whose log lost acknowledged records (keytable.ErrLost) is
// reported, and what is left copied.
func (r *recoverer) readKeyTable(entries []store.Entry) []store.Entry {
	dir := filepath.Join(r.dir, keyTableDir)
	if _, err := os.Stat(dir); err != nil {
		return entries
	}
	f := RecoverFile{Name: keyTableDir, Kind: "key table"}
	o := keytable.Options{ReadOnly: true, Replay: func(opaque []byte) error {
		r.ktRecords = append(r.ktRecords, opaque...)
		return nil
	}}
	kt, err := keytable.Open(dir, &o)
	if errors.Is(err, keytable.ErrLost) {
		f.Problem = integrity.FirstLine(err.Error())
		r.ktRecords = r.ktRecords[:0]
		o.IgnoreSynced = true
		kt, err = keytable.Open(dir, &o)
	}
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
		r.ktRecords = nil
	}
	r.file(f)
	return entries
}

// readKeyTableRecords adds the records of the key table's log to those
// Recover copies, after Badger's: as Open writes them over Badger's.
// Damaged ones are reported and skipped.
func (r *recoverer) readKeyTableRecords() {
	err := decodeRecordsOpaque(r.ktRecords, func(key string, expires int64, answer []byte) error {
		r.recorded = append(r.recorded, recovered{key: key, expires: uint64(expires), answer: bytes.Clone(answer)})
		return nil
	})
	if err != nil {
		r.file(RecoverFile{Name: keyTableDir, Kind: "key table records", Problem: integrity.FirstLine(err.Error())})
	}
	r.ktRecords = nil
}

// writeRecovered writes the idempotency records Recover read (those not
// expired at now; of two with one key, the later) to the new index.
func (db *DB) writeRecovered(recs []recovered, now time.Time) error {
	if len(recs) == 0 {
		return nil
	}
	last := make(map[string]int, len(recs))
	for i := range recs {
		last[recs[i].key] = i
	}
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	for i := range recs {
		rec := &recs[i]
		if last[rec.key] != i || rec.expires != 0 && rec.expires <= uint64(now.Unix()) {
			continue
		}
		e := badger.NewEntry(metaKey(metaRecord+rec.key), rec.answer)
		e.ExpiresAt = rec.expires
		if err := wb.SetEntry(e); err != nil {
			return translate(err)
		}
	}
	return translate(wb.Flush())
}
