package integrity

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// A value log without its header. Badger creates a value log (at every
// writable open, and when the current one is full) with open(O_CREAT),
// ftruncate to twice the file size, then writes its 20-byte header (key
// id, IV) through a shared memory map; its records are copied into the
// map after the header, and DB.Sync makes them durable with msync of the
// whole map (after the memtable log's). A power loss can keep the file's
// creation without its size or header: 0 bytes. Badger then refuses to
// open the index (its logFile.open takes an empty file for a new one:
// ristretto's z.OpenMmapFile sizes it and returns z.NewFile, which
// logFile.open writes a header for and then returns as its error, "Open
// existing file: … Create a new file"; read-only, the ftruncate fails).
//
// For the newest value log that is safe to repair: a value in it was
// acknowledged only by a sync that returned, and an msync that returns has
// made the file's size and its header (dirty in the same map since the
// file was created) durable with the records. So a newest value log with
// no header on disk was never synced, and holds nothing acknowledged. A
// writable open writes the header Badger would have (key id 0, as Badger
// writes for an index without encryption) into the file, keeping its
// number: a memtable-log record that points into it (unacknowledged)
// then reads as damaged rather than as another value a new file of the
// same number would hold there. (A file with part of a header, or sized
// and all zeros, Badger opens itself.)
//
// An older value log of 0 bytes is different: Badger moved on to a newer
// one (without syncing this one: its rotation does not), so values a
// sync acknowledged may be lost. It is refused as damage.

// repairValueLogs checks the value logs of s before badger.Open: a newest
// one of 0 bytes gets its header on a writable open (a read-only one
// returns store.ErrNeedsRecovery); an older one of 0 bytes is damage.
func repairValueLogs(dir string, s *Dir, bo *badger.Options) error {
	names := slices.Clone(s.VLogs)
	slices.SortFunc(names, func(a, b string) int { return compareLogNames(a, b) })
	var problems []string
	for i, name := range names {
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		if fi.Size() != 0 {
			continue
		}
		switch {
		case i < len(names)-1:
			problems = append(problems, fmt.Sprintf("%s is empty and %s follows it: the values written to it were not made durable before a power loss (some a sync acknowledged may be lost)", name, names[len(names)-1]))
		case len(bo.EncryptionKey) > 0:
			problems = append(problems, fmt.Sprintf("%s, the newest value log, is empty (created just before a crash), and the index is encrypted: its header cannot be rewritten", name))
		case bo.ReadOnly:
			return needsRecovery(dir, name+", a value log without its header,")
		default:
			if err := writeValueLogHeader(path); err != nil {
				return err
			}
		}
	}
	if len(problems) > 0 {
		return CorruptDir(dir, problems)
	}
	return nil
}

// writeValueLogHeader writes the header of a value log of an index
// without encryption (key id 0, an IV Badger does not use then) into the
// empty file path, and makes it durable.
func writeValueLogHeader(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	_, err = f.Write(make([]byte, LogHeaderSize))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index: writing the header of %s: %w", path, err)
	}
	return nil
}

// compareLogNames orders value-log names by their number.
func compareLogNames(a, b string) int {
	x, _ := strconv.ParseUint(strings.TrimSuffix(a, ".vlog"), 10, 32)
	y, _ := strconv.ParseUint(strings.TrimSuffix(b, ".vlog"), 10, 32)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
