package keytable

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// filled returns a table of n keys merged into files (keyOf(0..n-1)),
// and the directory.
func filled(b *testing.B, n int) (*Table, string) {
	b.Helper()
	dir := b.TempDir()
	tb, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 32 << 10
	keys := make([]Key, batch)
	for i := 0; i < n; i += batch {
		m := min(batch, n-i)
		for j := range m {
			keys[j] = keyOf(uint64(i + j))
		}
		if _, err := tb.Add(&Batch{Added: keys[:m]}, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	tb.Close()
	if tb, err = Open(dir, nil); err != nil {
		b.Fatal(err)
	}
	tb.mergeWG.Wait()
	b.Cleanup(func() { tb.Close() })
	return tb, dir
}

// BenchmarkLookup looks keys up one at a time: present ones (in files),
// absent ones (every file searched; the index's filter keeps most away).
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1 << 20} {
		tb, _ := filled(b, n)
		for _, present := range []bool{true, false} {
			b.Run(fmt.Sprintf("n=%d/present=%v", n, present), func(b *testing.B) {
				b.ReportAllocs()
				keys := make([]Key, 1<<16)
				for i := range keys {
					if present {
						keys[i] = keyOf(uint64(i * 13 % n))
					} else {
						keys[i] = keyOf(uint64(n + i))
					}
				}
				for i := 0; b.Loop(); i++ {
					ok, _, _ := tb.Has(&keys[i%len(keys)])
					if ok != present {
						b.Fatal("wrong answer")
					}
				}
			})
		}
	}
}

// BenchmarkLookupBatch looks up a sorted batch of 32,768 present keys
// (per key).
func BenchmarkLookupBatch(b *testing.B) {
	const n = 1 << 20
	tb, _ := filled(b, n)
	keys := make([]Key, 32<<10)
	for i := range keys {
		keys[i] = keyOf(uint64(i * 31 % n))
	}
	slices.SortFunc(keys, compareKeys)
	found := make([]bool, len(keys))
	b.ReportAllocs()
	for b.Loop() {
		tb.HasBatch(keys, found)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
}

// BenchmarkInsert adds batches of 4,096 new keys, each batch synced
// (merges run in the background).
func BenchmarkInsert(b *testing.B) {
	tb, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tb.Close()
	keys := make([]Key, 4096)
	b.ReportAllocs()
	next := uint64(0)
	for b.Loop() {
		for j := range keys {
			keys[j] = keyOf(next)
			next++
		}
		seq, err := tb.Add(&Batch{Added: keys}, nil, nil)
		if err == nil {
			err = tb.SyncTo(seq)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int(next)), "ns/key")
}

// BenchmarkMerge merges a full delta (DefaultDeltaKeys) into a table of 1M
// keys.
func BenchmarkMerge(b *testing.B) {
	tb, _ := filled(b, 1<<20)
	frozen := newDelta(DefaultDeltaKeys)
	for i := range DefaultDeltaKeys {
		frozen.put(new(keyOf(uint64(1<<21+i))), deltaEntry{row: true})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		files := slices.Clone(tb.files)
		srcs := []*source{deltaSource(frozen)}
		for j := len(files) - 1; j >= 0; j-- {
			srcs = append(srcs, fileSource(files[j]))
		}
		if _, err := tb.writeMerged(1<<40, srcs, true, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(1<<20+DefaultDeltaKeys)), "ns/key")
}

// BenchmarkMergeTombstones writes a delta of DefaultDeltaKeys deletes of
// keys in older files into a file of its own (a merge that leaves the
// files alone: the tombstones are written, as a drained frontier's due
// keys are). The bytes allocated a merge are the writer's: it holds the
// tombstones by reference, 8 bytes each.
func BenchmarkMergeTombstones(b *testing.B) {
	tb, _ := filled(b, 1<<20)
	frozen := newDelta(DefaultDeltaKeys)
	for i := range DefaultDeltaKeys {
		frozen.put(new(keyOf(uint64(i))), deltaEntry{})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tb.writeMerged(1<<40, []*source{deltaSource(frozen)}, false, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*DefaultDeltaKeys), "ns/key")
}

// BenchmarkRecovery opens a table whose log holds 262,144 keys in 64
// records (more than a default delta): the replay a crash leaves.
func BenchmarkRecovery(b *testing.B) {
	dir := b.TempDir()
	tb, err := Open(dir, &Options{noMerge: true})
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]Key, 4096)
	for r := range 64 {
		for j := range keys {
			keys[j] = keyOf(uint64(r*4096 + j))
		}
		tb.Add(&Batch{Added: keys}, nil, nil)
	}
	tb.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tb, err := Open(dir, &Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if tb.Len() != 64*4096 {
			b.Fatal("keys lost")
		}
		tb.Close()
	}
}

// sortedKeys returns n ascending keys spread evenly over the key space,
// with random tails (no sort needed for large n).
func sortedKeys(n int, seed uint64) []Key {
	rng := rand.New(rand.NewPCG(seed, 7))
	keys := make([]Key, n)
	step := ^uint64(0) / uint64(n)
	for i := range keys {
		binary.BigEndian.PutUint64(keys[i][:8], uint64(i)*step+rng.Uint64N(step))
		for j := 8; j < KeySize; j += 8 {
			binary.BigEndian.PutUint64(keys[i][j:], rng.Uint64())
		}
	}
	return keys
}

// BenchmarkFindBatch looks up a sorted batch of present keys (a random
// sample of the file's) in one key file, per key, with the coalescing
// thresholds varied: gap (keys read and thrown away to join two buckets'
// reads) and max (the keys of one read).
func BenchmarkFindBatch(b *testing.B) {
	for _, n := range []int{1 << 20, 10 << 20} {
		keys := sortedKeys(n, 1)
		dir := b.TempDir()
		name := filepath.Join(dir, "000001.keys")
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := writeFile(f, uint64(n), entriesOf(keys, nil)); err != nil {
			b.Fatal(err)
		}
		f.Close()
		kf, err := openFile(osFS{}, name, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(2, 3))
		for _, size := range []int{16 << 10} {
			batch := make([]Key, size)
			for i := range batch {
				batch[i] = keys[rng.IntN(n)]
			}
			slices.SortFunc(batch, compareKeys)
			pending := make([]int, size)
			var lb lookupBufs
			for _, gap := range []int{0, 256, 1024, 4096} {
				for _, maxRead := range []int{4096, 16384} {
					kf.gap, kf.maxRead = gap, maxRead
					b.Run(fmt.Sprintf("n=%d/batch=%d/gap=%d/max=%d", n, size, gap, maxRead), func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							for i := range pending {
								pending[i] = i
							}
							var err error
							if _, err = kf.findBatch(batch, pending, &lb, func(int, int, []byte) {}); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/key")
					})
				}
			}
		}
		kf.close()
		os.Remove(name)
	}
}

// BenchmarkScanPrefix scans 64-bit prefixes (a frontier queue's due
// order) of a table of 1M keys in files and 40k in its delta: the cost a
// scan pays for the delta, which it copies and sorts.
func BenchmarkScanPrefix(b *testing.B) {
	const n, inDelta = 1 << 20, 40 << 10
	tb, _ := filled(b, n)
	keys := make([]Key, inDelta)
	for i := range keys {
		keys[i] = keyOf(uint64(n + i))
	}
	if _, err := tb.Add(&Batch{Added: keys}, nil, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := keys[i%len(keys)]
		found := 0
		if err := tb.Scan(k[:8], 64, func(*Key) error { found++; return nil }); err != nil {
			b.Fatal(err)
		}
		if found == 0 {
			b.Fatal("scan of a stored key's prefix found nothing")
		}
	}
}

// BenchmarkFindQueued looks up sorted batches in a key file of 1M keys
// in groups of 100 that share their leading 8 bytes (a frontier's queues:
// queue[8] due[8] uid[16]), 64 at a time: present keys, and absent keys
// of the same queues (the due keys a put adds), with and without the file's
// fingerprints. It reports the reads a key.
func BenchmarkFindQueued(b *testing.B) {
	const n, perQueue, size = 1 << 20, 100, 64 // a put of a page's outlinks
	rng := rand.New(rand.NewPCG(4, 5))
	queueKey := func(q uint64) Key {
		var k Key
		binary.BigEndian.PutUint64(k[:], q*0x9e3779b97f4a7c15)
		for j := 8; j < KeySize; j += 8 {
			binary.BigEndian.PutUint64(k[j:], rng.Uint64())
		}
		return k
	}
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = queueKey(uint64(i / perQueue))
	}
	slices.SortFunc(keys, compareKeys)
	var reads int
	for _, withFP := range []bool{false, true} {
		kf := writeTestFile(b, b.TempDir(), keys, nil, withFP, &reads)
		for _, present := range []bool{true, false} {
			batch := make([]Key, size)
			for i := range batch {
				if present {
					batch[i] = keys[rng.IntN(n)]
				} else {
					batch[i] = queueKey(uint64(rng.IntN(n / perQueue)))
				}
			}
			slices.SortFunc(batch, compareKeys)
			pending := make([]int, size)
			var lb lookupBufs
			b.Run(fmt.Sprintf("fingerprints=%v/present=%v", withFP, present), func(b *testing.B) {
				reads = 0
				for b.Loop() {
					for i := range pending {
						pending[i] = i
					}
					if _, err := kf.findBatch(batch, pending, &lb, func(int, int, []byte) {}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/key")
				b.ReportMetric(float64(reads)/float64(b.N*size), "reads/key")
			})
		}
	}
}
