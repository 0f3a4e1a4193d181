package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/index/internal/syncmark"
	"github.com/urlhash/urlhash/store"
)

// The index knows what it acknowledged. Every Sync (and Close) first
// writes a sequence number to the metadata key "synced" in Badger, makes
// Badger durable, and only then records the number in the file
// urlhash.synced, outside Badger. At Open, Badger must hold at least the
// number the file records: if it holds less, writes acknowledged to
// callers are gone (a memtable log, *.mem, deleted or cut), and Open
// refuses the index instead of serving it without them. The key is
// never deleted, so compaction cannot lower it; the file is written after
// Badger's fsync, so it never claims more than Badger made durable.
//
// The file is a sync mark (package index/internal/syncmark, the format
// the key table's SYNCED shares) of the number. It is written in place
// (one sector) and fsynced at Close; a kill -9 keeps what Sync wrote in
// the OS's cache.
const (
	syncedFileName = "urlhash.synced"
	metaSynced     = "synced" // uint64 big-endian: the last sync begun
)

// syncMark is the state of the acknowledged-writes record.
type syncMark struct {
	mu     sync.Mutex // serialises Syncs: the numbers reach Badger in order
	seq    uint64     // the last number recorded
	marked uint64     // Badger's version after the last number was written
	synced uint64     // Badger's version the last successful Sync covered (0: none)
	// syncedRecords is stores.recordVersions when synced was recorded.
	syncedRecords uint64
	f             *syncmark.File // urlhash.synced, open for writing (nil in memory or read-only)
}

// readSyncedFile returns the number urlhash.synced in dir records, 0 when
// there is none.
func readSyncedFile(dir string) (uint64, error) {
	m, err := syncmark.Read(filepath.Join(dir, syncedFileName))
	switch {
	case errors.Is(err, syncmark.ErrDamaged):
		return 0, fmt.Errorf("%w: %s is damaged; remove it to open the index without checking its acknowledged writes", store.ErrCorrupt, filepath.Join(dir, syncedFileName))
	case err != nil:
		return 0, fmt.Errorf("index: %w", err)
	}
	return m.Seq, nil
}

// checkSynced compares the number Badger holds with the one the file
// records, and opens the file for the next Syncs (writable opens). logs
// are the memtable logs the directory held before Badger opened it.
func (st *stores) checkSynced(logs []string) error {
	if st.dir == "" {
		return nil
	}
	want, err := readSyncedFile(st.dir)
	if err != nil {
		return err
	}
	got, ok := st.readSyncedKey()
	if ok && got < want {
		// Badger answers "absent" for a key of a block that fails its
		// checksum: a damaged table is named, not taken for a lost log.
		if err := st.guard.CheckKeys([][]byte{metaKey(metaSynced)}); err != nil {
			return err
		}
		held := "none was left"
		if len(logs) > 0 {
			held = "found: " + strings.Join(logs, ", ")
		}
		return fmt.Errorf("%w: %s: writes acknowledged by sync %d are missing (the index holds sync %d): a memtable log (*.mem; %s) was deleted or cut after the last close. "+
			"Copy what is readable with \"urlhash recover --db %s --to NEW\"; to accept the loss and open it anyway, remove %s",
			store.ErrCorrupt, st.dir, want, got, held, st.dir, filepath.Join(st.dir, syncedFileName))
	}
	st.acked.seq = max(got, want)
	if st.readOnly {
		return nil
	}
	// Badger holds that number and every write before it: until a write,
	// no Sync or Close needs another (which would make a current filter
	// snapshot stale).
	st.acked.marked = st.committed()
	f, err := syncmark.Create(filepath.Join(st.dir, syncedFileName))
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	st.acked.f = f
	return nil
}

// readSyncedKey returns the sync number Badger holds; not ok when it
// cannot be read (a damaged table, which Verify and the reads report:
// the check is skipped rather than the index refused for it).
func (st *stores) readSyncedKey() (got uint64, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	err := st.bdb.View(func(txn *badger.Txn) error {
		v, err := getCopy(txn, metaKey(metaSynced))
		if len(v) == 8 {
			got = binary.BigEndian.Uint64(v)
		}
		return err
	})
	return got, err == nil
}

// markSync writes the next sync number to Badger, before the fsync that
// makes it durable; recordSync then records it outside Badger. Both run
// under sync.mu.
// Nothing written since the last mark: the last number stands.
func (st *stores) markSync() (uint64, error) {
	if st.committed() == st.acked.marked {
		return st.acked.seq, nil
	}
	seq := st.acked.seq + 1
	err := st.update(func(txn *badger.Txn) error {
		return txn.Set(metaKey(metaSynced), binary.BigEndian.AppendUint64(nil, seq))
	})
	if err != nil {
		return 0, translate(err)
	}
	st.acked.marked = st.committed()
	return seq, nil
}

// recordSync records seq, made durable in Badger, in urlhash.synced; with
// fsync at Close.
func (st *stores) recordSync(seq uint64, fsync bool) error {
	if seq == st.acked.seq && !fsync {
		return nil
	}
	st.acked.seq = seq
	if st.acked.f == nil || seq == 0 {
		return nil
	}
	if err := st.acked.f.Write(syncmark.Mark{Seq: seq}); err != nil {
		return fmt.Errorf("index: %s: %w", syncedFileName, err)
	}
	if fsync {
		if err := st.acked.f.Sync(); err != nil {
			return fmt.Errorf("index: %s: %w", syncedFileName, err)
		}
	}
	return nil
}

// closeSynced closes urlhash.synced.
func (st *stores) closeSynced() error {
	if st.acked.f == nil {
		return nil
	}
	err := st.acked.f.Close()
	st.acked.f = nil
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("index: %s: %w", syncedFileName, err)
	}
	return nil
}
