package keytable

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var modelSeed = flag.Uint64("model.seed", 2, "TestModelEntries's random seed")

// mentry is a record of the model: its columns and value.
type mentry struct {
	cols  Cols
	value []byte
}

// counts are what a caller keeps from the writes' Prev and the merges'
// reports (as the index does): the records, and those with an expiry by
// second.
type counts struct {
	mu      sync.Mutex
	records int64
	byExp   map[int64]int64
}

func (c *counts) add(exp int64, d int64) {
	c.records += d
	if exp != 0 {
		c.byExp[exp] += d
		if c.byExp[exp] == 0 {
			delete(c.byExp, exp)
		}
	}
}

func (c *counts) removed(p Prev) {
	if p.Removed {
		c.add(p.Expires, -1)
	}
}

// modelRun is TestModelEntries's state.
type modelRun struct {
	t     *testing.T
	dir   string
	opts  Options
	tb    *Table
	now   atomic.Int64
	model map[Key]mentry
	c     counts
	keys  []Key
	hist  map[Key][]string // what each key went through (failures print it)
}

func (m *modelRun) note(k Key, f string, args ...any) {
	if m.hist == nil {
		m.hist = map[Key][]string{}
	}
	m.hist[k] = append(m.hist[k], fmt.Sprintf(f, args...))
}

func (m *modelRun) open() {
	m.t.Helper()
	m.opts.Now = m.now.Load
	m.opts.Expired = func(d []ExpiryCount) {
		m.c.mu.Lock()
		defer m.c.mu.Unlock()
		for _, e := range d {
			m.c.add(e.Expires, -e.Count)
		}
	}
	tb, err := Open(m.dir, &m.opts)
	if err != nil {
		m.t.Fatal(err)
	}
	m.tb = tb
}

// recount sets the counts from a scan of the records (after a crash, as
// the index rebuilds its own).
func (m *modelRun) recount() {
	m.t.Helper()
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	m.c.records, m.c.byExp = 0, map[int64]int64{}
	if err := m.tb.ScanEntries(nil, 0, ScanOptions{Expired: true}, func(e *Entry) error {
		m.c.add(e.Cols.Expires, 1)
		return nil
	}); err != nil {
		m.t.Fatal(err)
	}
}

// TestModelEntries runs random batches of adds, deletes and sets (columns,
// values, kept values, expiries) against a map, with a clock that moves,
// merges (small deltas), reopenings and crashes. It checks every key's
// state by every read, and the counts a caller keeps from the writes'
// Prev and the merges' reports against the table's records.
func TestModelEntries(t *testing.T) {
	for _, delta := range []int{5, 40, 1 << 20} {
		t.Run(fmt.Sprintf("delta=%d", delta), func(t *testing.T) {
			m := &modelRun{t: t, dir: t.TempDir(), opts: Options{DeltaKeys: delta}, model: map[Key]mentry{}}
			m.c.byExp = map[int64]int64{}
			m.now.Store(1000)
			rng := rand.New(rand.NewPCG(uint64(delta), *modelSeed))
			for i := range 300 {
				m.keys = append(m.keys, keyOf(uint64(i)))
			}
			m.open()
			defer func() { m.tb.Close() }()
			for round := range 60 {
				m.now.Add(int64(rng.IntN(40)))
				m.batch(rng, round)
				m.checkLen(round)
				switch {
				case round%13 == 12:
					for k := range m.hist {
						m.note(k, "round %d: crash", round)
					}
					m.check(round)
					waitMerges(m.tb)
					m.tb.mergeWG.Wait()
					dir := crashCopy(t, m.dir)
					m.tb.Close()
					m.dir = dir
					m.open()
					m.recount()
				case round%7 == 6:
					for k := range m.hist {
						m.note(k, "round %d: reopen", round)
					}
					m.check(round)
					if err := m.tb.Close(); err != nil {
						t.Fatal(err)
					}
					m.open()
				}
			}
			waitMerges(m.tb)
			m.check(60)
			if err := m.tb.Verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// batch writes a random batch and applies it to the model and the counts.
func (m *modelRun) batch(rng *rand.Rand, round int) {
	t := m.t
	now := m.now.Load()
	var b Batch
	picked := map[Key]bool{}
	for range rng.IntN(30) {
		k := m.keys[rng.IntN(len(m.keys))]
		if picked[k] {
			continue
		}
		picked[k] = true
		switch rng.IntN(4) {
		case 0:
			b.Deleted = append(b.Deleted, k)
		case 1:
			b.Added = append(b.Added, k)
		default:
			s := Set{Key: k}
			if rng.IntN(2) == 0 {
				s.Cols.First = now - int64(rng.IntN(100))
				s.Cols.Last = now
			}
			if rng.IntN(3) == 0 {
				s.Cols.Expires = now - 10 + int64(rng.IntN(120))
			}
			// A value kept is the live record's (the index keeps the
			// value of what it found live: an expired record's may be
			// dropped by a merge at any time).
			e, ok := m.model[k]
			switch rng.IntN(3) {
			case 0:
				s.Value = fmt.Appendf(nil, "https://example.org/%d/%d", round, rng.IntN(1000))
			case 1:
				s.KeepValue = ok && !expired(e.cols.Expires, now)
			}
			b.Set = append(b.Set, s)
		}
	}
	r := Result{Added: make([]Prev, len(b.Added)), Deleted: make([]Prev, len(b.Deleted)), Set: make([]Prev, len(b.Set))}
	seq, err := m.tb.Write(&b, &r)
	if err == nil {
		err = m.tb.SyncTo(seq)
	}
	if err != nil {
		t.Fatal(err)
	}
	live := func(k Key) bool {
		e, ok := m.model[k]
		return ok && !expired(e.cols.Expires, now)
	}
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	for i, k := range b.Added {
		p := r.Added[i]
		if p.Live != live(k) {
			t.Fatalf("round %d: add %x: Prev.Live %v, the model's %v", round, k[:4], p.Live, live(k))
		}
		if p.Live {
			continue
		}
		m.c.removed(p)
		m.c.add(0, 1)
		m.model[k] = mentry{}
		m.note(k, "round %d at %d: add (%+v)", round, now, p)
	}
	for i, k := range b.Deleted {
		p := r.Deleted[i]
		if p.Live != live(k) {
			t.Fatalf("round %d: delete %x: Prev.Live %v, the model's %v", round, k[:4], p.Live, live(k))
		}
		m.c.removed(p)
		delete(m.model, k)
		m.note(k, "round %d at %d: delete (%+v)", round, now, p)
	}
	for i, s := range b.Set {
		p := r.Set[i]
		if p.Live != live(s.Key) {
			t.Fatalf("round %d: set %x: Prev.Live %v, the model's %v", round, s.Key[:4], p.Live, live(s.Key))
		}
		m.c.removed(p)
		m.c.add(s.Cols.Expires, 1)
		e := mentry{cols: s.Cols, value: s.Value}
		if s.KeepValue {
			e.value = m.model[s.Key].value
		}
		m.model[s.Key] = e
		m.note(s.Key, "round %d at %d: set %+v value %q keep %v (%+v)", round, now, s.Cols, s.Value, s.KeepValue, p)
	}
}

// check compares every key's state by Has, HasBatch, Get and GetBatch,
// a scan with values and expired records, and the counts.
func (m *modelRun) check(round int) {
	t := m.t
	t.Helper()
	tb := m.tb
	// The counts are exact when no merge runs: a write over an expired
	// record that the running merge drops leaves the record counted
	// until the merge installs its file and reports it.
	mergeError(tb)
	now := m.now.Load()
	sorted := slices.Clone(m.keys)
	slices.SortFunc(sorted, compareKeys)
	for _, keys := range [][]Key{m.keys, sorted} {
		found := make([]Found, len(keys))
		vals := make([][]byte, len(keys))
		if _, err := tb.GetBatch(keys, found, func(i int, v []byte) error {
			vals[i] = bytes.Clone(v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		has := make([]bool, len(keys))
		if _, err := tb.HasBatch(keys, has); err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			e, ok := m.model[k]
			live := ok && !expired(e.cols.Expires, now)
			fd, v, err := tb.Get(&k, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := tb.Has(&k)
			if err != nil {
				t.Fatal(err)
			}
			if fd.Live != live || found[i].Live != live || has[i] != live || h != live {
				t.Fatalf("round %d: %x: Get %v, GetBatch %v, HasBatch %v, Has %v; the model's %v", round, k[:4], fd.Live, found[i].Live, has[i], h, live)
			}
			if !live {
				continue
			}
			if fd.Cols != e.cols || found[i].Cols != e.cols {
				t.Fatalf("round %d: %x: columns %+v, %+v; the model's %+v", round, k[:4], fd.Cols, found[i].Cols, e.cols)
			}
			if !bytes.Equal(v, e.value) || !bytes.Equal(vals[i], e.value) || fd.HasValue != (len(e.value) > 0) {
				t.Fatalf("round %d: %x: value %q, %q; the model's %q\n%s", round, k[:4], v, vals[i], e.value, strings.Join(m.hist[k], "\n"))
			}
		}
	}
	// A scan of the records: every live one, and the expired ones no
	// merge dropped yet, as the model has them; as many as the counts.
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	n := 0
	byExp := map[int64]int64{}
	liveSeen := 0
	scanned := map[Key]bool{}
	if err := tb.ScanEntries(nil, 0, ScanOptions{Values: true, Expired: true}, func(se *Entry) error {
		n++
		scanned[se.Key] = true
		if se.Cols.Expires != 0 {
			byExp[se.Cols.Expires]++
		}
		e, ok := m.model[se.Key]
		if !ok || se.Cols != e.cols || !bytes.Equal(se.Value, e.value) {
			t.Fatalf("round %d: scan: %x %+v %q; the model's %v %+v %q", round, se.Key[:4], se.Cols, se.Value, ok, e.cols, e.value)
		}
		if se.Expired != expired(e.cols.Expires, now) {
			t.Fatalf("round %d: scan: %x expired %v at %d, expiry %d", round, se.Key[:4], se.Expired, now, e.cols.Expires)
		}
		if !se.Expired {
			liveSeen++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, e := range m.model {
		if !expired(e.cols.Expires, now) {
			want++
		}
	}
	if liveSeen != want {
		t.Fatalf("round %d: scan: %d live entries, the model's %d", round, liveSeen, want)
	}
	if int64(n) != tb.Len() || int64(n) != m.c.records {
		var b strings.Builder
		for k, e := range m.model {
			if expired(e.cols.Expires, now) && !scanned[k] {
				fmt.Fprintf(&b, "%x (dropped?):\n%s\n", k[:4], strings.Join(m.hist[k], "\n"))
			}
		}
		t.Fatalf("round %d: scan: %d records, Len %d, the caller's count %d\n%s", round, n, tb.Len(), m.c.records, b.String())
	}
	if !maps.Equal(byExp, m.c.byExp) {
		t.Fatalf("round %d: records by expiry %v, the caller's %v", round, byExp, m.c.byExp)
	}
}

// checkLen compares Len with a scan of the records.
func (m *modelRun) checkLen(round int) {
	m.t.Helper()
	mergeError(m.tb)
	n := int64(0)
	if err := m.tb.ScanEntries(nil, 0, ScanOptions{Expired: true}, func(*Entry) error { n++; return nil }); err != nil {
		m.t.Fatal(err)
	}
	if n != m.tb.Len() {
		m.t.Fatalf("round %d: %d records scanned, Len %d", round, n, m.tb.Len())
	}
}
