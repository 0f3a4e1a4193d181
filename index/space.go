package index

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlhash/urlhash/store"
)

// Badger creates its files sparse and writes them through memory maps, so
// a full disk is not an error it could return: the process dies of SIGBUS
// (at a memtable flush, a compaction, the value log or Close). The index
// therefore refuses writes, with store.ErrDiskFull, while the free space of
// the index's filesystem is below a reserve that lets Badger finish what
// it has accepted and close:
//
//	(NumMemtables+1) x 1.25 MemTableSize  memtable logs and their flush to tables
//	+ 2 x ValueLogFileSize            the value log's sparse file
//	+ max(10% of the tables, 64 MiB)  compaction output, before the input goes
//
// (with the defaults 6 x 80 MiB + 2 x 64 MiB + 64 MiB = 672 MiB at least),
// plus the bytes the refused write would add (for Load: each sorted run
// it spills to the index directory, then the tables it writes, the runs
// still on the disk). This holds while the index
// is the only writer of its filesystem: give a large index its own
// filesystem or quota.
//
// Another process may fill the filesystem between two readings. Two
// things narrow what that can do: the free space is read again every
// spaceRecheck (and every quarter memtable of writes), and at each reading
// the memory-mapped logs Badger writes into (*.mem, *.vlog) get their
// blocks (fallocate on Linux), so that appending to them never needs a
// block the disk no longer has; a log that cannot get them refuses the
// writes like a full disk. What remains: a memtable Badger opens between
// two readings, and flushes and compactions, write sparse mapped files.
const (
	minCompactionReserve = 64 << 20
	// spaceRecheck bounds how long a free-space figure is trusted.
	spaceRecheck = 20 * time.Millisecond
)

// space decides whether a write fits. It reads the free space (statfs)
// again when the bytes written since the last reading may have used up
// the margin it showed, or after spaceRecheck.
type space struct {
	mu     sync.Mutex
	budget atomic.Int64 // bytes that may be written before the next reading
	at     atomic.Int64 // time of the last reading (unix ns)
	// free returns the bytes available to the index (a test hook).
	free func(dir string) (int64, error)
	// allocated records the logs preallocate gave their blocks, and
	// their size then.
	allocated map[string]int64
}

// reserve returns the free space the index keeps for Badger's own work.
func (db *DB) reserve() int64 {
	r := int64(db.bo.NumMemtables+1)*allocated(db.bo.MemTableSize) + 2*db.bo.ValueLogFileSize
	return r + max(db.tableBytes()/10, minCompactionReserve)
}

// tableBytes returns the size of the index's tables.
func (db *DB) tableBytes() int64 {
	var n int64
	for _, t := range db.st.bdb.Tables() {
		n += int64(t.OnDiskSize)
	}
	return n
}

// roomFor returns an error wrapping store.ErrDiskFull unless n more bytes
// can be written and the reserve still be free. An in-memory or
// read-only index always has room.
func (db *DB) roomFor(n int64) error {
	if db.opts.InMemory || db.opts.ReadOnly {
		return nil
	}
	sp := &db.space
	if sp.budget.Add(-n) >= 0 && time.Now().UnixNano()-sp.at.Load() < int64(spaceRecheck) {
		return nil
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	freeFn := sp.free
	if freeFn == nil {
		freeFn = statfsFree
	}
	if err := sp.preallocate(db.path, db.bo.MemTableSize, db.bo.ValueLogFileSize); err != nil {
		sp.budget.Store(-1)
		return fmt.Errorf("%w: index %s: %v; free some space or move the index", store.ErrDiskFull, db.path, err)
	}
	free, err := freeFn(db.path)
	if err != nil {
		return err
	}
	need := db.reserve() + n
	sp.at.Store(time.Now().UnixNano())
	if free < need {
		sp.budget.Store(-1)
		return fmt.Errorf("%w: index %s: %d bytes free, %d needed (%d kept free for flushes, compactions and Close, %d for this write); free some space or move the index",
			store.ErrDiskFull, db.path, free, need, need-n, n)
	}
	sp.budget.Store(min(free-need, db.bo.MemTableSize/4))
	return nil
}

// allocated is how much of a log of n bytes of records preallocate gives
// blocks: Badger sizes its logs at twice what it means to write, and a
// memtable's log ends a little after its n bytes.
func allocated(n int64) int64 { return n + n/4 }

// preallocate gives every memory-mapped log of dir (*.mem, *.vlog) not
// yet done its disk blocks, up to its (sparse) size or allocated(memtable
// or vlog bytes), and forgets the logs Badger removed: one listing of dir,
// a stat for each new log only. Called under mu.
func (sp *space) preallocate(dir string, memtable, vlog int64) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	done := make(map[string]int64, len(sp.allocated))
	defer func() { sp.allocated = done }()
	for _, e := range ents {
		var n int64
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".mem"):
			n = allocated(memtable)
		case strings.HasSuffix(name, ".vlog"):
			n = allocated(vlog)
		default:
			continue
		}
		path := filepath.Join(dir, e.Name())
		if m, ok := sp.allocated[path]; ok {
			done[path] = m
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.Size() == 0 {
			continue // gone meanwhile, or empty
		}
		n = min(fi.Size(), n)
		if err := allocate(path, n); err != nil {
			return err
		}
		done[path] = n
	}
	return nil
}

// writeCost estimates the disk bytes a write of entries costs: the
// memtable log, then the table it is flushed to.
func writeCost(entries []store.Entry) int64 {
	var n int64
	for i := range entries {
		n += entryCost(&entries[i])
	}
	return n
}

func entryCost(e *store.Entry) int64 { return entryCostOf(len(e.Key()), valueLen(e.Value)) }

// entryCostOf is entryCost for a key of n bytes and a value of vlen.
func entryCostOf(n, vlen int) int64 {
	const overhead = 8 + 24 // Badger's version suffix, headers, checksums, offsets
	return 2 * int64(1+n+vlen+overhead)
}
