package integrity

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/urlhash/urlhash/internal/atomicfile"
	"github.com/urlhash/urlhash/store"
)

// The checks of Check run before badger.Open and write to the directory
// only as a writable Open after a crash must (moveOrphans,
// removeEmptyLogs). Badger itself deletes every table its MANIFEST does not list
// (also when opened read-only, also when the MANIFEST is missing or cut
// short), crashes the process on a table it cannot open, and cannot be
// opened read-only after a crash; see TestBadgerBehaviour.

// indexNames are the names Badger keeps in an index directory (the
// index's own start with "urlhash."); anything else makes a directory
// "not an index" for a writable Open. lost+found is the root of a
// dedicated ext* filesystem.
var indexNames = map[string]bool{
	badger.ManifestFilename:           true,
	"MANIFEST-REWRITE":                true,
	badger.KeyRegistryFileName:        true,
	badger.KeyRegistryRewriteFileName: true,
	"DISCARD":                         true,
	"LOCK":                            true,
	"keytable":                        true, // the index's key table (package keytable)
	"lost+found":                      true,
}

// Dir is what an index directory holds, read without writing to it.
type Dir struct {
	Exists   bool
	Manifest bool            // a MANIFEST is present
	SST      map[uint64]bool // table files present, by id
	VLogs    []string        // value-log files
	Mems     []string        // memtable logs: present after a crash (a clean Close removes them)
	pidFile  bool            // Badger's LOCK pid file: a writer opened it and did not close it
	Foreign  []string        // names that belong to no index
}

// crashed reports whether the last writer did not close the index: it
// left memtable logs or Badger's pid file. (The caller holds the
// directory's lock, so no writer is running.)
func (s *Dir) crashed() bool { return len(s.Mems) > 0 || s.pidFile }

// HasData reports whether the directory holds any Badger data file.
func (s *Dir) HasData() bool { return len(s.SST)+len(s.VLogs)+len(s.Mems) > 0 }

// Inspect lists dir.
func Inspect(dir string) (Dir, error) {
	s := Dir{SST: map[uint64]bool{}}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("index: %w", err)
	}
	s.Exists = true
	for _, e := range ents {
		name := e.Name()
		if id, ok := table.ParseFileID(name); ok && strings.HasSuffix(name, ".sst") {
			s.SST[id] = true
			continue
		}
		switch {
		case name == badger.ManifestFilename:
			s.Manifest = true
		case strings.HasSuffix(name, ".vlog"):
			s.VLogs = append(s.VLogs, name)
		case strings.HasSuffix(name, ".mem"):
			s.Mems = append(s.Mems, name)
		case name == "LOCK":
			s.pidFile = true
		case !indexNames[name] && !strings.HasPrefix(name, "urlhash."): // urlhash.*: the tools' own files
			s.Foreign = append(s.Foreign, name)
		}
	}
	return s, nil
}

// RecoverHint ends every message about damage found in a directory.
func RecoverHint(dir string) string {
	return fmt.Sprintf("copy what is readable into a new index with: urlhash recover --db %s --to NEW", dir)
}

// CorruptDir returns an error wrapping store.ErrCorrupt that lists the
// problems found in dir and says what to do.
func CorruptDir(dir string, problems []string) error {
	return fmt.Errorf("%w: index %s: %s; %s", store.ErrCorrupt, dir, strings.Join(problems, "; "), RecoverHint(dir))
}

// Check checks an index directory before badger.Open: the MANIFEST
// replays; every table it lists is present and its index (footer, block
// offsets, CRC) opens; no table file is unlisted (Badger would delete
// it), except, on a writable open after a crash, the newest tables of a
// flush, compaction or load the crash interrupted, which Badger removes
// and which hold nothing the logs and listed tables do not. A read-only
// open after a crash returns store.ErrNeedsRecovery. A newest value log
// a power loss left without its header gets it on a writable open (see
// repairValueLogs). It returns the
// listed tables with their key ranges. isCache reports whether a value-log
// record's key (with Badger's version) belongs to a cache, whose damage
// loses nothing (see OnlyKeys).
func Check(dir string, s *Dir, bo *badger.Options, isCache func(key []byte) bool) ([]Table, error) {
	if !bo.ReadOnly {
		if err := removeEmptyLogs(dir, s); err != nil {
			return nil, err
		}
	}
	if err := repairValueLogs(dir, s, bo); err != nil {
		return nil, err
	}
	if !s.Manifest {
		if s.HasData() {
			return nil, CorruptDir(dir, []string{fmt.Sprintf("no MANIFEST but %s (Badger would delete the tables)", someFiles(s))})
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
		return nil, CorruptDir(dir, []string{fmt.Sprintf("MANIFEST does not replay (%v)", err)})
	}
	var problems []string
	var tables []Table
	var missing, orphans []uint64
	for id, tm := range m.Tables {
		if !s.SST[id] {
			missing = append(missing, id)
			continue
		}
		tables = append(tables, Table{
			ID:          id,
			path:        table.NewFilename(id, dir),
			Compression: tm.Compression,
			encrypted:   tm.KeyID != 0,
		})
	}
	for id := range s.SST {
		if _, ok := m.Tables[id]; !ok {
			orphans = append(orphans, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(orphans)
	slices.SortFunc(tables, func(a, b Table) int { return cmp.Compare(a.ID, b.ID) })
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("MANIFEST lists %s, missing", TableNames(missing)))
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
			return nil, needsRecovery(dir, TableNames(orphans))
		case s.crashed():
			if err := moveOrphans(dir, orphans); err != nil {
				return nil, err
			}
		default:
			problems = append(problems, fmt.Sprintf("%s not listed in MANIFEST (Badger would delete them)", TableNames(orphans)))
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
		for _, name := range s.Mems {
			if p := CheckLog(filepath.Join(dir, name), true, isCache); p != "" {
				problems = append(problems, name+": "+p)
			}
		}
	}
	if last := lastValueLog(s.VLogs); last != "" && !bo.ReadOnly {
		// A writable Open cuts the newest value log at its first bad
		// record the same way.
		if p := CheckLog(filepath.Join(dir, last), len(s.Mems) > 0, isCache); p != "" {
			problems = append(problems, last+": "+p)
		}
	}
	if len(problems) > 0 {
		return nil, CorruptDir(dir, problems)
	}
	if bo.ReadOnly && s.crashed() {
		what := "Badger's LOCK file"
		if len(s.Mems) > 0 {
			what = s.Mems[0]
		}
		return nil, needsRecovery(dir, what)
	}
	return tables, nil
}

// OrphanDir is the subdirectory of an index where a writable Open after a
// crash moves the table files the MANIFEST does not list (see Check).
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
	return SyncDir(to)
}

// SyncDir makes the entries of directory dir durable.
func SyncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// removeEmptyLogs removes the memtable logs of zero bytes that a crash
// between creating one and sizing it leaves: they hold no record, and
// Badger cannot open an index that has one (TestBadgerBehaviour). It is
// the one file a writable Open removes, and it never held data.
func removeEmptyLogs(dir string, s *Dir) error {
	kept := s.Mems[:0]
	for _, name := range s.Mems {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("index: %w", err)
			}
			continue
		}
		kept = append(kept, name)
	}
	s.Mems = kept
	return nil
}

// needsRecovery is the error of a read-only open of an index its last
// writer did not close: what names the leftover that shows it.
func needsRecovery(dir, what string) error {
	return fmt.Errorf("%w: %s (%s left by a process that did not close it; open it writable once, e.g. with any write command, to recover)",
		store.ErrNeedsRecovery, dir, what)
}

// someFiles names a few of the data files in s.
func someFiles(s *Dir) string {
	var names []string
	for id := range s.SST {
		names = append(names, table.IDToFilename(id))
	}
	slices.Sort(names)
	names = append(names, s.VLogs...)
	names = append(names, s.Mems...)
	if len(names) > 3 {
		return fmt.Sprintf("%d data files (%s, ...)", len(names), strings.Join(names[:3], ", "))
	}
	return strings.Join(names, ", ")
}

// TableNames names the table files of ids.
func TableNames(ids []uint64) string {
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

// CheckKeyRegistry checks Badger's key registry (KEYREGISTRY) of an index
// that is not encrypted before Badger reads it, whose refusal names no
// file: a 16-byte IV, the sanity text, then data keys (uint32 length,
// uint32 CRC-32C, the bytes). A missing registry is Badger's to create.
func CheckKeyRegistry(dir string, bo *badger.Options) error {
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
		return KeyRegistryDamaged(dir, err.Error())
	case len(b) < 16+len(keyRegistrySanity):
		return KeyRegistryDamaged(dir, fmt.Sprintf("%d bytes", len(b)))
	case string(b[16:16+len(keyRegistrySanity)]) != keyRegistrySanity:
		return KeyRegistryDamaged(dir, "no sanity text")
	}
	for rest := b[16+len(keyRegistrySanity):]; len(rest) > 0; {
		if len(rest) < 8 || uint64(len(rest)-8) < uint64(binary.BigEndian.Uint32(rest)) {
			return KeyRegistryDamaged(dir, "a data key cut short")
		}
		n := binary.BigEndian.Uint32(rest)
		if crc32.Checksum(rest[8:8+n], castagnoli) != binary.BigEndian.Uint32(rest[4:]) {
			return KeyRegistryDamaged(dir, "a data key's checksum")
		}
		rest = rest[8+n:]
	}
	return nil
}

// KeyRegistryDamaged returns the error about the damaged key registry of
// the index in dir, why telling how.
func KeyRegistryDamaged(dir, why string) error {
	return fmt.Errorf("%w: index %s: %s is damaged (%s); the entries are in the tables and logs: copy them into a new index with: urlhash recover --db %s --to NEW",
		store.ErrCorrupt, dir, filepath.Join(dir, badger.KeyRegistryFileName), why, dir)
}

// keyRegistrySanity is the sanity text of Badger's key registry.
const keyRegistrySanity = "Hello Badger"
