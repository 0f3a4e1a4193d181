package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/index/internal/keytable"
	"github.com/urlhash/urlhash/store"
)

// stores is the one owner of placement: it holds the index's two stores,
// Badger and the key table, decides which of them holds an entry (home),
// looks keys up in one order, moves an entry between them as one step,
// finishes the moves a crash or a failed write cut short (reconcile),
// and offers the sections the rest of the index works with: lookups
// (has, get, hasSorted, longestPrefix, locate, lookupBare), writes
// (write, remove, addBare, deletePrefix), passes over the keys (scan,
// keyPass, eachFullLead), backup (writeKeySection, readKeySection), Verify's
// and Recover's reads. DB keeps the locks, the filter and the counts, and
// asks only for keys the filter let through; nothing outside this type,
// Open and their tests names the key table.
//
// Placement (home): with a key table that holds values (format 3),
// every full entry lives there, with its times as columns and its text and
// data in the table's value files; with a key table of format 2 (read
// only: a writable Open upgrades it), a key-only full entry (no text,
// data, times or expiry: a seen-set's) lives there and every other entry
// in Badger, as does every entry of an index without a key table (format
// 1, and in memory). Badger also keeps the prefix entries, the metadata
// and the idempotency records.
//
// Lookup order: the key table, then Badger. A key is stored in one of the
// two, except while a move of it runs (under its stripe lock) or after one
// was cut short. A move writes the entry at its new home, then deletes it
// from the old one; in between, both hold it, and Badger's copy is the
// entry: after a crash (or a failed second half) the owner finishes a move
// into Badger and takes back a move out of it, both by deleting the key
// table's copy (reconcile, an Open step; finishMoves, at Close), and until
// then a lookup that finds such a key in the key table answers Badger's
// copy (unfinishedMoves). Either outcome is one a write that did not
// return may have. The upgrade to format 3 (upgradeValues) is such a move
// of every full entry Badger holds: cut short, it is taken back and done
// again.
type stores struct {
	bdb *badger.DB
	// kt holds the key-only full entries when the index has a key table
	// (format 2), else nil.
	kt       *keytable.Table
	guard    *integrity.Guard // verifies Badger's tables; nil in memory
	dir      string           // the index directory; "" in memory
	readOnly bool
	// badgerNoFull says that Badger holds no full entry, as Open found
	// it on an index of format 3 (whose writes put none there): lookups
	// of full keys then skip Badger. Restore clears it (a backup of an
	// older format writes its entries to Badger); the next Open looks
	// again.
	badgerNoFull atomic.Bool
	// valueCache is the key table's cache of decoded value blocks
	// (keytable.Options.ValueCache): Options.BlockCacheSize, the budget
	// Badger's block cache has for compressed tables (which an index
	// whose key table holds the values hardly reads).
	valueCache int64
	// valueBlockSize is the decoded size of the key table's new value
	// blocks (Options.ValueBlockSize; 0: its default).
	valueBlockSize int
	// storedValues writes them uncompressed (Options.StoredValues).
	storedValues bool
	// now is the index's clock: an entry expires at it.
	now func() time.Time
	// fullCount returns the index's full entries, for the keyFinder's
	// estimate of the gap between two keys.
	fullCount func() int64
	// format is the format version the index records.
	format uint64

	// order orders Badger's writes against those of values that go to
	// its value log (see valueorder.go).
	order valueOrder

	// acked is Badger's side of what Sync acknowledged (see synced.go).
	acked syncMark
	// staleMarked is set once the persisted filter snapshot is marked
	// stale since Open or the last snapshot (see markSnapshotStale).
	staleMarked atomic.Bool
	// recordsPending is set while Badger holds idempotency records of
	// key-table batches not yet synced (see syncRecords).
	recordsPending atomic.Bool
	// recordVersions counts the Badger versions those records' commits
	// took (see sync); a commit and its count are one step under recMu
	// held shared, so that sync reads both at one moment.
	recordVersions atomic.Uint64
	recMu          sync.RWMutex
	// panics counts the panics turned into errors (tests).
	panics atomic.Int64
	// scratch keeps the working space of bare-key adds for the next (see
	// DB.addHashes).
	scratch sync.Pool
	// unfinished holds the keys whose move this process did not finish.
	unfinished unfinishedMoves

	// testRecordCrash, when set, is called between a key-table batch and
	// the write of its idempotency record to Badger (tests: an error
	// stands for a crash there).
	testRecordCrash func() error
	// testMoveCrash, when set, is called between the two halves of a move
	// (see write); an error stops the move there, as a crash.
	testMoveCrash func() error
	// testUpgradeCrash, when set, is called by moveBadgerFull between the
	// key file and Badger's drop; an error stops the upgrade there.
	testUpgradeCrash func() error
	// dropped is told what the key table's merges dropped as expired
	// (the counts' share of them, see Options.Expired there).
	dropped func([]keytable.ExpiryCount)
}

// A home is the store that holds an entry.
type home uint8

const (
	homeBadger home = iota
	homeKeyTable
)

// place is the placement rule, the one function that decides where an
// entry lives, from what the entry is and the index's format: a full
// entry or not, with an encoded value (text, data or times) or not, and
// its expiry (0: none).
func (st *stores) place(full, valued bool, expiry uint64) home {
	switch {
	case st.kt == nil || !full:
		return homeBadger
	case st.format >= formatValues, !valued && expiry == 0:
		return homeKeyTable
	}
	return homeBadger
}

// badgerMayHoldFull reports whether a full key's lookup must ask Badger
// after the key table (see badgerNoFull).
func (st *stores) badgerMayHoldFull() bool {
	return !st.valuesInKeyTable() || !st.badgerNoFull.Load()
}

// checkBadgerFull sets badgerNoFull from what Badger holds (an Open
// step, after upgradeValues).
func (st *stores) checkBadgerFull() error {
	if !st.valuesInKeyTable() {
		return nil
	}
	none, err := st.badgerHoldsNoFullEntries()
	st.badgerNoFull.Store(none && err == nil)
	return err
}

// valuesInKeyTable reports whether the key table holds the full entries
// with values (format 3).
func (st *stores) valuesInKeyTable() bool { return st.kt != nil && st.format >= formatValues }

// home is place for an entry.
func (st *stores) home(e *store.Entry) home {
	return st.place(!e.IsPrefix(), encodes(&e.Value), expiresAt(&e.Value))
}

// homeEncoded is place for an entry in its encoded form: its Badger key,
// its encoded value and its expiry (a load's).
func (st *stores) homeEncoded(key, val []byte, expiry uint64) home {
	return st.place(key[0] == tagFull, len(val) > 0, expiry)
}

// bareHome is home of a key-only full entry (AddKeys' keys).
func (st *stores) bareHome() home { return st.place(true, false, 0) }

// keyTableMerges returns the key table's background merges finished,
// their total time and the bytes of key files they wrote (0 without a
// key table), for Activity.
func (st *stores) keyTableMerges() (count int64, took time.Duration, bytes int64) {
	if st.kt == nil {
		return 0, 0, 0
	}
	m := st.kt.Merges()
	return m.Count, m.Time, m.Bytes
}

// hasKeyTable reports whether the index keeps a key table (tests).
func (st *stores) hasKeyTable() bool { return st.kt != nil }

// The key table lives in DIR/keytable. Its writes do not change Badger's
// version, which the filter snapshot records: the first after Open or a
// snapshot writes metaSnapshotStale first (see markSnapshotStale).
const (
	keyTableDir = "keytable"
	// metaSnapshotStale is written (to any new value) and synced by the
	// first key-table write after Open or a filter snapshot: the persisted
	// snapshot, which covers the key table too, is stale from then on.
	metaSnapshotStale = "keytable-dirty"
)

// Format versions: formatBadger is an index of Badger entries only (what
// every index before the key table is, and what an index without one
// still records); formatKeyTable adds the key table of key-only entries,
// which a program that reads only formatBadger would not see;
// formatValues keeps every full entry in the key table, values too (key
// files with columns, value files), which a program that reads only
// formatKeyTable would not see.
const (
	formatBadger   = 1
	formatKeyTable = 2
	formatValues   = 3
)

// expired reports whether item has expired by the index's clock. Badger
// hides an entry once the wall clock reaches its ExpiresAt; this applies
// the index's clock as well, so that every read and the existence checks of
// writes agree on one clock.
func (st *stores) expired(item *badger.Item) bool {
	x := item.ExpiresAt()
	return x != 0 && int64(x) <= st.now().Unix()
}

// openKeyTable opens the key table when the index has one (format 2 or
// 3), or creates it when want (a new index, or Options.KeyTable) and
// records format 3 when Badger holds no full entry (a new index), else
// format 2 (upgradeValues moves Badger's full entries and records 3).
// Opening replays the key table's log and checks its sync mark; the
// idempotency records the log's unmerged batches carry are written to
// Badger again (restoreRecords).
func (st *stores) openKeyTable(want bool, deltaKeys int) error {
	has := st.format >= formatKeyTable
	if st.dir == "" || (!has && (!want || st.readOnly)) {
		return nil
	}
	dir := filepath.Join(st.dir, keyTableDir)
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); has && errors.Is(err, os.ErrNotExist) {
		// Written before format 2 is recorded: the key table (its keys,
		// acknowledged) was removed, and would come back empty.
		return fmt.Errorf("%w: %s: the index records a key table, and %s is missing. Copy what is readable with \"urlhash recover --db %s --to NEW\"",
			store.ErrCorrupt, st.dir, filepath.Join(dir, "MANIFEST"), st.dir)
	}
	var notes []byte // idempotency records replayed from the log
	kt, err := keytable.Open(dir, &keytable.Options{
		ReadOnly:       st.readOnly,
		DeltaKeys:      deltaKeys,
		ValueCache:     st.valueCache,
		ValueBlockSize: st.valueBlockSize,
		StoredValues:   st.storedValues,
		Replay: func(opaque []byte) error {
			notes = append(notes, opaque...)
			return nil
		},
		BeforeDrop: st.syncRecords,
		Now:        func() int64 { return st.now().Unix() },
		Expired: func(c []keytable.ExpiryCount) {
			if st.dropped != nil {
				st.dropped(c)
			}
		},
	})
	if errors.Is(err, keytable.ErrLost) {
		// As for Badger's logs (see checkSynced).
		return fmt.Errorf("index: key table: %w. Copy what is readable with \"urlhash recover --db %s --to NEW\"; to accept the loss and open it anyway, remove %s",
			err, st.dir, filepath.Join(dir, keytable.SyncedName))
	}
	if err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	if !has {
		format := uint64(formatKeyTable)
		empty, err := st.badgerHoldsNoFullEntries()
		if err != nil {
			kt.Close()
			return err
		}
		if empty {
			format = formatValues
		}
		if err := st.recordFormat(format); err != nil {
			kt.Close()
			return err
		}
	}
	if len(notes) > 0 && !st.readOnly {
		if err := st.restoreRecords(notes); err != nil {
			kt.Close()
			return err
		}
	}
	st.kt = kt
	return nil
}

// upgradeValues (an Open step, after reconcile) moves a writable index of
// format 2 to format 3: Badger's full entries move into the key table
// (moveBadgerFull), then format 3 is recorded. It reports whether it
// moved any entry (the counts are then recounted).
func (st *stores) upgradeValues() (bool, error) {
	if st.readOnly || st.kt == nil || st.format >= formatValues {
		return false, nil
	}
	moved, err := st.moveBadgerFull()
	if err != nil {
		return false, err
	}
	return moved, st.recordFormat(formatValues)
}

// moveBadgerFull moves every live full entry Badger holds into the key
// table, with its times as columns and its text and data as a value, in
// one new key file (a bulk of them: they are in key order in Badger);
// then Badger's full keyspace is dropped. A crash between the key file
// and the drop leaves the keys in both, Badger's the entry: the next
// Open's reconcile takes the key table's copies back (and upgradeValues
// moves them again). Expired entries are not moved. It reports whether
// it moved any entry. The caller is Open.
func (st *stores) moveBadgerFull() (bool, error) {
	// Two passes over Badger's full entries: the first sizes the key
	// file's columns (see keytable.IngestOptions), the second writes it.
	var o keytable.IngestOptions
	each := func(fn func(key []byte, v *store.Value) error) error {
		return translate(st.bdb.View(func(txn *badger.Txn) error {
			return eachKey(txn, tagFull, func(item *badger.Item) error {
				if len(item.Key()) != fullKeyLen || st.expired(item) {
					return nil
				}
				v, err := st.itemValue(item)
				if err != nil {
					return fmt.Errorf("index: upgrade to format %d: value of %x: %w", formatValues, item.Key()[1:], err)
				}
				return fn(item.Key(), &v)
			})
		}))
	}
	err := each(func(_ []byte, v *store.Value) error {
		widenCols(&o, tableCols(v), len(v.Text) > 0 || len(v.Data) > 0)
		o.Keys++
		return nil
	})
	if err != nil {
		return false, err
	}
	if o.Keys > 0 {
		in, err := st.kt.NewIngestOf(&o)
		if err != nil {
			return false, fmt.Errorf("index: key table: %w", err)
		}
		err = each(func(key []byte, v *store.Value) error {
			_, err := in.Put(&keytable.Set{Key: keytable.Key(key[1:]), Cols: tableCols(v), Value: tableValue(v)})
			return err
		})
		if err == nil {
			err = st.markSnapshotStale()
		}
		if err != nil {
			in.Abort()
			return false, err
		}
		if err := in.Commit(); err != nil {
			return false, fmt.Errorf("index: key table: %w", err)
		}
		if err := st.kt.Sync(); err != nil {
			return false, fmt.Errorf("index: key table: %w", err)
		}
		if st.testUpgradeCrash != nil {
			if err := st.testUpgradeCrash(); err != nil {
				return false, err
			}
		}
		if err := st.batch(func() error { return st.bdb.DropPrefix([]byte{tagFull}) }); err != nil {
			return false, translate(err)
		}
	}
	return o.Keys > 0, nil
}

// recordFormat records the format version, durably.
func (st *stores) recordFormat(v uint64) error {
	err := st.update(func(txn *badger.Txn) error {
		return txn.Set(metaKey(metaFormat), binary.AppendUvarint(nil, v))
	})
	if err == nil {
		err = st.bdb.Sync()
	}
	if err != nil {
		return translate(err)
	}
	st.format = v
	return nil
}

// close closes the key table, if any, and Badger (when open), and
// returns their errors.
func (st *stores) close() (errKeyTable, errBadger error) {
	if st.kt != nil {
		if err := st.kt.Close(); err != nil {
			errKeyTable = fmt.Errorf("index: key table: %w", err)
		}
	}
	if st.bdb != nil {
		errBadger = translate(st.bdb.Close())
	}
	return errKeyTable, errBadger
}

// sync makes every write acknowledged so far durable on disk: the key
// table's log, then Badger with its sync mark (see synced.go).
func (st *stores) sync() error {
	if st.kt != nil {
		if err := st.kt.Sync(); err != nil {
			return fmt.Errorf("index: key table: %w", err)
		}
	}
	st.acked.mu.Lock()
	defer st.acked.mu.Unlock()
	// Every Badger write commits at a new version: when none did since
	// the last sync made Badger durable, it has nothing to sync (a
	// seen-set on a key table writes only to the key table), nor when
	// each did for an idempotency record that the key table's log holds
	// too (a served dedupe's batches): the log is durable, and the key
	// table syncs Badger before it drops a log segment (syncRecords).
	if st.kt != nil && st.acked.synced != 0 {
		v, records := st.badgerVersion()
		if v-st.acked.synced == records-st.acked.syncedRecords {
			st.acked.synced, st.acked.syncedRecords = v, records
			return nil
		}
	}
	seq, err := st.markSync()
	if err != nil {
		return err
	}
	v, records := st.badgerVersion() // what the fsync below covers, at least
	if err := st.bdb.Sync(); err != nil {
		return translate(err)
	}
	if err := st.syncMemtables(); err != nil {
		return err
	}
	if err := st.recordSync(seq, false); err != nil {
		return err
	}
	st.acked.synced, st.acked.syncedRecords = v, records
	return nil
}

// badgerVersion returns Badger's version and the count of record commits
// (recordVersions) at one moment: every record counted has committed at
// that version or before.
func (st *stores) badgerVersion() (version, records uint64) {
	st.recMu.Lock()
	defer st.recMu.Unlock()
	return st.committed(), st.recordVersions.Load()
}

// committed returns the version of Badger's last commit. Badger's
// MaxVersion reads its memtable's maximum without synchronisation with a
// write in progress (a data race); a read transaction's timestamp is that
// version, once every commit up to it has finished.
func (st *stores) committed() uint64 {
	txn := st.bdb.NewTransaction(false)
	defer txn.Discard()
	return txn.ReadTs()
}

// syncMemtables fsyncs every memtable log in the directory. Badger's Sync
// covers only the active memtable; one rotated out but not yet flushed to a
// table holds acknowledged writes that a power loss would otherwise take.
// (A killed process loses none of them: the pages are in the OS's cache.)
func (st *stores) syncMemtables() error { return st.syncFiles("*.mem") }

// syncFiles fsyncs every file of the index directory that pattern
// matches; one removed meanwhile (a memtable flushed, a value log
// collected) is skipped.
func (st *stores) syncFiles(pattern string) error {
	names, err := filepath.Glob(filepath.Join(st.dir, pattern))
	if err != nil {
		return fmt.Errorf("index: sync: %w", err)
	}
	for _, name := range names {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("index: sync: %w", err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("index: sync %s: %w", name, err)
		}
	}
	return nil
}

// markSnapshotStale marks the persisted filter snapshot stale, durably,
// before the first key-table write after Open or a snapshot (the
// snapshot's state is Badger's version, which key-table writes do not
// change).
func (st *stores) markSnapshotStale() error {
	if st.staleMarked.Load() || !st.staleMarked.CompareAndSwap(false, true) {
		return nil
	}
	err := st.update(func(txn *badger.Txn) error {
		return txn.Set(metaKey(metaSnapshotStale), binary.AppendUvarint(nil, st.committed()))
	})
	if err == nil {
		err = st.bdb.Sync()
	}
	if err != nil {
		st.staleMarked.Store(false)
	}
	return translate(err)
}

// snapshotWritten notes that a filter snapshot covering both stores is
// persisted: the next key-table write marks it stale again.
func (st *stores) snapshotWritten() { st.staleMarked.Store(false) }

// unfinishedMoves holds the keys whose move this process did not finish
// (its second half failed, or a read-only Open found them in both
// stores): the key table's copy of such a key is not the entry.
type unfinishedMoves struct {
	n    atomic.Int64 // len(keys), read without the lock
	mu   sync.Mutex
	keys map[hashkey.Hash]struct{}
}

func (u *unfinishedMoves) add(h *hashkey.Hash) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.keys == nil {
		u.keys = make(map[hashkey.Hash]struct{})
	}
	u.keys[*h] = struct{}{}
	u.n.Store(int64(len(u.keys)))
}

func (u *unfinishedMoves) remove(h *hashkey.Hash) {
	if u.n.Load() == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.keys, *h)
	u.n.Store(int64(len(u.keys)))
}

// has reports whether h's move is unfinished; free while none is.
func (u *unfinishedMoves) has(h *hashkey.Hash) bool {
	if u.n.Load() == 0 {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.keys[*h]
	return ok
}

// list returns the keys, sorted.
func (u *unfinishedMoves) list() []keytable.Key {
	u.mu.Lock()
	defer u.mu.Unlock()
	ks := make([]keytable.Key, 0, len(u.keys))
	for h := range u.keys {
		ks = append(ks, keytable.Key(h))
	}
	sortKeys(ks)
	return ks
}

// inKeyTable reports whether the key table holds h as its entry: the
// first step of every lookup.
func (st *stores) inKeyTable(h *hashkey.Hash) (bool, error) {
	if st.kt == nil {
		return false, nil
	}
	ok, _, err := st.kt.Has((*keytable.Key)(h))
	if err != nil {
		return false, fmt.Errorf("index: key table: %w", err)
	}
	return ok && !st.unfinished.has(h), nil
}

// has reports whether the full entry h is stored (live), in lookup order.
// The caller asks for keys the filter let through: when verify is set, a
// key Badger does not find has the tables that could hold it verified (a
// damaged block reads as "absent"); without it, "absent" is not an
// answer to give (the filter is not in yet).
func (st *stores) has(h *hashkey.Hash, verify bool) (bool, error) {
	if in, err := st.inKeyTable(h); in || err != nil || !st.badgerMayHoldFull() {
		return in, err
	}
	k := fullKey(h)
	txn := st.bdb.NewTransaction(false)
	defer txn.Discard()
	item, err := txn.Get(k[:])
	if errors.Is(err, badger.ErrKeyNotFound) {
		if !verify {
			return false, nil
		}
		return false, st.guard.Check(k[:], k[:])
	}
	return err == nil && !st.expired(item), translate(err)
}

// get returns the value of the full entry h and whether it is stored, in
// lookup order (see has, and verify there). The value's slices are the
// caller's.
func (st *stores) get(h *hashkey.Hash, verify bool) (v store.Value, ok bool, err error) {
	if v, in, err := st.keyTableGet(h); in || err != nil || !st.badgerMayHoldFull() {
		return v, in, err
	}
	return st.badgerGet(h, verify)
}

// badgerGet is get from Badger alone.
func (st *stores) badgerGet(h *hashkey.Hash, verify bool) (v store.Value, ok bool, err error) {
	k := fullKey(h)
	err = st.bdb.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k[:])
		if err != nil {
			return err
		}
		if st.expired(item) {
			return nil
		}
		v, err = st.itemValue(item)
		ok = err == nil
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		if !verify {
			return store.Value{}, false, nil
		}
		return store.Value{}, false, st.guard.Check(k[:], k[:])
	}
	return v, ok, translate(err)
}

// keyTableGet returns the key table's entry h (its columns and value) and
// whether the key table holds it as its entry (see inKeyTable).
func (st *stores) keyTableGet(h *hashkey.Hash) (store.Value, bool, error) {
	if st.kt == nil {
		return store.Value{}, false, nil
	}
	f, b, err := st.kt.Get((*keytable.Key)(h), nil, true)
	if err != nil {
		return store.Value{}, false, fmt.Errorf("index: key table: %w", err)
	}
	if !f.Live || st.unfinished.has(h) {
		return store.Value{}, false, nil
	}
	v, err := fromTable(f.Cols, b)
	if err != nil {
		k := *h // a copy, so that h does not escape (absent lookups allocate nothing)
		return store.Value{}, false, fmt.Errorf("%w (key %x)", err, k[:])
	}
	return v, true, nil
}

// getSorted returns the values of the full entries hs[idx[j]] (idx in key
// order) and which are stored, in lookup order: the key table's in one
// batch (each value block read once), then Badger's one by one (see get,
// and verify there).
func (st *stores) getSorted(hs []hashkey.Hash, idx []int, verify bool) ([]store.Value, []bool, error) {
	vs := make([]store.Value, len(idx))
	found := make([]bool, len(idx))
	rest := idx
	var restPos []int
	if st.kt != nil {
		look := make([]keytable.Key, len(idx))
		for j, i := range idx {
			look[j] = keytable.Key(hs[i])
		}
		ff := make([]keytable.Found, len(idx))
		var errValue error
		// The values are copied into arrays of 64 KiB shared by the
		// values they hold, each value's slice capped at its end (a
		// clone each was a tenth of get's CPU).
		var arena []byte
		_, err := st.kt.GetBatch(look, ff, func(j int, b []byte) error {
			if cap(arena)-len(arena) < len(b) {
				arena = make([]byte, 0, max(len(b), 64<<10))
			}
			n := len(arena)
			arena = append(arena, b...)
			v, err := fromTable(ff[j].Cols, arena[n:len(arena):len(arena)])
			if err != nil {
				errValue = fmt.Errorf("%w (key %x)", err, look[j][:])
				return errValue
			}
			vs[j] = v
			return nil
		})
		if errValue != nil {
			return nil, nil, errValue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("index: key table: %w", err)
		}
		rest = nil
		for j, i := range idx {
			if ff[j].Live && !st.unfinished.has(&hs[i]) {
				found[j] = true
				if !ff[j].HasValue {
					vs[j], _ = fromTable(ff[j].Cols, nil)
				}
				continue
			}
			vs[j] = store.Value{}
			rest = append(rest, i)
			restPos = append(restPos, j)
		}
	} else {
		restPos = make([]int, len(idx))
		for j := range restPos {
			restPos[j] = j
		}
	}
	if !st.badgerMayHoldFull() {
		rest = nil
	}
	for n, i := range rest {
		v, ok, err := st.badgerGet(&hs[i], verify)
		if err != nil {
			return nil, nil, err
		}
		vs[restPos[n]], found[restPos[n]] = v, ok
	}
	return vs, found, nil
}

// hasSorted reports which of the full entries hs[idx[j]] are stored (idx
// in key order), in lookup order: the key table in key order, then Badger
// for the rest in one ordered pass (see has, and verify there).
func (st *stores) hasSorted(hs []hashkey.Hash, idx []int, verify bool) ([]bool, error) {
	found := make([]bool, len(idx))
	rest := idx
	var restPos []int // rest[n] is idx[restPos[n]]
	if st.kt != nil {
		look := make([]keytable.Key, len(idx))
		for j, i := range idx {
			look[j] = keytable.Key(hs[i])
		}
		if _, err := st.kt.HasBatch(look, found); err != nil {
			return nil, fmt.Errorf("index: key table: %w", err)
		}
		rest = nil
		for j, i := range idx {
			if found[j] && st.unfinished.has(&hs[i]) {
				found[j] = false
			}
			if !found[j] {
				rest = append(rest, i)
				restPos = append(restPos, j)
			}
		}
		if len(rest) == 0 || !st.badgerMayHoldFull() {
			return found, nil
		}
	}
	keys := make([][]byte, len(rest))
	buf := make([]byte, len(rest)*fullKeyLen)
	for j, i := range rest {
		k := buf[j*fullKeyLen : (j+1)*fullKeyLen]
		k[0] = tagFull
		copy(k[1:], hs[i][:])
		keys[j] = k
	}
	inBadger, err := st.seekAllParallel(keys, []byte{tagFull})
	if err != nil {
		return nil, err
	}
	if verify {
		if err := st.checkMissed(keys, inBadger); err != nil {
			return nil, err
		}
	}
	if restPos == nil {
		return inBadger, nil
	}
	for n, j := range restPos {
		found[j] = inBadger[n]
	}
	return found, nil
}

// longestPrefix returns the longest stored prefix entry h starts with
// (prefix entries live in Badger). The tables that could hold a longer
// one are verified after the read.
func (st *stores) longestPrefix(h *hashkey.Hash) (m store.Match, ok bool, err error) {
	// Every prefix entry h starts with shares h's first 4 bytes.
	pk := prefixKey(h[:store.MinPrefixEntryLen])
	err = st.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: pk})
		defer it.Close()
		for it.Seek(pk); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if bytes.Compare(key[1:], h[:]) > 0 {
				break
			}
			if bytes.HasPrefix(h[:], key[1:]) && (!ok || len(key)-1 > m.Len) && !st.expired(item) {
				v, err := st.itemValue(item)
				if err != nil {
					return err
				}
				m, ok = store.Match{Len: len(key) - 1, Value: v}, true
			}
		}
		return nil
	})
	if err != nil {
		return store.Match{}, false, translate(err)
	}
	if !st.guard.IsIdle() {
		if err := st.guard.Check(pk, prefixKey(h[:])); err != nil {
			return store.Match{}, false, err
		}
	}
	return m, ok, nil
}

// itemValue decodes a copy of item's value.
func (st *stores) itemValue(item *badger.Item) (store.Value, error) {
	if item.ValueSize() == 0 {
		return store.Value{Expires: expiresOf(item)}, nil
	}
	b, err := item.ValueCopy(nil)
	if err != nil {
		return store.Value{}, err
	}
	if len(b) == 0 {
		// Badger answers a value it cannot read from the value log (a
		// damaged record) with an empty value and no error; every value
		// the index stores that is not empty starts with valueVersion.
		return store.Value{}, st.valueLogError(item.KeyCopy(nil))
	}
	v, err := decodeValue(b)
	v.Expires = expiresOf(item)
	return v, err
}

// A location is where a write found a key (see locate).
type location uint8

const (
	inKeyTable location = 1 << iota // the key table holds it
	inBadger                        // Badger holds it, live
)

// A found tells a write which of its keys are stored, and where.
type found struct {
	existed []bool     // existed[j]: stored (live) before the write
	oldExp  []uint64   // oldExp[j]: its expiry then (for the counts)
	at      []location // at[j]: the stores that hold it
	// cols[j] and valued[j] are the key table's row of a key it holds:
	// its columns, and whether it has a value (nil without a key table).
	cols   []keytable.Cols
	valued []bool
}

// locate looks up every store for the keys of entries[idx[j]] (idx in
// key order, one per key), under their write locks: a write must find
// every copy. maybe[j] says whether the filter let the key through (a
// key it did not is stored nowhere). A key both hold is Badger's (see
// stores); an expired copy does not count (an entry written after the
// expiry is the key's; an expired Badger record stays counted, see
// counts.go; an expired key-table row is replaced by the write, which
// says so, see keyTableWrite).
func (st *stores) locate(entries []store.Entry, idx []int, maybe []bool) (found, error) {
	var keys [][]byte
	var pos []int
	skipFull := !st.badgerMayHoldFull()
	for j, i := range idx {
		if maybe[j] && (!skipFull || entries[i].IsPrefix()) {
			keys = append(keys, dbKey(&entries[i]))
			pos = append(pos, j)
		}
	}
	f := found{existed: make([]bool, len(idx)), oldExp: make([]uint64, len(idx)), at: make([]location, len(idx))}
	live, exp, err := st.existKeys(keys)
	if err != nil {
		return found{}, err
	}
	for n, j := range pos {
		if live[n] {
			f.existed[j], f.oldExp[j], f.at[j] = true, exp[n], inBadger
		}
	}
	if st.kt == nil {
		return f, nil
	}
	var look []keytable.Key
	var lookPos []int
	for j, i := range idx {
		if e := &entries[i]; maybe[j] && !e.IsPrefix() {
			look = append(look, keytable.Key(e.Hash))
			lookPos = append(lookPos, j)
		}
	}
	if len(look) == 0 {
		return f, nil
	}
	ff := make([]keytable.Found, len(look))
	if _, err := st.kt.GetBatch(look, ff, nil); err != nil {
		return found{}, fmt.Errorf("index: key table: %w", err)
	}
	f.cols, f.valued = make([]keytable.Cols, len(idx)), make([]bool, len(idx))
	for n, j := range lookPos {
		if !ff[n].Live {
			continue
		}
		f.at[j] |= inKeyTable
		f.cols[j], f.valued[j] = ff[n].Cols, ff[n].HasValue
		if !f.existed[j] {
			f.existed[j], f.oldExp[j] = true, uint64(ff[n].Cols.Expires)
		}
	}
	return f, nil
}

// values returns the stored values of entries[order[j]] (a zero Value
// where the key is not stored), read under the write locks that locate
// (which found f) ran under. Badger's are read whole; of a key-table row
// the columns come from f, and its text and data are read only where
// need(j) says so (a revisit that keeps the stored value never reads it).
func (st *stores) values(entries []store.Entry, order []int, f *found, need func(j int) bool) ([]store.Value, error) {
	vs := make([]store.Value, len(order))
	var look []keytable.Key
	var lookPos []int
	err := st.bdb.View(func(txn *badger.Txn) error {
		for j, i := range order {
			switch {
			case f.at[j]&inBadger != 0:
				item, err := txn.Get(dbKey(&entries[i]))
				if err != nil {
					// Found a moment ago and held by the write lock since.
					return err
				}
				if vs[j], err = st.itemValue(item); err != nil {
					return err
				}
			case f.at[j]&inKeyTable != 0:
				vs[j], _ = fromTable(f.cols[j], nil)
				if f.valued[j] && need(j) {
					look = append(look, keytable.Key(entries[i].Hash))
					lookPos = append(lookPos, j)
				}
			}
		}
		return nil
	})
	if err != nil || len(look) == 0 {
		return vs, translate(err)
	}
	ff := make([]keytable.Found, len(look))
	_, err = st.kt.GetBatch(look, ff, func(n int, b []byte) error {
		v, err := fromTable(ff[n].Cols, bytes.Clone(b))
		if err != nil {
			return fmt.Errorf("%w (key %x)", err, look[n][:])
		}
		vs[lookPos[n]] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("index: key table: %w", err)
	}
	return vs, nil
}

// existKeys reports which of the sorted Badger keys are stored (live) in
// Badger, and the expiry of each stored one. The tables that could hold
// a key not found are verified (see has).
func (st *stores) existKeys(keys [][]byte) ([]bool, []uint64, error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	var found []bool
	exp := make([]uint64, len(keys))
	if len(keys) == 1 {
		txn := st.bdb.NewTransaction(false)
		defer txn.Discard()
		item, err := txn.Get(keys[0])
		switch {
		case err == nil:
			found = []bool{!st.expired(item)}
			exp[0] = item.ExpiresAt()
		case errors.Is(err, badger.ErrKeyNotFound):
			found = []bool{false}
		default:
			return nil, nil, translate(err)
		}
	} else {
		var err error
		if found, err = st.seekAll(keys, nil, exp); err != nil {
			return nil, nil, err
		}
	}
	if err := st.checkMissed(keys, found); err != nil {
		return nil, nil, err
	}
	return found, exp, nil
}

// checkMissed verifies the tables that cover the keys the filter let
// through but Badger did not find (see integrity.Guard).
func (st *stores) checkMissed(keys [][]byte, found []bool) error {
	if st.guard.IsIdle() {
		return nil
	}
	var missed [][]byte
	for j, ok := range found {
		if !ok {
			missed = append(missed, keys[j])
		}
	}
	return st.guard.CheckKeys(missed)
}

// seekAllParallel is seekAll over contiguous runs of keys on every core: a
// run's seeks stay in key order, and the runs touch disjoint key ranges.
func (st *stores) seekAllParallel(keys [][]byte, prefix []byte) ([]bool, error) {
	const minRun = 256 // below this a goroutine and an iterator cost more than they save
	workers := min(runtime.GOMAXPROCS(0), len(keys)/minRun)
	if workers < 2 {
		return st.seekAll(keys, prefix, nil)
	}
	found := make([]bool, len(keys))
	errs := make([]error, workers)
	per := (len(keys) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(keys))
		wg.Go(func() {
			defer func() {
				// A panic here would end the process: no caller can
				// recover a goroutine's panic.
				if p := recover(); p != nil {
					errs[w] = st.panicError(p, [][2][]byte{{keys[lo], keys[hi-1]}})
				}
			}()
			f, err := st.seekAll(keys[lo:hi], prefix, nil)
			copy(found[lo:hi], f)
			errs[w] = err
		})
	}
	wg.Wait()
	return found, errors.Join(errs...)
}

// seekAll reports which of the sorted keys are stored, in one forward pass
// of a key-only iterator restricted to prefix, and sets exp[j] (exp may be
// nil) to the expiry of each stored one.
func (st *stores) seekAll(keys [][]byte, prefix []byte, exp []uint64) ([]bool, error) {
	found := make([]bool, len(keys))
	txn := st.bdb.NewTransaction(false)
	defer txn.Discard()
	// A sparse batch gets a Get per key (a keyFinder would seek for
	// most): an iterator's Seek positions itself in every memtable and
	// table, where a Get stops at the first that holds the key and skips
	// the others by their bloom filters (in a dedupe of 1M URLs, seeks
	// took 1 s of CPU).
	n := uint64(st.fullCount())
	if uint64(len(keys))*stepNexts < n {
		for j, k := range keys {
			item, err := txn.Get(k)
			switch {
			case err == nil:
				found[j] = !st.expired(item)
				if exp != nil {
					exp[j] = item.ExpiresAt()
				}
			case !errors.Is(err, badger.ErrKeyNotFound):
				return nil, translate(err)
			}
		}
		return found, nil
	}
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: prefix})
	defer it.Close()
	kf := keyFinder{it: it, n: n}
	for j, k := range keys {
		if item := kf.find(k); item != nil {
			found[j] = !st.expired(item)
			if exp != nil {
				exp[j] = item.ExpiresAt()
			}
		}
	}
	return found, nil
}

// stepNexts is how many calls of Next a Seek costs about (~1.5 µs against
// ~80 ns at 1M entries).
const stepNexts = 16

// A keyFinder finds ascending keys with one forward pass of an iterator:
// when the next key is likely within stepNexts entries (hashes are
// uniform, so the gap follows from the leading bytes and the entry
// count), it steps there, and it seeks only when the key is not reached.
// In a dense sorted batch (a large "has" of present keys) most keys are.
type keyFinder struct {
	it   *badger.Iterator
	n    uint64  // the index's entries
	prev [9]byte // the tag and leading bytes of the last key asked for
	used bool
}

// find returns the item of key when it is stored (expired or not), else
// nil.
func (f *keyFinder) find(key []byte) *badger.Item {
	it := f.it
	switch {
	case !f.used:
		it.Seek(key)
		f.used = true
	case it.Valid() && bytes.Compare(it.Item().Key(), key) < 0:
		for steps := stepsTo(f.prev[:], key, f.n, stepNexts); steps > 0; steps-- {
			it.Next()
			if !it.Valid() || bytes.Compare(it.Item().Key(), key) >= 0 {
				break
			}
		}
		if it.Valid() && bytes.Compare(it.Item().Key(), key) < 0 {
			it.Seek(key)
		}
	}
	copy(f.prev[:], key)
	if it.Valid() && bytes.Equal(it.Item().Key(), key) {
		return it.Item()
	}
	return nil
}

// stepsTo returns how many Next calls to try from key from to key to
// before seeking: a few more than the entries expected between them
// among n uniformly spread keys (both are tag + hash), or 0 when more
// than limit are expected.
func stepsTo(from, to []byte, n uint64, limit int) int {
	if len(from) < 9 || len(to) < 9 || from[0] != to[0] {
		return 0
	}
	a, b := binary.BigEndian.Uint64(from[1:]), binary.BigEndian.Uint64(to[1:])
	if b < a {
		return 0
	}
	hi, _ := bits.Mul64(b-a, n) // (b-a)/2^64 of the n keys
	if hi >= uint64(limit) {
		return 0
	}
	return int(hi)*2 + 2
}

// An existence tells which keys of an ascending sequence (Badger keys:
// a load's) are stored, in lookup order: the key table, then a keyFinder
// over a key-only Badger iterator. The caller asks only for keys the
// filter let through.
type existence struct {
	st  *stores
	txn *badger.Txn
	kf  keyFinder
}

func (st *stores) newExistence() *existence {
	txn := st.bdb.NewTransaction(false)
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
	return &existence{st: st, txn: txn, kf: keyFinder{it: it, n: uint64(st.fullCount())}}
}

func (ex *existence) close() {
	ex.kf.it.Close()
	ex.txn.Discard()
}

// has reports whether key (a Badger key, ascending across calls) is
// stored.
func (ex *existence) has(key []byte) (bool, error) {
	st := ex.st
	if key[0] == tagFull {
		if in, err := st.inKeyTable((*hashkey.Hash)(key[1:])); in || err != nil {
			return in, err
		}
	}
	if item := ex.kf.find(key); item != nil {
		// An expired entry is absent: the load stores it anew.
		return !st.expired(item), nil
	}
	// "Absent" after the filter's "maybe": a false positive, or a damaged
	// block (see integrity.Guard).
	return false, st.guard.Check(key, key)
}

// badgerHoldsNoEntries reports whether Badger holds no full or prefix entry
// (the counts may be wrong after a crash or a failed load).
func (st *stores) badgerHoldsNoEntries() (bool, error) {
	return st.badgerHoldsNone(tagFull, tagPrefix)
}

// badgerHoldsNoFullEntries reports whether Badger holds no full entry.
func (st *stores) badgerHoldsNoFullEntries() (bool, error) { return st.badgerHoldsNone(tagFull) }

// badgerHoldsNone reports whether Badger holds no key of the keyspaces
// tags (expired or not).
func (st *stores) badgerHoldsNone(tags ...byte) (bool, error) {
	empty := true
	err := st.bdb.View(func(txn *badger.Txn) error {
		for _, tag := range tags {
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{tag}})
			it.Rewind()
			if it.Valid() {
				empty = false
			}
			it.Close()
		}
		return nil
	})
	return empty, translate(err)
}

// holdsNoEntries reports whether neither store holds an entry.
func (st *stores) holdsNoEntries() (bool, error) {
	if st.kt != nil && st.kt.Len() > 0 {
		return false, nil
	}
	return st.badgerHoldsNoEntries()
}

// A loadIngest writes a load's new entries whose home is the key table
// (key-only full entries), in key order, into one new key file; the
// others are Badger's, which the load writes itself (see loadWriter).
type loadIngest struct {
	st  *stores
	in  *keytable.Ingest // nil while the entries' home is Badger
	buf []byte           // the value take puts (Put copies it)
}

// newLoadIngest starts a loadIngest of the entries o describes (the
// load's full entries: their number, column ranges and whether any has a
// value).
func (st *stores) newLoadIngest(o *keytable.IngestOptions) (*loadIngest, error) {
	if st.bareHome() != homeKeyTable {
		return &loadIngest{st: st}, nil
	}
	if !st.valuesInKeyTable() {
		o = &keytable.IngestOptions{Keys: o.Keys} // key-only entries only
	}
	in, err := st.kt.NewIngestOf(o)
	if err != nil {
		return nil, fmt.Errorf("index: key table: %w", err)
	}
	return &loadIngest{st: st, in: in}, nil
}

// take adds the entry (a load's, encoded: its Badger key, value and
// expiry) to the new key file when the key table is its home, and
// reports whether it did.
func (li *loadIngest) take(key, val []byte, expiry uint64) (bool, error) {
	if li.in == nil || li.st.homeEncoded(key, val, expiry) != homeKeyTable {
		return false, nil
	}
	s := keytable.Set{Key: keytable.Key(key[1:])}
	if len(val) > 0 || expiry != 0 {
		v, err := decodeValue(val)
		if err != nil {
			return false, fmt.Errorf("%w (key %x)", err, key[1:])
		}
		v.Expires = store.Unix(int64(expiry))
		li.buf = appendTableValue(li.buf[:0], &v)
		s.Cols, s.Value = tableCols(&v), li.buf
	}
	if _, err := li.in.Put(&s); err != nil {
		return false, fmt.Errorf("index: key table: %w", err)
	}
	return true, nil
}

// len returns the number of keys taken.
func (li *loadIngest) len() uint64 {
	if li.in == nil {
		return 0
	}
	return li.in.Len()
}

// commit installs the new key file, the filter snapshot marked stale
// first; the keys must be in the filter.
func (li *loadIngest) commit() error {
	if li.in == nil {
		return nil
	}
	if li.in.Len() > 0 {
		if err := li.st.markSnapshotStale(); err != nil {
			li.in.Abort()
			return err
		}
	}
	if err := li.in.Commit(); err != nil {
		return fmt.Errorf("index: key table: %w", err)
	}
	return nil
}

func (li *loadIngest) abort() {
	if li.in != nil {
		li.in.Abort()
	}
}
