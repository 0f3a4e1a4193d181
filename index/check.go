package index

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/urlhash/urlhash/store"
)

// The checks in this file run before badger.Open and never write to the
// directory. Badger itself deletes every table its MANIFEST does not list
// (also when opened read-only, also when the MANIFEST is missing or cut
// short), crashes the process on a table it cannot open, and cannot be
// opened read-only after a crash; see TestBadgerBehaviour.

// indexNames are the names Badger and the index keep in an index
// directory; anything else makes a directory "not an index" for a
// writable Open. lost+found is the root of a dedicated ext* filesystem.
var indexNames = map[string]bool{
	badger.ManifestFilename:           true,
	"MANIFEST-REWRITE":                true,
	badger.KeyRegistryFileName:        true,
	badger.KeyRegistryRewriteFileName: true,
	"DISCARD":                         true,
	"LOCK":                            true,
	keyTableDir:                       true,
	lockFileName:                      true,
	"lost+found":                      true,
}

// dirState is what an index directory holds, read without writing to it.
type dirState struct {
	exists   bool
	manifest bool            // a MANIFEST is present
	sst      map[uint64]bool // table files present, by id
	vlogs    []string        // value-log files
	mems     []string        // memtable logs: present after a crash (a clean Close removes them)
	pidFile  bool            // Badger's LOCK pid file: a writer opened it and did not close it
	foreign  []string        // names that belong to no index
}

// crashed reports whether the last writer did not close the index: it
// left memtable logs or Badger's pid file. (We hold the directory lock,
// so no writer is running.)
func (s *dirState) crashed() bool { return len(s.mems) > 0 || s.pidFile }

// hasData reports whether the directory holds any Badger data file.
func (s *dirState) hasData() bool { return len(s.sst)+len(s.vlogs)+len(s.mems) > 0 }

// inspectDir lists dir.
func inspectDir(dir string) (dirState, error) {
	s := dirState{sst: map[uint64]bool{}}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("index: %w", err)
	}
	s.exists = true
	for _, e := range ents {
		name := e.Name()
		if id, ok := table.ParseFileID(name); ok && strings.HasSuffix(name, ".sst") {
			s.sst[id] = true
			continue
		}
		switch {
		case name == badger.ManifestFilename:
			s.manifest = true
		case strings.HasSuffix(name, ".vlog"):
			s.vlogs = append(s.vlogs, name)
		case strings.HasSuffix(name, ".mem"):
			s.mems = append(s.mems, name)
		case name == "LOCK":
			s.pidFile = true
		case !indexNames[name] && !strings.HasPrefix(name, "urlhash."): // urlhash.*: the tools' own files
			s.foreign = append(s.foreign, name)
		}
	}
	return s, nil
}

// tableFile is a table the MANIFEST lists.
type tableFile struct {
	id          uint64
	path        string
	compression options.CompressionType
	encrypted   bool
	left, right []byte // smallest and biggest key, without Badger's version suffix
	verified    bool   // every block checked
}

// name returns the table's file name, for messages.
func (t *tableFile) name() string { return table.IDToFilename(t.id) }

// recoverHint ends every message about damage found in a directory.
func recoverHint(dir string) string {
	return fmt.Sprintf("copy what is readable into a new index with: urlhash recover --db %s --to NEW", dir)
}

// corruptDir returns an error wrapping store.ErrCorrupt that lists the
// problems found in dir and says what to do.
func corruptDir(dir string, problems []string) error {
	return fmt.Errorf("%w: index %s: %s; %s", store.ErrCorrupt, dir, strings.Join(problems, "; "), recoverHint(dir))
}

// checkDir checks an index directory before badger.Open: the MANIFEST
// replays; every table it lists is present and its index (footer, block
// offsets, CRC) opens; no table file is unlisted (Badger would delete
// it), except, on a writable open after a crash, the newest tables of a
// flush, compaction or load the crash interrupted, which Badger removes
// and which hold nothing the logs and listed tables do not. A read-only
// open after a crash returns store.ErrNeedsRecovery. It returns the
// listed tables with their key ranges.
func checkDir(dir string, s *dirState, bo *badger.Options) ([]tableFile, error) {
	if !bo.ReadOnly {
		if err := removeEmptyLogs(dir, s); err != nil {
			return nil, err
		}
	}
	if !s.manifest {
		if s.hasData() {
			return nil, corruptDir(dir, []string{fmt.Sprintf("no MANIFEST but %s (Badger would delete the tables)", someFiles(s))})
		}
		return nil, nil
	}
	mpath := filepath.Join(dir, badger.ManifestFilename)
	f, err := os.Open(mpath)
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, bo.ExternalMagicVersion, *bo)
	if err != nil {
		return nil, corruptDir(dir, []string{fmt.Sprintf("MANIFEST does not replay (%v)", err)})
	}
	var problems []string
	var tables []tableFile
	var missing, orphans []uint64
	for id, tm := range m.Tables {
		if !s.sst[id] {
			missing = append(missing, id)
			continue
		}
		tables = append(tables, tableFile{
			id:          id,
			path:        table.NewFilename(id, dir),
			compression: tm.Compression,
			encrypted:   tm.KeyID != 0,
		})
	}
	for id := range s.sst {
		if _, ok := m.Tables[id]; !ok {
			orphans = append(orphans, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(orphans)
	slices.SortFunc(tables, func(a, b tableFile) int { return cmp.Compare(a.id, b.id) })
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("MANIFEST lists %s, missing", tableNames(missing)))
	}
	if len(orphans) > 0 {
		// After a crash, a table the MANIFEST does not list is a compaction
		// input it already records as merged, or the output of a flush,
		// compaction or load it had not recorded yet: either way its data
		// is in the listed tables or the memtable logs (or was never
		// acknowledged). Badger would delete it; a writable Open moves it
		// aside instead, so that no file is ever deleted, and a damaged
		// MANIFEST (which would also leave tables unlisted) costs nothing.
		// Without a crash an unlisted table is damage.
		switch {
		case s.crashed() && bo.ReadOnly:
			return nil, needsRecovery(dir, tableNames(orphans))
		case s.crashed():
			if err := moveOrphans(dir, orphans); err != nil {
				return nil, err
			}
		default:
			problems = append(problems, fmt.Sprintf("%s not listed in MANIFEST (Badger would delete them)", tableNames(orphans)))
		}
	}
	// Badger starts compacting as soon as it opens writable (not only
	// after writes), and a compaction reads its tables without reporting
	// damage: it writes what it could read as if it were all and deletes
	// the rest. So a writable open verifies every block first. (Seen: a
	// writable open of an index with 64 damaged bytes in a table lost the
	// 290,000 entries after them.) A read-only open compacts nothing.
	crashed := !bo.ReadOnly && s.crashed()
	problems = append(problems, openTables(tables, bo.BlockSize, !bo.ReadOnly)...)
	if crashed {
		// Badger replays a memtable log up to its first bad record and
		// cuts the rest off: right for the record a crash tore, loss for
		// damage with records after it.
		for _, name := range s.mems {
			if p := checkLog(filepath.Join(dir, name), true); p != "" {
				problems = append(problems, name+": "+p)
			}
		}
	}
	if last := lastValueLog(s.vlogs); last != "" && !bo.ReadOnly {
		// A writable Open cuts the newest value log at its first bad
		// record the same way.
		if p := checkLog(filepath.Join(dir, last), len(s.mems) > 0); p != "" {
			problems = append(problems, last+": "+p)
		}
	}
	if len(problems) > 0 {
		return nil, corruptDir(dir, problems)
	}
	if bo.ReadOnly && s.crashed() {
		what := "Badger's LOCK file"
		if len(s.mems) > 0 {
			what = s.mems[0]
		}
		return nil, needsRecovery(dir, what)
	}
	return tables, nil
}

// OrphanDir is the subdirectory of an index where a writable Open after a
// crash moves the table files the MANIFEST does not list (see checkDir).
// Their entries are in the index; remove it once "urlhash verify" passes,
// or keep it for "urlhash recover", which reads the tables it is given.
const OrphanDir = "urlhash.orphans"

// moveOrphans moves the tables ids into dir/OrphanDir.
func moveOrphans(dir string, ids []uint64) error {
	to := filepath.Join(dir, OrphanDir)
	if err := os.MkdirAll(to, 0o755); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	for _, id := range ids {
		name := table.IDToFilename(id)
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(to, name)); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	return syncDir(to)
}

// syncDir makes the entries of directory dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// removeEmptyLogs removes the memtable logs of zero bytes that a crash
// between creating one and sizing it leaves: they hold no record, and
// Badger cannot open an index that has one (TestBadgerBehaviour). It is
// the one file a writable Open removes, and it never held data.
func removeEmptyLogs(dir string, s *dirState) error {
	kept := s.mems[:0]
	for _, name := range s.mems {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("index: %w", err)
			}
			continue
		}
		kept = append(kept, name)
	}
	s.mems = kept
	return nil
}

// needsRecovery is the error of a read-only open of an index its last
// writer did not close: what names the leftover that shows it.
func needsRecovery(dir, what string) error {
	return fmt.Errorf("%w: %s (%s left by a process that did not close it; open it writable once, e.g. with any write command, to recover)",
		store.ErrNeedsRecovery, dir, what)
}

// someFiles names a few of the data files in s.
func someFiles(s *dirState) string {
	var names []string
	for id := range s.sst {
		names = append(names, table.IDToFilename(id))
	}
	slices.Sort(names)
	names = append(names, s.vlogs...)
	names = append(names, s.mems...)
	if len(names) > 3 {
		return fmt.Sprintf("%d data files (%s, ...)", len(names), strings.Join(names[:3], ", "))
	}
	return strings.Join(names, ", ")
}

// tableNames names the table files of ids.
func tableNames(ids []uint64) string {
	names := make([]string, 0, min(len(ids), 5))
	for i, id := range ids {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(ids)-5))
			break
		}
		names = append(names, table.IDToFilename(id))
	}
	return strings.Join(names, ", ")
}

// openTables opens the index of every table (and, when verify is set,
// checks every block) in the calling goroutines, where a panic can be
// recovered (inside badger.Open a truncated table kills the process), and
// records each table's key range. It returns one problem per table that
// does not open.
func openTables(tables []tableFile, blockSize int, verify bool) []string {
	problems := make([]string, len(tables))
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(tables); i += workers {
				if err := openTable(&tables[i], blockSize, verify); err != nil {
					problems[i] = fmt.Sprintf("%s: %v", tables[i].name(), err)
				}
			}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(problems, func(p string) bool { return p == "" })
}

// openTable opens t read-only, records its key range and, when
// verify is set, checks every block's checksum. It never writes to the
// file and turns Badger's panics into errors.
func openTable(t *tableFile, blockSize int, verify bool) error {
	if t.encrypted {
		return nil // needs the key registry: Badger checks it
	}
	return withTable(t.path, t.compression, blockSize, options.NoVerification, func(tb *table.Table) error {
		t.left = userKey(tb.Smallest())
		t.right = userKey(tb.Biggest())
		if verify {
			t.verified = true
			return tb.VerifyChecksum()
		}
		return nil
	})
}

// withTable opens the table file at path read-only and calls fn with it,
// turning a panic of Badger's table code into an error.
//
// The table is read through a memory map: a file cut short under it (by
// Badger deleting a table a compaction replaced, in a writable index)
// faults, and the fault is turned into a panic, recovered here, rather
// than killing the process.
func withTable(path string, comp options.CompressionType, blockSize int, mode options.ChecksumVerificationMode, fn func(*table.Table) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.ErrNotExist
		}
		return errors.New(firstLine(err.Error()))
	}
	var tb *table.Table
	defer func() {
		if p := recover(); p != nil {
			msg := firstLine(fmt.Sprint(p))
			if strings.Contains(msg, "initIndex") {
				msg = "footer or index unreadable (truncated?)"
			}
			err = fmt.Errorf("damaged: %s", msg)
		}
		if tb != nil {
			tb.Close(-1) // never DecrRef: at zero references it deletes the file
		} else {
			mf.Close(-1)
		}
	}()
	tb, err = table.OpenTable(mf, table.Options{
		ReadOnly:    true,
		ChkMode:     mode,
		Compression: comp,
		BlockSize:   blockSize,
	})
	if err != nil {
		tb = nil
		return fmt.Errorf("damaged: %s", firstLine(err.Error()))
	}
	if err := fn(tb); err != nil {
		return fmt.Errorf("damaged: %s", firstLine(err.Error()))
	}
	return nil
}

// firstLine returns the first non-empty line of s (Badger's panics carry
// multi-line dumps).
func firstLine(s string) string {
	s = strings.TrimLeft(s, "\n =")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// userKey strips Badger's 8-byte version suffix from an internal key.
func userKey(k []byte) []byte {
	if len(k) < 8 {
		return nil
	}
	return slices.Clone(k[:len(k)-8])
}

// checkLog returns what is wrong with a memtable log or a value log (""
// when its records end at its end or at zeros, or, when torn is set, at a
// record a crash tore, or when all that cannot be read is filter
// snapshot chunks).
func checkLog(path string, torn bool) string {
	if info, err := os.Stat(path); err == nil && info.Size() == 0 {
		return ""
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return firstLine(err.Error())
	}
	defer mf.Close(-1)
	off, end := logRecords(mf.Data, torn, func([]byte, []byte, byte, uint64) bool { return true })
	if end > off && !onlySnapshot(mf.Data, off, end) {
		return fmt.Sprintf("damaged record at offset %d, followed by %d bytes", off, end-off)
	}
	return ""
}

// lastValueLog returns the name of the value log with the highest number
// ("" if none).
func lastValueLog(names []string) string {
	var last string
	var maxID uint64
	for _, n := range names {
		id, err := strconv.ParseUint(strings.TrimSuffix(n, ".vlog"), 10, 32)
		if err == nil && (last == "" || id > maxID) {
			last, maxID = n, id
		}
	}
	return last
}

// checkKeyRegistry checks Badger's key registry (KEYREGISTRY) of an index
// that is not encrypted before Badger reads it, whose refusal names no
// file: a 16-byte IV, the sanity text, then data keys (uint32 length,
// uint32 CRC-32C, the bytes). A missing registry is Badger's to create.
func checkKeyRegistry(dir string, bo *badger.Options) error {
	if len(bo.EncryptionKey) > 0 {
		return nil
	}
	name := filepath.Join(dir, badger.KeyRegistryFileName)
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	switch {
	case err != nil:
		return keyRegistryDamaged(dir, err.Error())
	case len(b) < 16+len(keyRegistrySanity):
		return keyRegistryDamaged(dir, fmt.Sprintf("%d bytes", len(b)))
	case string(b[16:16+len(keyRegistrySanity)]) != keyRegistrySanity:
		return keyRegistryDamaged(dir, "no sanity text")
	}
	for rest := b[16+len(keyRegistrySanity):]; len(rest) > 0; {
		if len(rest) < 8 || uint64(len(rest)-8) < uint64(binary.BigEndian.Uint32(rest)) {
			return keyRegistryDamaged(dir, "a data key cut short")
		}
		n := binary.BigEndian.Uint32(rest)
		if crc32.Checksum(rest[8:8+n], castagnoli) != binary.BigEndian.Uint32(rest[4:]) {
			return keyRegistryDamaged(dir, "a data key's checksum")
		}
		rest = rest[8+n:]
	}
	return nil
}

// keyRegistryDamaged returns the error about the damaged key registry of
// the index in dir, why telling how.
func keyRegistryDamaged(dir, why string) error {
	return fmt.Errorf("%w: index %s: %s is damaged (%s); the entries are in the tables and logs: copy them into a new index with: urlhash recover --db %s --to NEW",
		store.ErrCorrupt, dir, filepath.Join(dir, badger.KeyRegistryFileName), why, dir)
}

// keyRegistrySanity is the sanity text of Badger's key registry.
const keyRegistrySanity = "Hello Badger"
