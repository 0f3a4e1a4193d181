package keytable

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A lossFS is an in-memory file system that models a power loss: a file's
// writes since its last Sync, and a directory's creates, renames and
// removes since its last SyncDir, are pending; a cut keeps of each a
// random prefix (none at all, like LazyFS, with probability one half),
// the rest is lost. After cutAt writes, every write fails: the power is
// cut, and what was durable then is what crashed() returns.
type lossFS struct {
	mu    sync.Mutex
	rng   *rand.Rand
	names map[string]*inode // the directory as the process sees it
	// durable is the directory a cut keeps, before its pending ops.
	durable map[string]*inode
	pending []dirOp
	writes  int
	cutAt   int // 0: never
	cut     bool
}

// inode is a file's contents, as seen and as durable, and its writes in
// between.
type inode struct {
	data    []byte
	durable []byte
	pending []func([]byte) []byte
}

type dirOp struct {
	name string
	to   string // rename: name -> to
	ino  *inode // create; nil: remove (or rename)
}

var errPowerCut = errors.New("lossfs: power cut")

func newLossFS(seed uint64, cutAt int) *lossFS {
	return &lossFS{rng: rand.New(rand.NewPCG(seed, 5)), names: map[string]*inode{}, durable: map[string]*inode{}, cutAt: cutAt}
}

// write counts a mutating operation; false: the power is cut.
func (fs *lossFS) write() bool {
	if fs.cut {
		return false
	}
	fs.writes++
	if fs.cutAt > 0 && fs.writes >= fs.cutAt {
		fs.cut = true
		return false
	}
	return true
}

// crashed returns the file system a cut leaves.
func (fs *lossFS) crashed(seed uint64) *lossFS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	rng := rand.New(rand.NewPCG(seed, 6))
	keep := func(n int) int {
		if n == 0 || rng.IntN(2) == 0 {
			return 0
		}
		return rng.IntN(n + 1)
	}
	dir := map[string]*inode{}
	for n, ino := range fs.durable {
		dir[n] = ino
	}
	for _, op := range fs.pending[:keep(len(fs.pending))] {
		switch {
		case op.to != "":
			if ino, ok := dir[op.name]; ok {
				dir[op.to] = ino
				delete(dir, op.name)
			}
		case op.ino != nil:
			dir[op.name] = op.ino
		default:
			delete(dir, op.name)
		}
	}
	out := newLossFS(seed, 0)
	contents := map[*inode]*inode{}
	for n, ino := range dir {
		c := contents[ino]
		if c == nil {
			b := slices.Clone(ino.durable)
			for _, w := range ino.pending[:keep(len(ino.pending))] {
				b = w(b)
			}
			c = &inode{data: b, durable: slices.Clone(b)}
			contents[ino] = c
		}
		out.names[n] = c
		out.durable[n] = c
	}
	return out
}

func (fs *lossFS) OpenFile(name string, flag int, _ os.FileMode) (file, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ino, ok := fs.names[name]
	switch {
	case ok && flag&os.O_EXCL != 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrExist}
	case !ok && flag&os.O_CREATE == 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	case !ok:
		if !fs.write() {
			return nil, errPowerCut
		}
		ino = &inode{}
		fs.names[name] = ino
		fs.pending = append(fs.pending, dirOp{name: name, ino: ino})
	}
	f := &lossFile{fs: fs, ino: ino, name: name, ro: flag&(os.O_RDWR|os.O_WRONLY) == 0}
	if flag&os.O_TRUNC != 0 && len(ino.data) > 0 {
		if err := f.truncate(0); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (fs *lossFS) ReadFile(name string) ([]byte, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ino, ok := fs.names[name]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	return slices.Clone(ino.data), nil
}

func (fs *lossFS) ReadDir(dir string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var names []string
	for n := range fs.names {
		if filepath.Dir(n) == dir {
			names = append(names, filepath.Base(n))
		}
	}
	slices.Sort(names)
	return names, nil
}

func (fs *lossFS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if _, ok := fs.names[name]; !ok {
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	}
	if !fs.write() {
		return errPowerCut
	}
	delete(fs.names, name)
	fs.pending = append(fs.pending, dirOp{name: name})
	return nil
}

func (fs *lossFS) Rename(from, to string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	ino, ok := fs.names[from]
	if !ok {
		return &os.PathError{Op: "rename", Path: from, Err: os.ErrNotExist}
	}
	if !fs.write() {
		return errPowerCut
	}
	delete(fs.names, from)
	fs.names[to] = ino
	fs.pending = append(fs.pending, dirOp{name: from, to: to})
	return nil
}

func (fs *lossFS) Truncate(name string, size int64) error {
	f, err := fs.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return f.(*lossFile).truncate(size)
}

func (fs *lossFS) MkdirAll(string) error { return nil }

func (fs *lossFS) SyncDir(string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !fs.write() {
		return errPowerCut
	}
	fs.durable = map[string]*inode{}
	for n, ino := range fs.names {
		fs.durable[n] = ino
	}
	fs.pending = nil
	return nil
}

type lossFile struct {
	fs     *lossFS
	ino    *inode
	name   string
	off    int64
	ro     bool
	closed bool
}

func (f *lossFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	return bytes.NewReader(f.ino.data).ReadAt(p, off)
}

// apply applies a write to the file and records it as pending; the
// caller holds fs.mu.
func (f *lossFile) apply(w func([]byte) []byte) error {
	if f.closed || f.ro {
		return os.ErrClosed
	}
	if !f.fs.write() {
		return errPowerCut
	}
	f.ino.data = w(f.ino.data)
	f.ino.pending = append(f.ino.pending, w)
	return nil
}

func writeAt(p []byte, off int64) func([]byte) []byte {
	p = slices.Clone(p)
	return func(b []byte) []byte {
		if n := int(off) + len(p); n > len(b) {
			b = append(b, make([]byte, n-len(b))...)
		}
		copy(b[off:], p)
		return b
	}
}

func (f *lossFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.apply(writeAt(p, off)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (f *lossFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.apply(writeAt(p, f.off)); err != nil {
		return 0, err
	}
	f.off += int64(len(p))
	return len(p), nil
}

func (f *lossFile) truncate(size int64) error {
	return f.apply(func(b []byte) []byte {
		if int64(len(b)) >= size {
			return b[:size]
		}
		return append(b, make([]byte, size-int64(len(b)))...)
	})
}

func (f *lossFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.truncate(size)
}

func (f *lossFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if !f.fs.write() {
		return errPowerCut
	}
	f.ino.durable = slices.Clone(f.ino.data)
	f.ino.pending = nil
	return nil
}

func (f *lossFile) Seek(off int64, whence int) (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	switch whence {
	case io.SeekStart:
		f.off = off
	case io.SeekEnd:
		f.off = int64(len(f.ino.data)) + off
	default:
		f.off += off
	}
	return f.off, nil
}

func (f *lossFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.closed = true
	return nil
}

func (f *lossFile) Name() string { return f.name }

func (f *lossFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return int64(len(f.ino.data)), nil
}

// lossState is a key's state a power-loss round expects: absent, or a
// record with its columns and value.
type lossState struct {
	present bool
	cols    Cols
	value   string
}

func (s lossState) String() string {
	if !s.present {
		return "absent"
	}
	return fmt.Sprintf("%+v %q", s.cols, s.value)
}

// TestPowerLoss writes batches (adds, deletes, sets with columns and
// values, kept values), each synced, with merges (a small delta), bulk
// loads (Ingest) and reopenings, on a file system that loses what was not synced, and cuts
// the power after a random number of writes. The first open after the
// cut must succeed and hold every acknowledged write (a batch whose
// SyncTo returned); the one batch in flight may or may not be there,
// whole. Then the table verifies, and its count matches its records.
func TestPowerLoss(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	acked, opens := 0, 0
	for round := range rounds {
		seed := uint64(round)
		rng := rand.New(rand.NewPCG(seed, 3))
		fs := newLossFS(seed, 50+rng.IntN(3000))
		dir := "/kt"
		opts := &Options{fs: fs, DeltaKeys: 20 + rng.IntN(60), Now: func() int64 { return 1000 }}
		tb, err := Open(dir, opts)
		if err != nil {
			if errors.Is(err, errPowerCut) {
				continue
			}
			t.Fatal(err)
		}
		want := map[Key]lossState{}    // acknowledged
		var inflight map[Key]lossState // the batch whose sync did not return
		keys := make([]Key, 200)
		for i := range keys {
			keys[i] = keyOf(uint64(i))
		}
		// ack records what a write changed: acknowledged, or in flight
		// when it failed (the power is cut); it reports whether to go on.
		ack := func(next map[Key]lossState, err error) bool {
			if err != nil {
				inflight = next
				return false
			}
			acked++
			maps.Copy(want, next)
			return true
		}
		for batch := 0; ; batch++ {
			if batch%25 == 24 {
				if err := tb.Close(); err != nil {
					break
				}
				if tb, err = Open(dir, opts); err != nil {
					if !errors.Is(err, errPowerCut) {
						t.Fatalf("round %d: reopen: %v", round, err)
					}
					tb = nil
					break
				}
			}
			if batch%40 == 39 {
				// A bulk load: new keys with values, in one key file
				// (Commit installs it whole, or not at all).
				next := map[Key]lossState{}
				var sets []Set
				for j := range 30 {
					k := keyOf(uint64(1<<30 + round*10000 + batch*100 + j))
					v := fmt.Sprintf("https://example.org/bulk/%d", j)
					sets = append(sets, Set{Key: k, Cols: Cols{First: 5}, Value: []byte(v)})
					next[k] = lossState{present: true, cols: Cols{First: 5}, value: v}
					keys = append(keys, k)
				}
				slices.SortFunc(sets, func(a, b Set) int { return compareKeys(a.Key, b.Key) })
				in, err := tb.NewIngestOf(&IngestOptions{Keys: 30, First: ColRange{5, 5}, Values: true})
				for i := range sets {
					if err == nil {
						_, err = in.Put(&sets[i])
					}
				}
				if err == nil {
					err = in.Commit()
				} else if in != nil {
					in.Abort()
				}
				if !ack(next, err) {
					break
				}
				continue
			}
			var b Batch
			next := map[Key]lossState{}
			picked := map[Key]bool{}
			for range 1 + rng.IntN(12) {
				k := keys[rng.IntN(200)]
				if picked[k] {
					continue
				}
				picked[k] = true
				cur := want[k]
				switch rng.IntN(4) {
				case 0:
					b.Deleted = append(b.Deleted, k)
					next[k] = lossState{}
				case 1:
					b.Added = append(b.Added, k)
					if !cur.present {
						next[k] = lossState{present: true}
					}
				default:
					s := Set{Key: k, Cols: Cols{First: int64(1 + rng.IntN(999)), Last: 999}}
					v := ""
					if cur.present && rng.IntN(3) == 0 {
						s.KeepValue = true
						v = cur.value
					} else if rng.IntN(2) == 0 {
						v = fmt.Sprintf("https://example.org/%d/%d", round, batch)
						s.Value = []byte(v)
					}
					b.Set = append(b.Set, s)
					next[k] = lossState{present: true, cols: s.Cols, value: v}
				}
			}
			seq, err := tb.Write(&b, nil)
			if err == nil {
				err = tb.SyncTo(seq)
			}
			if !ack(next, err) {
				break
			}
		}
		if tb != nil {
			tb.Close()
		}
		// The power is cut: open what the disk kept.
		after := fs.crashed(seed)
		opts.fs = after
		tb, err = Open(dir, opts)
		if err != nil {
			t.Fatalf("round %d: the first open after the cut: %v", round, err)
		}
		opens++
		for _, k := range keys {
			fd, v, err := tb.Get(&k, nil, true)
			if err != nil {
				t.Fatalf("round %d: Get: %v", round, err)
			}
			got := lossState{present: fd.Live, cols: fd.Cols, value: string(v)}
			w := want[k]
			if got == w {
				continue
			}
			if in, ok := inflight[k]; ok && got == in {
				continue
			}
			t.Fatalf("round %d: key %x after the cut: %v, want %v (acknowledged) or %v (in flight)", round, k[:4], got, w, inflight[k])
		}
		if err := tb.Verify(); err != nil {
			t.Fatalf("round %d: Verify: %v", round, err)
		}
		n := int64(0)
		if err := tb.ScanEntries(nil, 0, ScanOptions{Expired: true}, func(*Entry) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != tb.Len() {
			t.Fatalf("round %d: %d records, Len %d", round, n, tb.Len())
		}
		// It takes writes.
		if _, err := tb.Write(&Batch{Set: []Set{{Key: keyOf(1 << 40), Value: []byte("x")}}}, nil); err != nil {
			t.Fatalf("round %d: a write after the cut: %v", round, err)
		}
		if err := tb.Close(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	t.Logf("%d rounds: %d batches acknowledged, lost 0; %d first opens after a cut, failed 0", rounds, acked, opens)
	if opens < rounds/2 {
		t.Errorf("only %d of %d rounds reached a cut after opening", opens, rounds)
	}
}

// TestLossFS: what the model keeps and loses (a test of the test).
func TestLossFS(t *testing.T) {
	fs := newLossFS(1, 0)
	f, _ := fs.OpenFile("/d/a", os.O_RDWR|os.O_CREATE, 0)
	f.Write([]byte("synced"))
	f.Sync()
	fs.SyncDir("/d")
	f.Write([]byte(" lost"))
	g, _ := fs.OpenFile("/d/b", os.O_RDWR|os.O_CREATE, 0)
	g.Write([]byte("b"))
	g.Sync() // its directory entry is not synced
	bKept, lostKept := 0, 0
	for seed := range uint64(40) {
		c := fs.crashed(seed)
		b, err := c.ReadFile("/d/a")
		if err != nil || !strings.HasPrefix(string(b), "synced") {
			t.Fatalf("seed %d: a = %q, %v", seed, b, err)
		}
		if string(b) == "synced lost" {
			lostKept++
		}
		if _, err := c.ReadFile("/d/b"); err == nil {
			bKept++
		}
	}
	// Pending writes and directory entries are kept by some cuts, lost
	// by others.
	if bKept == 0 || bKept == 40 || lostKept == 0 || lostKept == 40 {
		t.Errorf("of 40 cuts, %d kept b's entry and %d a's pending write", bKept, lostKept)
	}
	c := newLossFS(1, 3)
	h, _ := c.OpenFile("/d/c", os.O_RDWR|os.O_CREATE, 0) // write 1
	h.Write([]byte("1"))                                 // 2
	if _, err := h.Write([]byte("2")); !errors.Is(err, errPowerCut) {
		t.Fatalf("the third write: %v, want the power cut", err)
	}
}
