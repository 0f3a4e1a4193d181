package index

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// OrphanDir is the subdirectory of an index where a writable Open after a
// crash moves the table files the MANIFEST does not list (see Integrity in
// the package doc). Their entries are in the index; remove it once
// "urlhash verify" passes, or keep it for "urlhash recover", which reads
// the tables it is given.
const OrphanDir = integrity.OrphanDir

// isSnapshotKey reports whether a Badger key (with its version) is a
// filter snapshot chunk's (version 1 snapshots, whose chunks a value log
// may still hold): a cache, whose damage in a log loses nothing (see
// integrity.OnlyKeys).
func isSnapshotKey(k []byte) bool {
	prefix := metaKey(metaFilter)
	return len(k) == len(prefix)+4+8 && bytes.HasPrefix(k, prefix)
}

// prepareWrite verifies every table before the index's first write.
// Writes lead to flushes and compactions (Close compacts level 0), and a
// compaction reads its tables without reporting damage and writes what it
// could read as if it were all: damage found later would be loss.
func (db *DB) prepareWrite() error {
	if db.writeReady.Load() {
		return nil
	}
	if err := db.st.guard.CheckAll(); err != nil {
		return err
	}
	db.writeReady.Store(true)
	return nil
}

// catch turns a panic (from Badger's table code reading a damaged table)
// into an error wrapping store.ErrCorrupt. It names the damaged file when
// verifying the tables of the key ranges (none: every table) finds it.
// Defer it first in every exported method, so that it runs after the
// method has released its locks.
func (db *DB) catch(err *error, ranges ...[2][]byte) {
	if p := recover(); p != nil {
		*err = db.st.panicError(p, ranges)
	}
}

// catchHash is catch for a lookup of h: its full key, and when prefixes
// is set the prefix entries h may start with. (Its key ranges are made
// only after a panic: the lookup allocates nothing for them.)
func (db *DB) catchHash(err *error, h *hashkey.Hash, prefixes bool) {
	if p := recover(); p != nil {
		k := fullKey(h)
		ranges := [][2][]byte{{k[:], k[:]}}
		if prefixes {
			ranges = append(ranges, [2][]byte{prefixKey(h[:store.MinPrefixEntryLen]), prefixKey(h[:])})
		}
		*err = db.st.panicError(p, ranges)
	}
}

// panicError is the error for a recovered panic p while reading the key
// ranges (none: anywhere).
func (st *stores) panicError(p any, ranges [][2][]byte) error {
	st.panics.Add(1)
	var err error
	if len(ranges) == 0 {
		err = st.guard.CheckAll()
	} else {
		err = st.guard.CheckRanges(ranges)
	}
	if err != nil {
		return err
	}
	msg := integrity.FirstLine(fmt.Sprint(p))
	if strings.HasPrefix(msg, "Recovered") {
		msg = "damaged table data" // Badger's dump follows on the next lines
	}
	if st.dir == "" {
		return fmt.Errorf("%w: index in memory: Badger panicked: %s", store.ErrCorrupt, msg)
	}
	return fmt.Errorf("%w: index %s: Badger panicked: %s; %s", store.ErrCorrupt, st.dir, msg, integrity.RecoverHint(st.dir))
}

// valueLogError is the error for a value of key Badger could not read
// from the value log. It names the value-log files whose records are
// damaged.
func (st *stores) valueLogError(key []byte) error {
	var damaged []string
	if st.dir != "" {
		logs, _ := filepath.Glob(filepath.Join(st.dir, "*.vlog"))
		for _, p := range logs {
			if msg := integrity.CheckLog(p, false, isSnapshotKey); msg != "" {
				damaged = append(damaged, filepath.Base(p)+": "+msg)
			}
		}
	}
	if len(damaged) == 0 {
		return st.corrupt("the value of %x cannot be read from the value log", key)
	}
	return st.corrupt("the value of %x cannot be read from the value log: %s; %s", key, strings.Join(damaged, "; "), integrity.RecoverHint(st.dir))
}

// corrupt returns an error wrapping store.ErrCorrupt about the index.
func (st *stores) corrupt(format string, args ...any) error {
	where := "index in memory"
	if st.dir != "" {
		where = "index " + st.dir
	}
	return fmt.Errorf("%w: %s: %s", store.ErrCorrupt, where, fmt.Sprintf(format, args...))
}
