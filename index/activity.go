package index

import (
	"context"
	"sync/atomic"
	"time"
)

// Activity is the work an index did in the background since it was opened
// and the room left on its filesystem: the figures a server exports as
// metrics, which Stats does not carry.
type Activity struct {
	// KeyTableMerges, KeyTableMergeTime and KeyTableMergeBytes count the
	// key table's background merges finished, their total time and the
	// bytes of key files they wrote (0 without a key table).
	KeyTableMerges     int64
	KeyTableMergeTime  time.Duration
	KeyTableMergeBytes int64
	// Compactions counts Badger's compactions finished, by the level they
	// compacted from (Compactions[0]: level 0 into the base level), up to
	// the highest level compacted (at least level 0); nil in memory and
	// when Options.Badger was given (its Logger is the caller's).
	Compactions []int64
	// FreeBytes is the space available on the index's filesystem (to an
	// unprivileged user), and ReserveBytes the part of it the index keeps
	// for Badger's flushes, compactions and Close: writes are refused with
	// store.ErrDiskFull when FreeBytes falls below it (see space.go). Both
	// 0 in memory or read-only.
	FreeBytes, ReserveBytes int64
}

// Activity returns the index's Activity. It reads no key and no file: a
// few counters, Badger's list of tables and one statfs of the directory,
// so that a server may call it at every scrape whatever the index's
// size.
func (db *DB) Activity(ctx context.Context) (_ Activity, err error) {
	defer db.catch(&err)
	if err := db.begin(ctx); err != nil {
		return Activity{}, err
	}
	defer db.mu.RUnlock()
	var a Activity
	a.KeyTableMerges, a.KeyTableMergeTime, a.KeyTableMergeBytes = db.st.keyTableMerges()
	if l, ok := db.bo.Logger.(*badgerLog); ok {
		a.Compactions = l.compactions()
	}
	if !db.opts.InMemory && !db.opts.ReadOnly {
		free := db.space.free // a test hook, as roomFor reads it
		if free == nil {
			free = statfsFree
		}
		if a.FreeBytes, err = free(db.path); err != nil {
			return Activity{}, err
		}
		a.ReserveBytes = db.reserve()
	}
	return a, nil
}

// badgerLog is Badger's logger for an index Open configures: it drops
// every line, as the index did with no logger, and counts the compactions
// Badger reports finished, which Badger tells nowhere else (its expvar
// compaction counters are never updated in v4).
type badgerLog struct {
	levels [maxBadgerLevels]atomic.Int64
}

// maxBadgerLevels bounds the levels counted (Badger's default is 7).
const maxBadgerLevels = 16

// compactionDone is the format of Badger's debug line for a finished
// compaction (levels.go, doCompact): the compactor, the level.
// TestActivityCompactions fails if a Badger upgrade changes it.
const compactionDone = "[Compactor: %d] Compaction for level: %d DONE"

// countCompactions gives Badger a badgerLog, unless the caller gave
// Badger's options (and with them its logger).
func (db *DB) countCompactions() {
	if db.opts.Badger == nil {
		db.bo.Logger = new(badgerLog)
	}
}

func (l *badgerLog) Errorf(string, ...any)   {}
func (l *badgerLog) Warningf(string, ...any) {}
func (l *badgerLog) Infof(string, ...any)    {}

func (l *badgerLog) Debugf(format string, args ...any) {
	if format != compactionDone || len(args) != 2 {
		return
	}
	if level, ok := args[1].(int); ok && level >= 0 && level < len(l.levels) {
		l.levels[level].Add(1)
	}
}

// compactions returns the counts by level, from level 0 up to the
// highest level counted.
func (l *badgerLog) compactions() []int64 {
	out := []int64{0}
	for i := range l.levels {
		if n := l.levels[i].Load(); n > 0 {
			for len(out) <= i {
				out = append(out, 0)
			}
			out[i] = n
		}
	}
	return out
}
