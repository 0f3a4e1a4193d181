package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/internal/corpus"
	"github.com/urlhash/urlhash/store"
)

// benchN is the index size for BenchmarkIndex: URLHASH_BENCH_N, default 1M.
func benchN(b *testing.B) int {
	if s := os.Getenv("URLHASH_BENCH_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("URLHASH_BENCH_N=%q: want an integer >= 1000", s)
		}
		return n
	}
	return 1_000_000
}

// plainDB is the comparison program: Badger with default options, loaded
// with a WriteBatch, read with txn.Get per key.
type plainDB struct{ db *badger.DB }

func openPlain(b *testing.B, dir string) *plainDB {
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		b.Fatal(err)
	}
	return &plainDB{db}
}

func (p *plainDB) load(hs []hashkey.Hash) {
	wb := p.db.NewWriteBatch()
	for i := range hs {
		if err := wb.Set(slices.Clone(hs[i][:]), nil); err != nil {
			panic(err)
		}
	}
	if err := wb.Flush(); err != nil {
		panic(err)
	}
	if err := p.db.Sync(); err != nil {
		panic(err)
	}
}

func (p *plainDB) has(h hashkey.Hash) bool {
	var ok bool
	p.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(h[:])
		ok = err == nil
		return nil
	})
	return ok
}

func (p *plainDB) addIfAbsent(h hashkey.Hash) bool {
	var added bool
	err := p.db.Update(func(txn *badger.Txn) error {
		_, err := txn.Get(h[:])
		if err == nil {
			return nil
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		added = true
		return txn.Set(slices.Clone(h[:]), nil)
	})
	if err != nil {
		panic(err)
	}
	return added
}

// benchStores keeps at most one of the two benchmark stores open.
type benchStores struct {
	dir   string
	ours  *DB
	plain *plainDB
}

func (st *benchStores) useOurs(b *testing.B) *DB {
	if st.plain != nil {
		st.plain.db.Close()
		st.plain = nil
	}
	if st.ours == nil {
		// URLHASH_BENCH_NOCHECK=1 turns block checksums off, to measure
		// their cost; URLHASH_BENCH_WARM=1 verifies every table at Open,
		// to measure lookups once the lazy verification is done (else the
		// first lookups the filter lets through, and the first write, pay
		// for it).
		db, err := Open(st.dir+"/ours", &Options{noBlockChecksums: os.Getenv("URLHASH_BENCH_NOCHECK") == "1"})
		if err != nil {
			b.Fatal(err)
		}
		if os.Getenv("URLHASH_BENCH_WARM") == "1" {
			if err := db.prepareWrite(); err != nil {
				b.Fatal(err)
			}
		}
		st.ours = db
	}
	return st.ours
}

func (st *benchStores) usePlain(b *testing.B) *plainDB {
	if st.ours != nil {
		st.ours.Close()
		st.ours = nil
	}
	if st.plain == nil {
		st.plain = openPlain(b, st.dir+"/plain")
	}
	return st.plain
}

func (st *benchStores) close() {
	if st.ours != nil {
		st.ours.Close()
		st.ours = nil
	}
	if st.plain != nil {
		st.plain.db.Close()
		st.plain = nil
	}
}

// BenchmarkIndex compares the index with plain Badger on the same keys in
// the same run. Sub-benchmarks report ns per key for each side and a
// "x-plain" ratio metric (plain time / ours: above 1 means faster).
func BenchmarkIndex(b *testing.B) {
	ctx := context.Background()
	n := benchN(b)
	r := rand.New(rand.NewPCG(21, 22))
	all := randHashes(r, n+200_000)
	keys, absent, extra := all[:n], all[n:n+100_000], all[n+100_000:]
	tmp := b.TempDir()

	// Bulk load into empty stores: Open, load, Close (the whole import
	// process, without reading input).
	var oursLoad, plainLoad time.Duration
	var oursDisk, plainDisk int64
	{
		t0 := time.Now()
		db, err := Open(tmp+"/ours", nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Load(ctx, slices.Values(entriesOf(keys))); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		oursLoad = time.Since(t0)
		t0 = time.Now()
		p := openPlain(b, tmp+"/plain")
		p.load(keys)
		p.db.Close()
		plainLoad = time.Since(t0)
		_, _, oursDisk, _ = dirBytes(tmp + "/ours")
		_, _, plainDisk, _ = dirBytes(tmp + "/plain")
	}
	// Only one store is open at a time, so that one's background work
	// (plain Badger compacts for a long while after a WriteBatch import)
	// does not slow the other's measurements.
	st := &benchStores{dir: tmp}
	b.Cleanup(st.close)
	b.Run("load", func(b *testing.B) {
		b.ReportMetric(float64(n)/oursLoad.Seconds(), "keys/s")
		b.ReportMetric(float64(n)/plainLoad.Seconds(), "plain-keys/s")
		b.ReportMetric(plainLoad.Seconds()/oursLoad.Seconds(), "x-plain")
		b.ReportMetric(float64(oursDisk)/float64(n), "disk-B/entry")
		b.ReportMetric(float64(plainDisk)/float64(n), "plain-disk-B/entry")
	})
	b.Run("filter", func(b *testing.B) {
		ours := st.useOurs(b)
		s, err := ours.DetailedStats(ctx)
		if err != nil {
			b.Fatal(err)
		}
		hits := 0
		probe := all[n : n+100_000]
		ours.waitFilter()
		ours.fmu.RLock()
		for i := range probe {
			if ours.f.MayHaveFull(&probe[i]) {
				hits++
			}
		}
		ours.fmu.RUnlock()
		b.ReportMetric(float64(s.FilterBytes)/float64(n), "filter-B/entry")
		b.ReportMetric(float64(s.FilterMemBytes)/float64(n), "filter-mem-B/entry")
		b.ReportMetric(100*float64(hits)/float64(len(probe)), "FP-%")
		b.ReportMetric(float64(s.FilterBits), "k")
	})

	for _, tc := range []struct {
		name  string
		probe []hashkey.Hash
	}{{"has-absent", absent}, {"has-present", keys}} {
		var oursNs, plainNs float64
		b.Run(tc.name+"/ours", func(b *testing.B) {
			ours := st.useOurs(b)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := ours.Has(ctx, tc.probe[i%len(tc.probe)]); err != nil {
					b.Fatal(err)
				}
				i += 7919
			}
			oursNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(tc.name+"/plain", func(b *testing.B) {
			plain := st.usePlain(b)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				plain.has(tc.probe[i%len(tc.probe)])
				i += 7919
			}
			plainNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(plainNs/oursNs, "x-plain")
		})
	}

	// A sorted batch of 1000 present keys.
	const batch = 1000
	batches := make([][]hashkey.Hash, 64)
	for j := range batches {
		bt := make([]hashkey.Hash, batch)
		for i := range bt {
			bt[i] = keys[r.IntN(n)]
		}
		slices.SortFunc(bt, func(a, b hashkey.Hash) int { return bytes.Compare(a[:], b[:]) })
		batches[j] = bt
	}
	var oursBatch float64
	b.Run("hasbatch-1000-present/ours", func(b *testing.B) {
		ours := st.useOurs(b)
		b.ReportAllocs()
		j := 0
		for b.Loop() {
			got, err := ours.HasBatch(ctx, batches[j%len(batches)])
			if err != nil || !got[0] {
				b.Fatal("HasBatch", err)
			}
			j++
		}
		oursBatch = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(oursBatch/batch, "ns/key")
	})
	b.Run("hasbatch-1000-present/plain", func(b *testing.B) {
		plain := st.usePlain(b)
		b.ReportAllocs()
		j := 0
		for b.Loop() {
			bt := batches[j%len(batches)]
			plain.db.View(func(txn *badger.Txn) error {
				for i := range bt {
					if _, err := txn.Get(bt[i][:]); err != nil {
						b.Fatal(err)
					}
				}
				return nil
			})
			j++
		}
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns/batch, "ns/key")
		b.ReportMetric(ns/oursBatch, "x-plain")
	})

	// Scan of a 12-bit (3 hex digit) prefix: about n/4096 entries.
	var oursScan float64
	b.Run("scan-3hex/ours", func(b *testing.B) {
		ours := st.useOurs(b)
		j, seen := 0, 0
		for b.Loop() {
			p := keys[j%n][:2]
			if err := ours.Scan(ctx, p, 12, 0, func(store.Entry) error { seen++; return nil }); err != nil {
				b.Fatal(err)
			}
			j += 7919
		}
		oursScan = float64(b.Elapsed().Nanoseconds()) / float64(seen)
		b.ReportMetric(oursScan, "ns/entry")
	})
	b.Run("scan-3hex/plain", func(b *testing.B) {
		plain := st.usePlain(b)
		j, seen := 0, 0
		for b.Loop() {
			p := keys[j%n]
			plain.db.View(func(txn *badger.Txn) error {
				it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: p[:1]})
				defer it.Close()
				for it.Seek([]byte{p[0], p[1] & 0xf0}); it.Valid(); it.Next() {
					if it.Item().Key()[1]&0xf0 != p[1]&0xf0 {
						break
					}
					seen++
				}
				return nil
			})
			j += 7919
		}
		ns := float64(b.Elapsed().Nanoseconds()) / float64(seen)
		b.ReportMetric(ns, "ns/entry")
		b.ReportMetric(ns/oursScan, "x-plain")
	})

	// Add-if-absent of new keys (each b.N iteration adds a fresh key).
	var oursAdd float64
	b.Run("addifabsent/ours", func(b *testing.B) {
		ours := st.useOurs(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			h := extra[i%len(extra)]
			freshen(&h, i/len(extra))
			if _, err := ours.Add(ctx, h, store.Value{}); err != nil {
				b.Fatal(err)
			}
			i++
		}
		oursAdd = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(1e9/oursAdd, "keys/s")
	})
	b.Run("addifabsent/plain", func(b *testing.B) {
		plain := st.usePlain(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			h := extra[i%len(extra)]
			freshen(&h, i/len(extra))
			plain.addIfAbsent(h)
			i++
		}
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(1e9/ns, "keys/s")
		b.ReportMetric(ns/oursAdd, "x-plain")
	})

	// Bulk load of 100k keys into the non-empty stores.
	// Bulk load of 100k new keys into the non-empty stores, twice: right
	// after this process's own writes (the index must flush and flatten
	// first; plain Badger has just been reopened), then after a reopen
	// of both (an import command's case).
	for _, reopen := range []bool{false, true} {
		var done bool
		var o, p time.Duration
		more := randHashes(rand.New(rand.NewPCG(31, uint64(len(b.Name())+btoi(reopen)))), 100_000)
		name := "load-nonempty-100k/after-writes"
		if reopen {
			name = "load-nonempty-100k/after-reopen"
		}
		b.Run(name, func(b *testing.B) {
			if !done { // once, whatever b.N
				done = true
				if reopen {
					st.close()
				}
				ours := st.useOurs(b)
				t0 := time.Now()
				if _, err := ours.Load(ctx, slices.Values(entriesOf(more))); err != nil {
					b.Fatal(err)
				}
				o = time.Since(t0)
				plain := st.usePlain(b)
				t0 = time.Now()
				plain.load(more)
				p = time.Since(t0)
			}
			b.ReportMetric(float64(len(more))/o.Seconds(), "keys/s")
			b.ReportMetric(float64(len(more))/p.Seconds(), "plain-keys/s")
			b.ReportMetric(p.Seconds()/o.Seconds(), "x-plain")
			b.ReportMetric(float64(maxRSS())/(1<<20), "process-maxRSS-MiB")
		})
	}
}

// freshen makes the round-th reuse of a key a new random-looking key, its
// leading bytes changed so the filter does not already cover it.
func freshen(h *hashkey.Hash, round int) {
	if round == 0 {
		return
	}
	x := hashkey.Sum(append(h[:], byte(round), byte(round>>8)))
	copy(h[:8], x[:8])
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// BenchmarkDiskOptions loads the same keys (URLHASH_BENCH_N/4) with Badger
// table variants and reports disk bytes per entry and the cost of a
// present-key Has for each.
func BenchmarkDiskOptions(b *testing.B) {
	ctx := context.Background()
	n := benchN(b) / 4
	keys := randHashes(rand.New(rand.NewPCG(41, 42)), n)
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"none (default)", Options{Compression: "none"}},
		{"none-nobloom", Options{Compression: "none", Badger: func() *badger.Options {
			d := (&Options{}).withDefaults()
			bo := d.badgerOptions("")
			bo.BloomFalsePositive = 0
			return &bo
		}()}},
		{"snappy", Options{Compression: "snappy"}},
		{"zstd1", Options{Compression: "zstd"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			o := &tc.opts
			db, err := Open(dir, o)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Load(ctx, slices.Values(entriesOf(keys))); err != nil {
				b.Fatal(err)
			}
			db.Close()
			_, _, disk, _ := dirBytes(dir)
			db, err = Open(dir, o)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			i := 0
			for b.Loop() {
				if ok, _ := db.Has(ctx, keys[i%n]); !ok {
					b.Fatal("missing")
				}
				i += 7919
			}
			b.ReportMetric(float64(disk)/float64(n), "disk-B/entry")
		})
	}
}

// BenchmarkBlockChecksums measures what verifying block checksums on read
// (Badger's OnBlockRead, always on) costs lookups, on the same index with
// and without it, in one process: a 250k-key index (URLHASH_BENCH_N/4),
// with the default block cache and with a 1 MiB one (most reads miss it
// and load, decompress and verify a block).
func BenchmarkBlockChecksums(b *testing.B) {
	ctx := context.Background()
	n := benchN(b) / 4
	keys := randHashes(rand.New(rand.NewPCG(43, 44)), n)
	dir := b.TempDir()
	db, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Load(ctx, slices.Values(entriesOf(keys))); err != nil {
		b.Fatal(err)
	}
	db.Close()
	batch := make([]hashkey.Hash, 1000)
	for _, cache := range []int64{0, 1 << 20} {
		for _, check := range []bool{true, false} {
			name := "checksums"
			if !check {
				name = "no-checksums"
			}
			if cache > 0 {
				name += "/cache-1MiB"
			}
			b.Run(name, func(b *testing.B) {
				db, err := Open(dir, &Options{ReadOnly: true, BlockCacheSize: cache, noBlockChecksums: !check})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				b.Run("get-present", func(b *testing.B) {
					i := 0
					for b.Loop() {
						if _, err := db.Get(ctx, keys[i%n]); err != nil {
							b.Fatal(err)
						}
						i += 7919
					}
				})
				b.Run("hasbatch-1000", func(b *testing.B) {
					i := 0
					for b.Loop() {
						for j := range batch {
							batch[j] = keys[(i+j*7919)%n]
						}
						if _, err := db.HasBatch(ctx, batch); err != nil {
							b.Fatal(err)
						}
						i++
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/key")
				})
			})
		}
	}
}

// BenchmarkLoad measures Load alone: URLHASH_BENCH_N keys generated as
// they are yielded (no input held in memory), into a new index with the
// default LoadMemory (spilled: runs on disk) and with a budget that
// holds them all (one chunk), plus the same load into an index holding
// them (every key present: the existence pass). It reports keys/s and the
// process's peak RSS, which at 10M keys and more is the load's own.
// The urls case loads entries with URL text (import --store-url): URLs
// derived from the corpus as go run ./bench derives them, held in memory
// (in the RSS) before the first run.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	n := benchN(b)
	var urls []string
	gen := func(yield func(store.Entry) bool) {
		r := rand.New(rand.NewPCG(61, 62))
		var e store.Entry
		for i := range n {
			for i := 0; i < hashkey.Size; i += 8 {
				binary.LittleEndian.PutUint64(e.Hash[i:], r.Uint64())
			}
			if urls != nil {
				e.Value.Text = []byte(urls[i])
			}
			if !yield(e) {
				return
			}
		}
	}
	for _, tc := range []struct {
		name   string
		budget int64
		again  bool
		urls   bool
	}{
		{name: "new/default-memory"},
		{name: "new/one-chunk", budget: int64(n) * 2 * hashkey.Size},
		{name: "present/default-memory", again: true},
		{name: "new/urls/default-memory", urls: true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			urls = nil
			if tc.urls {
				base, err := corpus.ReadLines("../../shared/corpus/debian-package-urls.txt")
				if err != nil {
					b.Skipf("no corpus: %v", err)
				}
				urls = corpus.Derive(base, n, corpus.Seed)
			}
			var total time.Duration
			for range b.N {
				dir := b.TempDir()
				opts := &Options{LoadMemory: tc.budget}
				if tc.again {
					db := mustOpen(b, dir, opts)
					if _, err := db.Load(ctx, gen); err != nil {
						b.Fatal(err)
					}
					db.Close()
				}
				t0 := time.Now()
				db := mustOpen(b, dir, opts)
				res, err := db.Load(ctx, gen)
				if err == nil {
					err = db.Close()
				}
				total += time.Since(t0)
				if err != nil || res.Added+res.Present != int64(n) {
					b.Fatalf("Load = %+v, %v", res, err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "keys/s")
			b.ReportMetric(float64(maxRSS())/(1<<20), "process-maxRSS-MiB")
		})
	}
}
