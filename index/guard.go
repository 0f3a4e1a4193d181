package index

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// A guard verifies, lazily and at most once per process, the checksums of
// every block of the tables an index had when it was opened.
//
// Badger answers a lookup whose table block is damaged with "absent", and
// stops an iteration at such a block without an error (its table code
// keeps the error to itself), whatever its checksum mode. The filter's
// "maybe" is how the index notices: a key the filter may hold that Badger
// says is absent is either a false positive (about 0.1%) or in a damaged
// block, so the tables whose key range covers it are verified before the
// answer "absent" is given, and a damaged one turns the answer into an
// error naming the file. Iterations over many keys (Scan, Count, ForEach,
// Verify, a filter rebuild) verify the tables of their key range first.
//
// Table files never change once written. Tables written by this process
// (flushes, compactions, loads) are trusted; Verify checks them too.
type guard struct {
	dir       string
	blockSize int

	// unchecked counts pending tables plus damaged ones: zero (the usual
	// state once the tables a workload touches are verified) makes check
	// one atomic load.
	unchecked atomic.Int64

	mu      sync.Mutex
	pending []*guardTable // not verified yet
	bad     []*guardTable // verified and damaged
	// seen holds the ids of every table the guard was given (verified
	// before it started, or since).
	seen map[uint64]bool
}

type guardTable struct {
	tableFile
	once sync.Once
	err  error // verification result: nil, errGone or the damage
}

// errGone marks a table removed by a compaction before it was verified.
var errGone = errors.New("gone")

func newGuard(dir string, blockSize int, tables []tableFile) *guard {
	g := &guard{dir: dir, blockSize: blockSize, seen: map[uint64]bool{}}
	for _, t := range tables {
		g.seen[t.id] = !t.encrypted && t.left != nil
		if t.encrypted || t.left == nil || t.verified {
			continue
		}
		g.pending = append(g.pending, &guardTable{tableFile: t})
	}
	g.unchecked.Store(int64(len(g.pending)))
	return g
}

// known reports whether the guard verified the table id (before it
// started, or since) or has it pending, so that checkAll covers it.
func (g *guard) known(id uint64) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[id]
}

// idle reports whether nothing is left to verify and nothing was found
// damaged.
func (g *guard) idle() bool { return g == nil || g.unchecked.Load() == 0 }

// check verifies the tables whose key range overlaps [lo, hi] (nil ends
// mean unbounded) and returns an error wrapping store.ErrCorrupt naming
// every damaged one.
func (g *guard) check(lo, hi []byte) error {
	if g.idle() {
		return nil
	}
	return g.verify(func(t *tableFile) bool {
		return (hi == nil || bytes.Compare(t.left, hi) <= 0) && (lo == nil || bytes.Compare(t.right, lo) >= 0)
	})
}

// checkRanges is check for each range.
func (g *guard) checkRanges(ranges [][2][]byte) error {
	if g.idle() {
		return nil
	}
	return g.verify(func(t *tableFile) bool {
		for _, r := range ranges {
			if bytes.Compare(t.left, r[1]) <= 0 && bytes.Compare(t.right, r[0]) >= 0 {
				return true
			}
		}
		return false
	})
}

// checkKeys is check for each key.
func (g *guard) checkKeys(keys [][]byte) error {
	if g.idle() || len(keys) == 0 {
		return nil
	}
	return g.verify(func(t *tableFile) bool {
		for _, k := range keys {
			if bytes.Compare(t.left, k) <= 0 && bytes.Compare(t.right, k) >= 0 {
				return true
			}
		}
		return false
	})
}

// checkAll verifies every table not verified yet.
func (g *guard) checkAll() error { return g.check(nil, nil) }

// verify verifies the pending tables that match, on several cores when
// there are many, and reports every damaged table that matches.
func (g *guard) verify(match func(*tableFile) bool) error {
	g.mu.Lock()
	var todo []*guardTable
	for _, t := range g.pending {
		if match(&t.tableFile) {
			todo = append(todo, t)
		}
	}
	g.mu.Unlock()

	if len(todo) > 0 {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(len(todo), runtime.GOMAXPROCS(0), 4) {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < len(todo); i = int(next.Add(1)) - 1 {
					t := todo[i]
					t.once.Do(func() {
						err := withTable(t.path, t.compression, g.blockSize, options.OnBlockRead, verifyBlocks)
						if errors.Is(err, fs.ErrNotExist) {
							err = errGone
						}
						t.err = err
					})
				}
			})
		}
		wg.Wait()
		g.mu.Lock()
		g.pending = slices.DeleteFunc(g.pending, func(t *guardTable) bool {
			if !slices.Contains(todo, t) {
				return false
			}
			if t.err != nil && t.err != errGone {
				g.bad = append(g.bad, t)
			} else {
				g.unchecked.Add(-1)
			}
			return true
		})
		g.mu.Unlock()
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	var problems []string
	for _, t := range g.bad {
		if match(&t.tableFile) {
			problems = append(problems, fmt.Sprintf("%s: %v", t.name(), t.err))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return corruptDir(g.dir, problems)
}

// verifyBlocks checks the checksum of every block of tb (opened with
// OnBlockRead). When one fails (Badger's VerifyChecksum then panics) it
// counts the blocks that fail.
func verifyBlocks(tb *table.Table) error {
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%v", p)
			}
		}()
		return tb.VerifyChecksum()
	}()
	if err == nil {
		return nil
	}
	if _, blocks, bad := readBlocks(tb); bad > 0 {
		return fmt.Errorf("%d of %d blocks fail their checksum", bad, blocks)
	}
	return err
}

// prepareWrite verifies every table before the index's first write.
// Writes lead to flushes and compactions (Close compacts level 0), and a
// compaction reads its tables without reporting damage and writes what it
// could read as if it were all: damage found later would be loss.
func (db *DB) prepareWrite() error {
	if db.writeReady.Load() {
		return nil
	}
	if err := db.guard.checkAll(); err != nil {
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
		*err = db.panicError(p, ranges)
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
		*err = db.panicError(p, ranges)
	}
}

// panicError is the error for a recovered panic p while reading the key
// ranges (none: anywhere).
func (db *DB) panicError(p any, ranges [][2][]byte) error {
	db.panics.Add(1)
	var err error
	if len(ranges) == 0 {
		err = db.guard.checkAll()
	} else {
		err = db.guard.checkRanges(ranges)
	}
	if err != nil {
		return err
	}
	msg := firstLine(fmt.Sprint(p))
	if strings.HasPrefix(msg, "Recovered") {
		msg = "damaged table data" // Badger's dump follows on the next lines
	}
	if db.path == "" {
		return fmt.Errorf("%w: index in memory: Badger panicked: %s", store.ErrCorrupt, msg)
	}
	return fmt.Errorf("%w: index %s: Badger panicked: %s; %s", store.ErrCorrupt, db.path, msg, recoverHint(db.path))
}

// valueLogError is the error for a value of key Badger could not read
// from the value log. It names the value-log files whose records are
// damaged.
func (db *DB) valueLogError(key []byte) error {
	var damaged []string
	if db.path != "" {
		logs, _ := filepath.Glob(filepath.Join(db.path, "*.vlog"))
		for _, p := range logs {
			if msg := checkLog(p, false); msg != "" {
				damaged = append(damaged, filepath.Base(p)+": "+msg)
			}
		}
	}
	if len(damaged) == 0 {
		return db.corrupt("the value of %x cannot be read from the value log", key)
	}
	return db.corrupt("the value of %x cannot be read from the value log: %s; %s", key, strings.Join(damaged, "; "), recoverHint(db.path))
}
