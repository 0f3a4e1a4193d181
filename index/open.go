package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/index/internal/extsort"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// Open opens the index in dir, creating it unless opts says ReadOnly or
// MustExist. A nil opts means defaults.
//
// Before Badger opens the directory, Open checks it without writing to it
// (see "Integrity" in the package documentation): damage (a missing or
// unreadable MANIFEST, a listed table missing, a table file not listed, a
// table whose index does not open) is an error wrapping store.ErrCorrupt
// that names the files; Open never deletes or moves a file.
//
// Errors: store.ErrNoIndex (no index and creation not allowed),
// store.ErrNotIndex (a non-empty directory holding no index, for a
// writable Open), store.ErrLocked, store.ErrNeedsRecovery (read-only after
// a crash), store.ErrCorrupt, store.ErrFormat (newer or malformed format),
// store.ErrProfileMismatch, store.ErrInvalidOptions; all may be wrapped.
//
// Open takes these steps, in order, each a function below that says what
// it trusts and what it repairs:
//
//  1. prepareDir: the directory holds an index, or may hold a new one
//  2. lockDir: no other process has it (urlhash.lock)
//  3. checkRestoring: no restore stopped midway (urlhash.restoring)
//  4. removeLoadRuns: no run files of a load a crash stopped
//  5. checkBadgerFiles: Badger's files are whole, before Badger reads them
//  6. openBadger
//  7. stores.checkSynced: Badger holds every write a sync acknowledged
//  8. readMeta: the format version and the profile
//  9. loadIdentity: the index's identity (drawn for one made before them)
//  10. readTTL: whether entries may expire
//  11. stores.openKeyTable: the key table's log replayed, its sync mark
//     checked, its batches' idempotency records back in Badger
//  12. readSnapshot: whether the persisted filter snapshot is current
//  13. stores.reconcile: no key in both stores (when the snapshot is not
//     current: the last process did not close cleanly)
//  14. stores.upgradeValues: a writable index of format 2 becomes format
//     3, Badger's full entries moved into the key table
//  15. loadFilter: the filter and the counts, from the snapshot or rebuilt
//     (a snapshot file's filter loads in the background, and so does the
//     rebuild of a large key table's: Open returns without them, see
//     loadFilter)
//
// An index in memory takes steps 6, 8, 9, 10 and 15.
func Open(dir string, opts *Options) (_ *DB, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	db := &DB{path: dir, opts: o, bo: o.badgerOptions(dir), fready: make(chan struct{})}
	db.st = stores{dir: dir, readOnly: o.ReadOnly, now: o.now, fullCount: db.entries.Load, dropped: db.dropExpired, valueCache: o.BlockCacheSize, valueBlockSize: o.ValueBlockSize, storedValues: o.StoredValues, testUpgradeCrash: o.upgradeCrash}
	if o.InMemory {
		db.path, db.st.dir = "", ""
		return db, db.openMemory()
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: empty directory name", store.ErrInvalidOptions)
	}
	fresh, err := prepareDir(dir, &o)
	if err != nil {
		return nil, err
	}
	db.countCompactions()
	if db.lock, err = lockDir(dir, o.ReadOnly); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			db.abortOpen()
		}
	}()
	defer db.catchOpen(&err)
	if err := checkRestoring(dir); err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		if err := removeLoadRuns(dir); err != nil {
			return nil, err
		}
	}
	mems, err := db.checkBadgerFiles(opts, fresh)
	if err != nil {
		return nil, err
	}
	db.st.order.threshold = db.bo.ValueThreshold
	if db.st.bdb, err = openBadger(db.bo); err != nil {
		return nil, err
	}
	if err := db.st.checkSynced(mems); err != nil { // the logs before Badger created its next one
		return nil, err
	}
	if err := db.readMeta(); err != nil {
		return nil, err
	}
	if err := db.loadIdentity(); err != nil {
		return nil, err
	}
	if err := db.readTTL(); err != nil {
		return nil, err
	}
	if db.created && o.createCrash != nil {
		if err := o.createCrash(); err != nil {
			return nil, err
		}
	}
	if err := db.st.openKeyTable(o.KeyTable || (db.created && !o.NoKeyTable), o.keyTableDelta); err != nil {
		return nil, err
	}
	snap, err := db.readSnapshot()
	if err != nil {
		return nil, err
	}
	if snap == nil {
		if _, err := db.st.reconcile(); err != nil {
			return nil, err
		}
	}
	if moved, err := db.st.upgradeValues(); err != nil {
		return nil, err
	} else if moved {
		snap = nil // Badger's expired records left: count again
	}
	if err := db.st.checkBadgerFull(); err != nil {
		return nil, err
	}
	if err := db.loadFilter(snap); err != nil {
		return nil, err
	}
	return db, nil
}

// openMemory is Open in memory: Badger, the metadata it just wrote, and
// an empty filter. Nothing on disk to trust or repair.
func (db *DB) openMemory() (err error) {
	defer db.catchOpen(&err)
	if db.st.bdb, err = openBadger(db.bo); err != nil {
		return err
	}
	if err := db.readMeta(); err != nil {
		db.st.bdb.Close()
		return err
	}
	if err := db.loadIdentity(); err != nil {
		db.st.bdb.Close()
		return err
	}
	if err := db.readTTL(); err != nil {
		db.st.bdb.Close()
		return err
	}
	if err := db.loadFilter(nil); err != nil {
		db.st.bdb.Close()
		return err
	}
	return nil
}

// abortOpen closes what a failed Open opened, in reverse order.
func (db *DB) abortOpen() {
	func() {
		defer func() { recover() }() // Badger's Close of damaged files
		db.st.close()
	}()
	db.st.closeSynced()
	db.lock.release()
}

// catchOpen is catch for Open, which has no key range: it names every
// damaged table.
func (db *DB) catchOpen(err *error) {
	if p := recover(); p != nil {
		if db.st.bdb != nil && db.lock == nil {
			func() {
				defer func() { recover() }()
				db.st.bdb.Close()
			}()
		}
		*err = db.st.panicError(p, nil)
	}
}

// prepareDir (step 1) trusts nothing: it reads the directory. A directory
// without an index (no MANIFEST, no data files) is refused when opts
// forbid creating one or when it holds names of its own, and created
// otherwise; it reports whether the index is new. It repairs nothing.
func prepareDir(dir string, o *Options) (fresh bool, _ error) {
	s, err := integrity.Inspect(dir)
	if err != nil {
		return false, err
	}
	if s.Manifest || s.HasData() {
		return false, nil
	}
	switch {
	case o.ReadOnly || o.MustExist:
		return false, fmt.Errorf("%w: %s", store.ErrNoIndex, dir)
	case len(s.Foreign) > 0:
		return false, fmt.Errorf("%w: %s is not empty (%s) and holds no index; give a new or empty directory", store.ErrNotIndex, dir, foreignNames(s.Foreign))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("index: create %s: %w", dir, err)
	}
	return true, nil
}

// foreignNames names a few of the foreign names of a directory.
func foreignNames(names []string) string {
	slices.Sort(names)
	if len(names) > 3 {
		return fmt.Sprintf("%s, ... %d names", strings.Join(names[:3], ", "), len(names))
	}
	return strings.Join(names, ", ")
}

// checkRestoring (step 3) trusts the lock: it refuses a directory a
// restore did not finish (the mark it leaves until it ends well; see
// Restore), which holds a part of a backup. It repairs nothing: the
// caller restores again into a new directory.
func checkRestoring(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, restoringFileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	what := strings.TrimSpace(string(b))
	if err != nil {
		what = err.Error()
	}
	return fmt.Errorf("%w: %s holds an unfinished restore (%s: %s); remove it and restore the whole chain again into a new directory",
		store.ErrCorrupt, dir, restoringFileName, what)
}

// removeLoadRuns (step 4, writable only) trusts nothing it removes: run
// files of a load a crash interrupted (urlhash.load-*.run) are temporary,
// never data, and go.
func removeLoadRuns(dir string) error { return extsort.RemoveRuns(dir) }

// checkBadgerFiles (step 5) trusts the lock: it reads Badger's files
// before Badger does, and refuses damage Badger would hide or turn into
// loss (a missing or unreplayable MANIFEST, a listed table missing, a
// table not listed, a table whose index does not open, a damaged log or
// key registry; see "Integrity"). After a crash a writable Open repairs
// what Badger would otherwise delete or stop at: tables the MANIFEST does
// not list move to OrphanDir, empty memtable logs go. It then chooses the
// codec and the memtable size Badger opens with, and makes the guard that
// verifies tables before their first "absent" answer. It returns the
// memtable logs the directory held (for checkSynced).
func (db *DB) checkBadgerFiles(opts *Options, fresh bool) (mems []string, _ error) {
	dir, o := db.path, &db.opts
	// Look again now that no other process can change the directory.
	s, err := integrity.Inspect(dir)
	if err != nil {
		return nil, err
	}
	tables, err := integrity.Check(dir, &s, &db.bo, isSnapshotKey)
	if err != nil {
		return nil, err
	}
	if o.Badger == nil {
		// The codec to write with is asked for or kept; the cache is
		// needed as long as one table is compressed.
		codec := codecs[o.Compression]
		if o.Compression == "" {
			codec = codecOf(tables)
		}
		o.setCodec(&db.bo, codec, anyCompressed(tables))
	}
	if o.Badger == nil && (opts == nil || opts.MemTableSize == 0) && o.keyTableAhead(dir, fresh) {
		db.bo.MemTableSize = KeyTableMemTableSize
		db.bo.ValueThreshold = min(db.bo.ValueThreshold, maxTreeValue(db.bo.MemTableSize))
	}
	db.st.guard = integrity.NewGuard(dir, db.bo.BlockSize, tables)
	if err := integrity.CheckKeyRegistry(dir, &db.bo); err != nil {
		return nil, err
	}
	return s.Mems, nil
}

// keyTableAhead reports whether the index in dir will have a key table
// (see stores.openKeyTable), as far as Open can tell before Badger opens:
// asked for, a new index, or a key table on disk.
func (o *Options) keyTableAhead(dir string, fresh bool) bool {
	if o.InMemory || o.ReadOnly {
		return false
	}
	if o.KeyTable || fresh && !o.NoKeyTable {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, keyTableDir))
	return err == nil
}

// isKeyRegistryError reports whether err is Badger's refusal of its key
// registry file (KEYREGISTRY).
func isKeyRegistryError(err error) bool {
	if errors.Is(err, badger.ErrEncryptionKeyMismatch) || errors.Is(err, badger.ErrInvalidEncryptionKey) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "key registry") || strings.Contains(msg, "keyregistry") || strings.Contains(msg, "encryption key mismatch")
}

// openBadger (step 6) opens Badger on files the steps before checked; a
// writable Badger replays its memtable logs.
func openBadger(bo badger.Options) (*badger.DB, error) {
	bdb, err := badger.Open(bo)
	if err != nil {
		// Every condition the index knows (locked, crashed, damaged) is
		// told apart before this call, by its own checks; Badger's errors
		// do not wrap their causes (see TestBadgerBehaviour).
		if isKeyRegistryError(err) {
			// The key registry (no keys: the index is not encrypted) is
			// read before anything else; Badger's message names no file.
			return nil, integrity.KeyRegistryDamaged(bo.Dir, err.Error())
		}
		return nil, fmt.Errorf("index: open %s: %v", bo.Dir, err)
	}
	return bdb, nil
}

// readMeta (step 8) trusts Badger: it reads the format version (a newer
// one is refused) and the profile, and writes them for a new index (and
// the profile asked for, for an index that records none).
func (db *DB) readMeta() error {
	var format, profile []byte
	err := db.st.bdb.View(func(txn *badger.Txn) error {
		var err error
		if format, err = getCopy(txn, metaKey(metaFormat)); err != nil {
			return err
		}
		profile, err = getCopy(txn, metaKey(metaProfile))
		return err
	})
	if err != nil {
		return err
	}
	if format == nil {
		// As in checkSynced: "absent" may be a damaged block.
		if err := db.st.guard.CheckKeys([][]byte{metaKey(metaFormat)}); err != nil {
			return err
		}
		if db.opts.ReadOnly {
			return fmt.Errorf("%w: %s", store.ErrNoIndex, db.path)
		}
		// A new index with a key table records its format once the key
		// table exists (openKeyTable): recorded here, a power loss before
		// that would leave format 1 durable, and the index would open
		// without a key table for good.
		if err := db.writeMeta(db.st.dir == "" || db.opts.NoKeyTable); err != nil {
			return err
		}
		db.st.format = formatBadger
		db.created = true
		return nil
	}
	v, n := binary.Uvarint(format)
	if n != len(format) {
		return fmt.Errorf("%w: bad format record", store.ErrFormat)
	}
	if v > FormatVersion {
		return fmt.Errorf("%w: version %d, this program reads up to %d", store.ErrFormat, v, FormatVersion)
	}
	db.st.format = v
	db.profile = string(profile)
	if p := db.opts.Profile; p != "" && db.profile != p {
		if db.profile != "" {
			return fmt.Errorf("%w: index has %q, asked for %q", store.ErrProfileMismatch, db.profile, p)
		}
		if !db.opts.ReadOnly {
			return db.writeMeta(false)
		}
	}
	return nil
}

// writeMeta records the format version (when format is set) and the
// profile: the one from the options when given, else the one recorded.
func (db *DB) writeMeta(format bool) error {
	if db.opts.Profile != "" {
		db.profile = db.opts.Profile
	}
	err := db.st.update(func(txn *badger.Txn) error {
		if format {
			if err := txn.Set(metaKey(metaFormat), binary.AppendUvarint(nil, formatBadger)); err != nil {
				return err
			}
		}
		if db.profile == "" {
			return nil
		}
		return txn.Set(metaKey(metaProfile), []byte(db.profile))
	})
	return translate(err)
}

// readTTL (step 10) sets db.ttl when the index records that it holds
// entries with an expiry (the counts then need the expiry counts too).
func (db *DB) readTTL() error {
	return db.st.bdb.View(func(txn *badger.Txn) error {
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
