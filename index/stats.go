package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// Stats are an index's figures: those every backend answers, and those of
// its filter and of Badger's files, which only this backend has.
type Stats struct {
	store.Stats
	// FilterBits is the number of leading bits of each full entry the
	// in-memory filter keeps.
	FilterBits int
	// FilterBytes is the size of the filter in roaring's portable format.
	FilterBytes uint64
	// FilterMemBytes is the filter's estimated memory use.
	FilterMemBytes uint64
	// FilterAbsent, FilterFound and FilterFalsePositives count, since the
	// index was opened, the lookups (and add-if-absent checks) the filter
	// answered "absent" without a read, those it let through that were
	// found, and those it let through that were not (false positives, a
	// read for nothing).
	FilterAbsent, FilterFound, FilterFalsePositives int64
	// LSMBytes is the disk space of the key tables (.sst files), VlogBytes
	// that of the value-log files; 0 in memory.
	LSMBytes, VlogBytes int64
	// Tables is the number of table files.
	Tables int
}

// Stats implements store.Backend: the part of DetailedStats every backend
// answers.
func (db *DB) Stats(ctx context.Context) (store.Stats, error) {
	s, err := db.DetailedStats(ctx)
	return s.Stats, err
}

// DetailedStats returns the index's counts and sizes, its filter's and
// Badger's figures included. The counts are of the live entries by
// the index's clock, from counts kept by every write: DetailedStats reads no key
// (see expiryCounts).
func (db *DB) DetailedStats(ctx context.Context) (_ Stats, err error) {
	defer db.catch(&err)
	if err := db.begin(ctx); err != nil {
		return Stats{}, err
	}
	defer db.mu.RUnlock()
	if db.readsUnfiltered() {
		// The counts come with the filter's rebuild.
		if err := db.waitFilter(); err != nil {
			return Stats{}, err
		}
	}
	s := Stats{Stats: store.Stats{FormatVersion: int(db.st.format), Profile: db.profileName()}, Tables: len(db.st.bdb.Tables())}
	s.Entries, s.PrefixEntries, s.Expiring = db.liveCounts()
	if db.fin.Load() {
		db.fmu.RLock()
		s.FilterBits = int(db.f.Bits())
		s.FilterBytes = db.f.SizeBytes()
		s.FilterMemBytes = db.f.MemBytes()
		db.fmu.RUnlock()
	} else {
		// Loading (see loadFilter): the snapshot's header has its width
		// and size, and its memory is about its size.
		s.FilterBits = int(db.fhdr.Bits)
		s.FilterBytes = db.fhdr.FullLen + db.fhdr.ShortLen
		s.FilterMemBytes = s.FilterBytes
	}
	s.FilterAbsent = db.probes.absent.Load()
	s.FilterFound = db.probes.found.Load()
	s.FilterFalsePositives = db.probes.falsePositive.Load()
	if !db.opts.InMemory {
		var err error
		if s.LSMBytes, s.VlogBytes, s.DiskBytes, err = dirBytes(db.path); err != nil {
			return Stats{}, err
		}
	}
	return s, nil
}

// dirBytes sums the allocated size of the files in dir (value-log files are
// sparse while open, so their apparent size would mislead).
func dirBytes(dir string) (lsm, vlog, total int64, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile (a key-table merge)
		}
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a table a compaction replaced, deleted meanwhile
		}
		if err != nil {
			return err
		}
		n := allocatedSize(info)
		switch {
		case strings.HasSuffix(path, ".sst"):
			lsm += n
		case strings.HasSuffix(path, ".vlog"):
			vlog += n
		}
		total += n
		return nil
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("index: size of %s: %w", dir, err)
	}
	return lsm, vlog, total, nil
}

// Verify checks everything it can and returns an error listing every
// problem found (errors.Join of errors wrapping store.ErrCorrupt, each
// naming a file or a key), or nil: the MANIFEST replays and matches the
// table files; every block of every table matches its checksum; every key
// is well formed and in its keyspace; every value decodes; the counts
// match the metadata; the filter never says "absent" for a stored key.
// Other operations wait while it runs.
func (db *DB) Verify(ctx context.Context) (err error) {
	defer db.catch(&err)
	if err := ctx.Err(); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return store.ErrClosed
	}
	if err := db.waitFilter(); err != nil {
		return err
	}
	var problems []error
	var comp map[uint64]options.CompressionType
	if !db.opts.InMemory {
		var errs []error
		comp, errs = db.verifyManifest()
		problems = append(problems, errs...)
		problems = append(problems, db.verifyTables(comp)...)
	}
	// Between its passes (Badger takes no context).
	if err := ctx.Err(); err != nil {
		return err
	}
	problems = append(problems, db.verifyKeys()...)
	if !db.opts.InMemory {
		// Last, so that a compaction in flight when Verify began has
		// likely finished (unmatchedTables tells the ones still running).
		problems = append(problems, db.verifyFiles()...)
	}
	return errors.Join(problems...)
}

// CheckTables verifies the checksum of every block of every table, each
// table once for the life of the DB (a write checks them all before the
// first one anyway): damage is an error wrapping store.ErrCorrupt that
// names the files and "urlhash recover". Stats alone reads only the
// recorded counts; CheckTables reads every table once.
func (db *DB) CheckTables() (err error) {
	defer db.catch(&err)
	if err := db.begin(context.Background()); err != nil {
		return err
	}
	defer db.mu.RUnlock()
	if db.st.guard == nil {
		return nil // in memory: nothing on disk to damage
	}
	return db.st.guard.CheckAll()
}

// corrupt returns an error wrapping store.ErrCorrupt about the index.
func (db *DB) corrupt(format string, args ...any) error { return db.st.corrupt(format, args...) }

// verifyManifest replays the MANIFEST and returns each listed table's
// compression.
func (db *DB) verifyManifest() (map[uint64]options.CompressionType, []error) {
	m, err := db.replayManifest()
	if err != nil {
		return nil, []error{db.corrupt("MANIFEST does not replay (%v)", err)}
	}
	comp := make(map[uint64]options.CompressionType, len(m.Tables))
	for id, t := range m.Tables {
		comp[id] = t.Compression
	}
	return comp, nil
}

func (db *DB) replayManifest() (badger.Manifest, error) {
	f, err := os.Open(filepath.Join(db.path, badger.ManifestFilename))
	if err != nil {
		return badger.Manifest{}, err
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, db.bo.ExternalMagicVersion, db.bo)
	return m, err
}

// verifyFiles checks every record of the value logs and compares the
// MANIFEST with the table files: a listed table missing, or a table file
// not listed (Badger deletes those at the next Open; see unmatchedTables).
func (db *DB) verifyFiles() []error {
	s, err := integrity.Inspect(db.path)
	if err != nil {
		return []error{err}
	}
	m, err := db.replayManifest()
	if err != nil {
		return nil // reported by verifyManifest
	}
	missing, orphans, err := db.unmatchedTables(s, m)
	if err != nil {
		return []error{err}
	}
	var errs []error
	slices.Sort(s.VLogs)
	for _, name := range s.VLogs {
		if p := integrity.CheckLog(filepath.Join(db.path, name), false, isSnapshotKey); p != "" {
			errs = append(errs, db.corrupt("%s: %s; %s", name, p, integrity.RecoverHint(db.path)))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, db.corrupt("MANIFEST lists %s, missing; %s", integrity.TableNames(missing), integrity.RecoverHint(db.path)))
	}
	if len(orphans) > 0 {
		errs = append(errs, db.corrupt("%s not listed in MANIFEST (Badger would delete them at the next Open); %s", integrity.TableNames(orphans), integrity.RecoverHint(db.path)))
	}
	return errs
}

// tableRounds is how many readings of the directory and the MANIFEST,
// tableRecheck apart, a writable index's table must be missing or
// unlisted in to count as such.
const (
	tableRounds  = 3
	tableRecheck = 50 * time.Millisecond
)

// unmatchedTables returns, sorted, the tables the MANIFEST lists that
// have no file (missing), and the table files of the index it does not
// list (orphans), given a listing s of the directory and the MANIFEST m
// read after it.
//
// In a read-only index the first reading is the answer. A writable index
// is flushing and compacting while Verify runs, and Badger's own tables
// are unlisted twice in their lives: while a compaction writes them (until
// the whole compaction ends, so after tables of higher numbers, which
// other compactors wrote meanwhile, were listed), and once a compaction
// replaced them, until their last reader lets go and Badger deletes them
// (seen: Verify right after an Open that started compactions reported
// replaced tables that were gone a moment later). Both are open in this
// process. So a table counts as an orphan only if this process does not
// hold it open and it stays unlisted through tableRounds readings, and a
// listed table as missing only if it stays listed and missing. Outside
// Linux, where the open files cannot be listed, only unlisted tables older
// than a listed one count (a compaction that ends late can still show
// Verify one).
func (db *DB) unmatchedTables(s integrity.Dir, m badger.Manifest) (missing, orphans []uint64, err error) {
	var maxListed uint64
	for id := range m.Tables {
		maxListed = max(maxListed, id)
		if !s.SST[id] {
			missing = append(missing, id)
		}
	}
	open, canList := openFiles()
	for id := range s.SST {
		if _, ok := m.Tables[id]; !ok && (db.opts.ReadOnly || canList || id < maxListed) {
			orphans = append(orphans, id)
		}
	}
	for round := 0; !db.opts.ReadOnly && round < tableRounds && len(missing)+len(orphans) > 0; round++ {
		if round > 0 {
			time.Sleep(tableRecheck)
			if s, err = integrity.Inspect(db.path); err != nil {
				return nil, nil, err
			}
			if m, err = db.replayManifest(); err != nil {
				return nil, nil, db.corrupt("MANIFEST does not replay (%v)", err)
			}
			open, _ = openFiles()
		}
		missing = slices.DeleteFunc(missing, func(id uint64) bool {
			if _, ok := m.Tables[id]; !ok || s.SST[id] {
				return true // compacted meanwhile, or written after the listing
			}
			_, err := os.Stat(table.NewFilename(id, db.path))
			return err == nil
		})
		orphans = slices.DeleteFunc(orphans, func(id uint64) bool {
			if _, ok := m.Tables[id]; ok || !s.SST[id] {
				return true // listed or deleted meanwhile
			}
			fi, err := os.Stat(table.NewFilename(id, db.path))
			if err != nil {
				return true
			}
			k, ok := keyOf(fi)
			return ok && open[k]
		})
	}
	slices.Sort(missing)
	slices.Sort(orphans)
	return missing, orphans, nil
}

// verifyTables checks every block of every table: those not verified yet
// through the guard, the others (written by this process) directly.
func (db *DB) verifyTables(comp map[uint64]options.CompressionType) []error {
	var errs []error
	if err := db.st.guard.CheckAll(); err != nil {
		errs = append(errs, err)
	}
	var problems []string
	for _, ti := range db.st.bdb.Tables() {
		if db.st.guard.IsKnown(ti.ID) {
			continue
		}
		c, ok := comp[ti.ID]
		if !ok {
			c = db.bo.Compression
		}
		err := integrity.WithTable(table.NewFilename(ti.ID, db.path), c, db.bo.BlockSize, options.OnBlockRead, integrity.VerifyBlocks)
		// A compaction may replace the table meanwhile: Badger then cuts
		// its file to nothing and removes it, and what integrity.WithTable read of
		// it looks damaged. Such a table has left the tree first.
		if err != nil && !errors.Is(err, fs.ErrNotExist) && db.hasTable(ti.ID) {
			problems = append(problems, fmt.Sprintf("%s: %v", table.IDToFilename(ti.ID), err))
		}
	}
	if len(problems) > 0 {
		errs = append(errs, integrity.CorruptDir(db.path, problems))
	}
	return errs
}

// hasTable reports whether table id is in Badger's tree.
func (db *DB) hasTable(id uint64) bool {
	return slices.ContainsFunc(db.st.bdb.Tables(), func(ti badger.TableInfo) bool { return ti.ID == id })
}

// maxKeyProblems bounds the key-level problems Verify lists one by one.
const maxKeyProblems = 10

// verifyKeys reads every key and value.
func (db *DB) verifyKeys() (errs []error) {
	var full, prefixes int64
	nproblems := 0
	problem := func(e error) {
		nproblems++
		if nproblems <= maxKeyProblems {
			errs = append(errs, e)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			errs = append(errs, db.corrupt("reading the keys: %s", integrity.FirstLine(fmt.Sprint(p))))
		}
		if nproblems > maxKeyProblems {
			errs = append(errs, db.corrupt("and %d more problems with keys", nproblems-maxKeyProblems))
		}
	}()
	var filterMisses int64
	var firstMiss []byte
	sawFormat := false
	var expiring int64
	full0, prefixes0, expiring0 := db.liveCounts()
	err := db.st.bdb.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			key := item.Key()
			if (key[0] == tagFull || key[0] == tagPrefix) && db.st.expired(item) {
				continue // expired by the index's clock, not yet by Badger's clock
			}
			switch key[0] {
			case tagFull:
				if len(key) != fullKeyLen {
					problem(db.corrupt("full key %x is %d bytes long", key, len(key)))
					continue
				}
				h := hashkey.Hash(key[1:])
				db.fmu.RLock() // the flat form may be being installed
				maybe := db.f.MayHaveFull(&h)
				db.fmu.RUnlock()
				if !maybe {
					if filterMisses++; firstMiss == nil {
						firstMiss = bytes.Clone(key)
					}
				}
				full++
			case tagPrefix:
				if len(key) < 1+store.MinPrefixEntryLen || len(key) > 1+store.MaxPrefixEntryLen {
					problem(db.corrupt("prefix key %x is %d bytes long", key, len(key)))
					continue
				}
				if !db.f.MayHavePrefix(key[1:]) {
					if filterMisses++; firstMiss == nil {
						firstMiss = bytes.Clone(key)
					}
				}
				prefixes++
			case tagMeta:
				if bytes.Equal(key, metaKey(metaFormat)) {
					sawFormat = true
				}
				continue
			default:
				problem(db.corrupt("key %x outside the keyspaces", key))
				continue
			}
			if item.ExpiresAt() != 0 {
				expiring++
			}
			if _, err := db.st.itemValue(item); err != nil {
				problem(db.corrupt("value of %x: %v", key, err))
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, translate(err))
	}
	errs = append(errs, db.st.checkKeyTable(func(h *hashkey.Hash, inBadger, expires bool) {
		if inBadger {
			// Counted in Badger's pass.
			problem(db.corrupt("key %x is stored in both the key table and Badger (a move left unfinished; a writable Open after a crash, or Close, finishes it)", h[:]))
			return
		}
		db.fmu.RLock()
		maybe := db.f.MayHaveFull(h)
		db.fmu.RUnlock()
		if !maybe {
			if filterMisses++; firstMiss == nil {
				firstMiss = append([]byte{tagFull}, h[:]...)
			}
		}
		full++
		if expires {
			expiring++
		}
	})...)
	if filterMisses > 0 {
		errs = append(errs, db.corrupt("the filter misses %d stored keys (the first: %x)", filterMisses, firstMiss[1:]))
	}
	if !sawFormat {
		errs = append(errs, db.corrupt("no format record"))
	}
	// The live counts change when an entry expires: they are checked
	// unless one did during the pass.
	full1, prefixes1, expiring1 := db.liveCounts()
	if full0 == full1 && prefixes0 == prefixes1 && expiring0 == expiring1 &&
		(full != full1 || prefixes != prefixes1 || expiring != expiring1) {
		errs = append(errs, db.corrupt("counted %d entries and %d prefix entries (%d expiring), recorded %d and %d (%d)",
			full, prefixes, expiring, full1, prefixes1, expiring1))
	}
	return errs
}
