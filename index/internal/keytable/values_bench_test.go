package keytable

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// The benchmarks of entries with columns and values. go test -bench
// 'Cols|Values|Revisit|Ingest|Badger' -run '^$' ./index/internal/keytable
// (URLHASH_KT_BENCH_N sets the entries, default 1M).

func benchEntries(b *testing.B) int {
	if s := os.Getenv("URLHASH_KT_BENCH_N"); s != "" {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1000 {
			b.Fatalf("URLHASH_KT_BENCH_N=%q: want an integer >= 1000", s)
		}
		return n
	}
	return 1 << 20
}

// benchURLs returns n URLs derived from the Debian corpus (as its README
// suggests: each a corpus URL with, for most, a path segment and a query
// of fixed-seed choices), keyed by their SHA-256, sorted by key.
func benchURLs(b *testing.B, n int) (keys []Key, urls [][]byte) {
	b.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "..", "shared", "corpus", "debian-package-urls.txt"))
	if err != nil {
		b.Skipf("no corpus: %v", err)
	}
	defer f.Close()
	var base []string
	words := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		u := sc.Text()
		base = append(base, u)
		for _, w := range strings.Split(u, "/")[3:] {
			if len(w) > 2 && len(w) < 16 {
				words[w] = true
			}
		}
	}
	vocab := slices.Sorted(func(yield func(string) bool) {
		for w := range words {
			if !yield(w) {
				return
			}
		}
	})
	rng := rand.New(rand.NewPCG(42, 42))
	type kv struct {
		k Key
		u []byte
	}
	seen := map[Key]bool{}
	all := make([]kv, 0, n)
	for len(all) < n {
		u := base[rng.IntN(len(base))]
		switch rng.IntN(4) {
		case 0:
		case 1:
			u = strings.TrimSuffix(u, "/") + "/" + vocab[rng.IntN(len(vocab))]
		case 2:
			u = strings.TrimSuffix(u, "/") + "/" + vocab[rng.IntN(len(vocab))] + "/" + vocab[rng.IntN(len(vocab))]
		default:
			u = strings.TrimSuffix(u, "/") + "/" + vocab[rng.IntN(len(vocab))] + "?page=" + fmt.Sprint(rng.IntN(100))
		}
		k := sha256.Sum256([]byte(u))
		if seen[k] {
			continue
		}
		seen[k] = true
		all = append(all, kv{k, []byte(u)})
	}
	slices.SortFunc(all, func(a, b kv) int { return compareKeys(a.k, b.k) })
	keys = make([]Key, n)
	urls = make([][]byte, n)
	for i := range all {
		keys[i], urls[i] = all[i].k, all[i].u
	}
	return keys, urls
}

var benchURLsOnce struct {
	sync.Once
	keys []Key
	urls [][]byte
}

func sharedURLs(b *testing.B) ([]Key, [][]byte) {
	n := benchEntries(b)
	benchURLsOnce.Do(func() { benchURLsOnce.keys, benchURLsOnce.urls = benchURLs(b, n) })
	if benchURLsOnce.keys == nil {
		b.Skip("no corpus")
	}
	return benchURLsOnce.keys, benchURLsOnce.urls
}

// ingested returns a table of the sorted keys ingested with the columns
// cols(i) and, with values, urls[i]; and its directory.
func ingested(b *testing.B, keys []Key, cols func(i int) Cols, urls [][]byte) (*Table, string) {
	b.Helper()
	dir := b.TempDir()
	tb, err := Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	o := &IngestOptions{Keys: uint64(len(keys)), Values: urls != nil}
	if cols != nil {
		var r colRange
		for i := range keys {
			c := cols(i)
			r.add(&c)
		}
		for i, cr := range []*ColRange{&o.First, &o.Last, &o.Expires} {
			if r.max[i] != 0 {
				*cr = ColRange{r.min[i], r.max[i]}
			}
		}
	}
	in, err := tb.NewIngestOf(o)
	if err != nil {
		b.Fatal(err)
	}
	for i := range keys {
		s := Set{Key: keys[i]}
		if cols != nil {
			s.Cols = cols(i)
		}
		if urls != nil {
			s.Value = urls[i]
		}
		if _, err := in.Put(&s); err != nil {
			b.Fatal(err)
		}
	}
	if err := in.Commit(); err != nil {
		b.Fatal(err)
	}
	tb.Close()
	if tb, err = Open(dir, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tb.Close() })
	// The fingerprints, as a merge leaves them (a file opened from disk
	// gets them once lookups have touched it enough).
	for _, f := range tb.files {
		f.buildFingerprints(new(atomic.Bool))
	}
	return tb, dir
}

// seenCols are the times of a crawl's entries: first seen within a year,
// last seen since.
func seenCols(i int) Cols {
	first := int64(1_700_000_000 + (i*7919)%31_536_000)
	return Cols{First: first, Last: first + int64(i%86_400)}
}

// dirBytes returns the bytes of dir's files.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	es, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		n += fi.Size()
	}
	return n
}

// BenchmarkIngest writes a table by Ingest: key-only entries, entries with
// first and last seen, entries with URL text; it reports the bytes on
// disk a key (a table of URLs also its text's bytes, and the share of
// them the table adds beyond 32 bytes a key: the goal is at most 0.6).
func BenchmarkIngest(b *testing.B) {
	keys, urls := sharedURLs(b)
	text := 0
	for _, u := range urls {
		text += len(u)
	}
	for _, tc := range []struct {
		name string
		cols func(int) Cols
		urls [][]byte
	}{{"keys", nil, nil}, {"seen", seenCols, nil}, {"urls", nil, urls}, {"seen+urls", seenCols, urls}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var size int64
			for b.Loop() {
				_, dir := ingested(b, keys, tc.cols, tc.urls)
				size = dirBytes(b, dir)
			}
			n := float64(len(keys))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
			b.ReportMetric(float64(size)/n, "B/entry")
			if tc.urls != nil {
				b.ReportMetric(float64(text)/n, "text-B/entry")
				b.ReportMetric((float64(size)-32*n)/float64(text), "(B-32)/text")
			}
		})
	}
}

// BenchmarkLookupCols looks up present and absent keys, one at a time and
// in sorted batches of 32,768, in a table of key-only entries and in one
// of entries with first and last seen (read with their key).
func BenchmarkLookupCols(b *testing.B) {
	keys, _ := sharedURLs(b)
	n := len(keys)
	absent := make([]Key, 1<<15)
	for i := range absent {
		absent[i] = keyOf(uint64(1<<40 + i))
	}
	slices.SortFunc(absent, compareKeys)
	for _, tc := range []struct {
		name string
		cols func(int) Cols
	}{{"keys", nil}, {"seen", seenCols}} {
		tb, _ := ingested(b, keys, tc.cols, nil)
		present := make([]Key, 1<<15)
		rng := rand.New(rand.NewPCG(3, 3))
		for i := range present {
			present[i] = keys[rng.IntN(n)]
		}
		sortedPresent := slices.Clone(present)
		slices.SortFunc(sortedPresent, compareKeys)
		for _, p := range []bool{true, false} {
			ks := present
			if !p {
				ks = absent
			}
			b.Run(fmt.Sprintf("%s/single/present=%v", tc.name, p), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					fd, _, err := tb.Get(&ks[i%len(ks)], nil, false)
					if err != nil || fd.Live != p {
						b.Fatal("wrong answer", err)
					}
				}
			})
			sk := sortedPresent
			if !p {
				sk = absent
			}
			b.Run(fmt.Sprintf("%s/batch/present=%v", tc.name, p), func(b *testing.B) {
				b.ReportAllocs()
				found := make([]Found, len(sk))
				for b.Loop() {
					if _, err := tb.GetBatch(sk, found, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sk)), "ns/key")
			})
			b.Run(fmt.Sprintf("%s/hasbatch/present=%v", tc.name, p), func(b *testing.B) {
				b.ReportAllocs()
				found := make([]bool, len(sk))
				for b.Loop() {
					if _, err := tb.HasBatch(sk, found); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sk)), "ns/key")
			})
		}
	}
}

// BenchmarkValues reads URL text back: single Gets of random present keys
// (through the block cache), and one sorted GetBatch of half the table's
// keys (each value block read and decoded once), per key; beside it
// BenchmarkBadgerGet, the plain Badger program.
func BenchmarkValues(b *testing.B) {
	keys, urls := sharedURLs(b)
	tb, _ := ingested(b, keys, nil, urls)
	n := len(keys)
	rng := rand.New(rand.NewPCG(5, 5))
	b.Run("single", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			i := rng.IntN(n)
			fd, v, err := tb.Get(&keys[i], buf[:0], true)
			if err != nil || !fd.Live || string(v) != string(urls[i]) {
				b.Fatal("wrong value", err)
			}
			buf = v
		}
	})
	half := make([]Key, 0, n/2)
	idx := make([]int, 0, n/2)
	for i := 0; i < n; i += 2 {
		half = append(half, keys[i])
		idx = append(idx, i)
	}
	b.Run("sorted-batch", func(b *testing.B) {
		b.ReportAllocs()
		found := make([]Found, len(half))
		for b.Loop() {
			if _, err := tb.GetBatch(half, found, func(i int, v []byte) error {
				if len(v) != len(urls[idx[i]]) {
					b.Fatal("wrong value")
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(half)), "ns/key")
	})
}

// BenchmarkBadgerGet is the plain Badger program the issue compares with:
// hash → URL loaded with a WriteBatch, read with txn.Get per key (sorted
// keys, half the table), per key.
func BenchmarkBadgerGet(b *testing.B) {
	keys, urls := sharedURLs(b)
	db := loadBadger(b, b.TempDir(), keys, urls)
	defer db.Close()
	b.ReportAllocs()
	var m int
	for b.Loop() {
		for i := 0; i < len(keys); i += 2 {
			if err := db.View(func(txn *badger.Txn) error {
				it, err := txn.Get(keys[i][:])
				if err != nil {
					return err
				}
				v, err := it.ValueCopy(nil)
				m += len(v)
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)/2), "ns/key")
}

// loadBadger opens a Badger database in dir (default options) and loads
// keys → urls with a WriteBatch, synced: the plain program.
func loadBadger(b *testing.B, dir string, keys []Key, urls [][]byte) *badger.DB {
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		b.Fatal(err)
	}
	wb := db.NewWriteBatch()
	for i := range keys {
		if err := wb.Set(slices.Clone(keys[i][:]), urls[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := wb.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := db.Sync(); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkBadgerLoad is the plain Badger program the issue compares
// Ingest of URLs with: hash → URL written with a WriteBatch and synced,
// per entry, and its bytes on disk per entry.
func BenchmarkBadgerLoad(b *testing.B) {
	keys, urls := sharedURLs(b)
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		dir := b.TempDir()
		if err := loadBadger(b, dir, keys, urls).Close(); err != nil {
			b.Fatal(err)
		}
		size = dirBytes(b, dir)
	}
	n := float64(len(keys))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
	b.ReportMetric(float64(size)/n, "B/entry")
}

// BenchmarkRevisit is the work of a revisit batch against the dedupe
// batch of a seen-set, per key, on 1M entries: "keys" looks a sorted batch
// of 4,096 keys up (a quarter new) and adds the new ones; "seen" looks the
// same batch up with its columns, decides which are due (last seen a day
// or more ago: half the old ones) and writes them with a new last seen
// (KeepValue), the new ones with both times. Each batch is synced (group
// commit of one writer).
func BenchmarkRevisit(b *testing.B) {
	keys, _ := sharedURLs(b)
	n := len(keys)
	for _, tc := range []struct {
		name string
		cols func(int) Cols
	}{{"keys", nil}, {"seen", seenCols}} {
		b.Run(tc.name, func(b *testing.B) {
			tb, _ := ingested(b, keys, tc.cols, nil)
			rng := rand.New(rand.NewPCG(9, 9))
			batch := make([]Key, 4096)
			hits := make([]bool, len(batch))
			found := make([]Found, len(batch))
			next := uint64(1 << 40)
			now := int64(1_800_000_000)
			b.ReportAllocs()
			for b.Loop() {
				for i := range batch {
					if i%4 == 0 {
						batch[i] = keyOf(next)
						next++
					} else {
						batch[i] = keys[rng.IntN(n)]
					}
				}
				slices.SortFunc(batch, compareKeys)
				batch = slices.Compact(batch)
				var w Batch
				if tc.cols == nil {
					if _, err := tb.HasBatch(batch, hits[:len(batch)]); err != nil {
						b.Fatal(err)
					}
					for i, ok := range hits[:len(batch)] {
						if !ok {
							w.Added = append(w.Added, batch[i])
						}
					}
				} else {
					if _, err := tb.GetBatch(batch, found[:len(batch)], nil); err != nil {
						b.Fatal(err)
					}
					for i, fd := range found[:len(batch)] {
						switch {
						case !fd.Live:
							w.Set = append(w.Set, Set{Key: batch[i], Cols: Cols{First: now, Last: now}})
						case fd.Cols.Last%2 == 0: // due
							w.Set = append(w.Set, Set{Key: batch[i], Cols: Cols{First: fd.Cols.First, Last: now}, KeepValue: true})
						}
					}
				}
				seq, err := tb.Write(&w, nil)
				if err == nil {
					err = tb.SyncTo(seq)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/key")
		})
	}
}

// BenchmarkMergeValues merges a full default delta into a table of 1M
// entries: key-only, with first and last seen, with URL text (rewritten
// by the merge), per key written.
func BenchmarkMergeValues(b *testing.B) {
	keys, urls := sharedURLs(b)
	for _, tc := range []struct {
		name string
		cols func(int) Cols
		urls [][]byte
	}{{"keys", nil, nil}, {"seen", seenCols, nil}, {"urls", nil, urls}} {
		b.Run(tc.name, func(b *testing.B) {
			tb, _ := ingested(b, keys, tc.cols, tc.urls)
			frozen := newDelta(DefaultDeltaKeys)
			for i := range DefaultDeltaKeys {
				e := deltaEntry{row: true}
				if tc.cols != nil {
					e.cols = seenCols(i)
				}
				if tc.urls != nil {
					e.val.b = urls[i%len(urls)]
				}
				frozen.put(new(keyOf(uint64(1<<21+i))), e)
			}
			b.ReportAllocs()
			for b.Loop() {
				srcs := []*source{deltaSource(frozen)}
				for j := len(tb.files) - 1; j >= 0; j-- {
					srcs = append(srcs, fileSource(tb.files[j]))
				}
				w, err := tb.writeMerged(1<<40, srcs, true, 0)
				if err != nil || w.empty {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(len(keys)+DefaultDeltaKeys)), "ns/key")
		})
	}
}

// BenchmarkScanValues scans every entry with its value of a table written
// in 64 deltas of 4,096 URLs, so that its file holds its values in many
// runs (as a frontier's queue entries are): each block is decoded once a
// window of the scan.
func BenchmarkScanValues(b *testing.B) {
	const runs, perRun = 64, 4096
	tb := openTest(b, b.TempDir(), &Options{DeltaKeys: perRun})
	writeRuns(b, tb, 0, runs, perRun, nil)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := tb.ScanEntries(nil, 0, ScanOptions{Values: true}, func(e *Entry) error {
			n += len(e.Value)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatal("no values scanned")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*runs*perRun), "ns/entry")
}
