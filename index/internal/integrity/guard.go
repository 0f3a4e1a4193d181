package integrity

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4/options"
)

// A Guard verifies, lazily and at most once per process, the checksums of
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
type Guard struct {
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
	Table
	once sync.Once
	err  error // verification result: nil, errGone or the damage
}

// errGone marks a table removed by a compaction before it was verified.
var errGone = errors.New("gone")

// NewGuard returns a guard of the tables an index opened with, in dir,
// whose blocks are blockSize bytes (Badger's BlockSize).
func NewGuard(dir string, blockSize int, tables []Table) *Guard {
	g := &Guard{dir: dir, blockSize: blockSize, seen: map[uint64]bool{}}
	for _, t := range tables {
		g.seen[t.ID] = !t.encrypted && t.left != nil
		if t.encrypted || t.left == nil || t.verified {
			continue
		}
		g.pending = append(g.pending, &guardTable{Table: t})
	}
	g.unchecked.Store(int64(len(g.pending)))
	return g
}

// IsKnown reports whether the guard verified the table id (before it
// started, or since) or has it pending, so that CheckAll covers it.
func (g *Guard) IsKnown(id uint64) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[id]
}

// IsIdle reports whether nothing is left to verify and nothing was found
// damaged.
func (g *Guard) IsIdle() bool { return g == nil || g.unchecked.Load() == 0 }

// Check verifies the tables whose key range overlaps [lo, hi] (nil ends
// mean unbounded) and returns an error wrapping store.ErrCorrupt naming
// every damaged one.
func (g *Guard) Check(lo, hi []byte) error {
	if g.IsIdle() {
		return nil
	}
	return g.verify(func(t *Table) bool {
		return (hi == nil || bytes.Compare(t.left, hi) <= 0) && (lo == nil || bytes.Compare(t.right, lo) >= 0)
	})
}

// CheckRanges is Check for each range.
func (g *Guard) CheckRanges(ranges [][2][]byte) error {
	if g.IsIdle() {
		return nil
	}
	return g.verify(func(t *Table) bool {
		for _, r := range ranges {
			if bytes.Compare(t.left, r[1]) <= 0 && bytes.Compare(t.right, r[0]) >= 0 {
				return true
			}
		}
		return false
	})
}

// CheckKeys is Check for each key.
func (g *Guard) CheckKeys(keys [][]byte) error {
	if g.IsIdle() || len(keys) == 0 {
		return nil
	}
	return g.verify(func(t *Table) bool {
		for _, k := range keys {
			if bytes.Compare(t.left, k) <= 0 && bytes.Compare(t.right, k) >= 0 {
				return true
			}
		}
		return false
	})
}

// CheckAll verifies every table not verified yet.
func (g *Guard) CheckAll() error { return g.Check(nil, nil) }

// verify verifies the pending tables that match, on several cores when
// there are many, and reports every damaged table that matches.
func (g *Guard) verify(match func(*Table) bool) error {
	g.mu.Lock()
	var todo []*guardTable
	for _, t := range g.pending {
		if match(&t.Table) {
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
						err := WithTable(t.path, t.Compression, g.blockSize, options.OnBlockRead, VerifyBlocks)
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
		if match(&t.Table) {
			problems = append(problems, fmt.Sprintf("%s: %v", t.Name(), t.err))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return CorruptDir(g.dir, problems)
}
