package keytable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/urlhash/urlhash/index/internal/valuefile"
)

// TestIngestEntries: an ingest of entries with columns and values over a
// table that holds some of their keys (live, expired, deleted) replaces
// their records, reports them, and keeps the count; the values are read
// back by every path, and survive a reopening and a merge.
func TestIngestEntries(t *testing.T) {
	dir := t.TempDir()
	now := int64(3000) // until they are in files
	tb := openTest(t, dir, &Options{DeltaKeys: 50, Now: func() int64 { return now }})
	// Below: 0..99 key-only; 100..109 expired at 4000; 5 deleted.
	var below Batch
	for i := range 100 {
		below.Added = append(below.Added, keyOf(uint64(i)))
	}
	for i := 100; i < 110; i++ {
		below.Set = append(below.Set, Set{Key: keyOf(uint64(i)), Cols: Cols{Expires: 4000}})
	}
	if _, err := tb.Write(&below, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Add(&Batch{Deleted: []Key{keyOf(5)}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	// In files before they expire (NewIngestOf merges the delta first,
	// which would drop them).
	waitMerges(tb)
	now = 5000
	// The ingest: 0..9 (over live ones and the deleted 5), 100..104 (over
	// expired ones) and 1000..1999 (new).
	var sets []Set
	for _, i := range slices.Concat(seq(0, 10), seq(100, 105), seq(1000, 2000)) {
		s := Set{Key: keyOf(uint64(i)), Cols: Cols{First: int64(1000 + i), Last: int64(2000 + i)}}
		if i%3 != 0 {
			s.Value = fmt.Appendf(nil, "https://example.org/ingested/%d", i)
		}
		sets = append(sets, s)
	}
	slices.SortFunc(sets, func(a, b Set) int { return compareKeys(a.Key, b.Key) })
	in, err := tb.NewIngestOf(&IngestOptions{Keys: uint64(len(sets)), First: ColRange{1000, 3000}, Last: ColRange{2000, 4000}, Values: true})
	if err != nil {
		t.Fatal(err)
	}
	removed := map[int64]int{}
	live := 0
	for i := range sets {
		p, err := in.Put(&sets[i])
		if err != nil {
			t.Fatal(err)
		}
		if p.Removed {
			removed[p.Expires]++
		}
		if p.Live {
			live++
		}
	}
	if _, err := in.Put(&sets[0]); err == nil {
		t.Fatal("a key out of order was accepted")
	}
	if err := in.Commit(); err != nil {
		t.Fatal(err)
	}
	// 9 live ones (5 was deleted) and 5 expired ones replaced.
	if live != 9 || removed[0] != 9 || removed[4000] != 5 {
		t.Fatalf("ingest reported %d live, removed %v", live, removed)
	}
	// Records: 99 + 10 (5 of them expired) - 14 replaced + 1,015 put.
	if got := tb.Len(); got != 99+10-14+1015 {
		t.Fatalf("Len = %d", got)
	}
	check := func() {
		t.Helper()
		for _, s := range sets {
			fd, v, err := tb.Get(&s.Key, nil, true)
			if err != nil || !fd.Live || fd.Cols != s.Cols || !bytes.Equal(v, s.Value) {
				t.Fatalf("Get(%x) = %+v %q, %v; want %+v %q", s.Key[:4], fd, v, err, s.Cols, s.Value)
			}
		}
		keys := make([]Key, len(sets))
		for i := range sets {
			keys[i] = sets[i].Key
		}
		found := make([]Found, len(keys))
		got := 0
		if _, err := tb.GetBatch(keys, found, func(i int, v []byte) error {
			got++
			if !bytes.Equal(v, sets[i].Value) {
				t.Fatalf("GetBatch: value %q, want %q", v, sets[i].Value)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, s := range sets {
			if len(s.Value) > 0 {
				want++
			}
		}
		if got != want {
			t.Fatalf("GetBatch read %d values, want %d", got, want)
		}
		for i := 105; i < 110; i++ {
			if ok, _, _ := tb.Has(new(keyOf(uint64(i)))); ok {
				t.Fatalf("expired key %d live", i)
			}
		}
		if err := tb.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	check()
	tb.Close()
	tb = openTest(t, dir, &Options{DeltaKeys: 50, Now: func() int64 { return now }})
	check()
	// A merge rewrites the values with the rows.
	more := make([]Key, 200)
	for i := range more {
		more[i] = keyOf(uint64(1 << 40 * (i + 1)))
	}
	if _, err := tb.Add(&Batch{Added: more}, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitMerges(tb)
	check()
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestGetBatchReadsBlocksOnce: a sorted GetBatch of every key of a file
// reads each value block once; single Gets go through the cache.
func TestGetBatchReadsBlocksOnce(t *testing.T) {
	dir := t.TempDir()
	tb := openTest(t, dir, nil)
	var sets []Set
	for i := range 6000 {
		sets = append(sets, Set{Key: keyOf(uint64(i)), Value: fmt.Appendf(nil, "https://example.org/%d/%s", i, bytes.Repeat([]byte("x"), i%50))})
	}
	slices.SortFunc(sets, func(a, b Set) int { return compareKeys(a.Key, b.Key) })
	in, err := tb.NewIngestOf(&IngestOptions{Keys: 6000, Values: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sets {
		if _, err := in.Put(&sets[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Commit(); err != nil {
		t.Fatal(err)
	}
	f := tb.files[0]
	reads := 0
	f.vals = reopenCounting(t, f, &reads)
	keys := make([]Key, len(sets))
	for i := range sets {
		keys[i] = sets[i].Key
	}
	found := make([]Found, len(keys))
	if _, err := tb.GetBatch(keys, found, func(i int, v []byte) error {
		if !bytes.Equal(v, sets[i].Value) {
			t.Fatalf("value %q, want %q", v, sets[i].Value)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if reads != f.vals.Blocks() || reads < 10 {
		t.Fatalf("a sorted batch of every key read %d times; the value file has %d blocks", reads, f.vals.Blocks())
	}
}

// TestScanReadsBlocksOnce: a scan with values of a file merged many
// times (its values in as many runs, as a frontier's queue entries are)
// reads each value block once per window of the scan (scanWindowEntries),
// and yields every value in key order. A cursor of a few blocks read one
// block for almost every value.
func TestScanReadsBlocksOnce(t *testing.T) {
	for _, c := range []struct{ runs, perRun, windows int }{
		{24, 100, 1},
		{24, 250, 2}, // more entries than a window holds
	} {
		t.Run(fmt.Sprintf("%dx%d", c.runs, c.perRun), func(t *testing.T) {
			dir := t.TempDir()
			tb := openTest(t, dir, &Options{DeltaKeys: c.perRun})
			want := map[Key][]byte{}
			writeRuns(t, tb, 0, c.runs, c.perRun, want)
			reads := 0
			blocks := countReads(t, tb, &reads)
			if blocks < c.runs {
				t.Fatalf("%d value blocks in %d files: want at least a block a run", blocks, len(tb.files))
			}
			reads = 0
			var last *Key
			n := 0
			if err := tb.ScanEntries(nil, 0, ScanOptions{Values: true}, func(e *Entry) error {
				if last != nil && compareKeys(*last, e.Key) >= 0 {
					t.Fatalf("key %x after %x", e.Key, *last)
				}
				k := e.Key
				last = &k
				if !bytes.Equal(e.Value, want[e.Key]) {
					t.Fatalf("value %q, want %q", e.Value, want[e.Key])
				}
				n++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if n != len(want) {
				t.Fatalf("scanned %d entries, want %d", n, len(want))
			}
			if reads > c.windows*blocks {
				t.Fatalf("a scan of every value in %d windows read %d blocks; the value files have %d", c.windows, reads, blocks)
			}
		})
	}
}

// writeRuns writes runs deltas of perRun keys from first on, each with a
// value (noted in want when not nil) and merged before the next, so that
// the table's files hold their values in as many runs.
func writeRuns(t testing.TB, tb *Table, first uint64, runs, perRun int, want map[Key][]byte) {
	t.Helper()
	for r := range runs {
		var b Batch
		for j := range perRun {
			i := first + uint64(r*perRun+j)
			s := Set{Key: keyOf(i), Value: fmt.Appendf(nil, "https://h%d.example/%d/%s", i%997, i, bytes.Repeat([]byte("y"), int(i%40)))}
			if want != nil {
				want[s.Key] = s.Value
			}
			b.Set = append(b.Set, s)
		}
		if _, err := tb.Write(&b, nil); err != nil {
			t.Fatal(err)
		}
		waitMerges(tb)
	}
}

// countReads reopens every file's values through a reader that counts
// its reads in reads, and returns their blocks.
func countReads(t *testing.T, tb *Table, reads *int) (blocks int) {
	t.Helper()
	for _, f := range tb.files {
		f.vals = reopenCounting(t, f, reads)
		blocks += f.vals.Blocks()
	}
	*reads = 0
	return blocks
}

// reopenCounting reopens f's value file through a reader that counts its
// reads in n.
func reopenCounting(t *testing.T, f *keyFile, n *int) *valuefile.Reader {
	t.Helper()
	b, err := os.ReadFile(valueName(f.name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := valuefile.Open(countingReader{bytes.NewReader(b), n}, int64(len(b)), valueName(f.name), valuefile.NewCache(0))
	if err != nil {
		t.Fatal(err)
	}
	*n = 0
	return r
}

// TestUpgradeVersion1: a table of a version 1 key file and a version 2 log
// opens, answers, and a writable open rewrites the file in version 2.
func TestUpgradeVersion1(t *testing.T) {
	dir := t.TempDir()
	live := make([]Key, 40)
	for i := range live {
		live[i] = keyOf(uint64(i))
	}
	slices.SortFunc(live, compareKeys)
	if err := os.WriteFile(fileName(dir, 1), version1File(live), 0o644); err != nil {
		t.Fatal(err)
	}
	// A version 2 segment: record 1 adds keyOf(100) and keyOf(101) and
	// deletes keyOf(3).
	payload := []byte{recordBatch, 1, 2, 1, 0}
	for _, i := range []uint64{100, 101, 3} {
		k := keyOf(i)
		payload = append(payload, k[:]...)
	}
	seg := append([]byte(logMagic), 2)
	seg = binary.LittleEndian.AppendUint32(seg, uint32(len(payload)))
	seg = binary.LittleEndian.AppendUint32(seg, crc32.Checksum(payload, castagnoli))
	seg = append(seg, payload...)
	if err := os.WriteFile(logName(dir, 1), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(osFS{}, dir, &manifest{logStart: 1, nextNum: 2, files: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	want := map[Key]bool{keyOf(100): true, keyOf(101): true}
	for _, k := range live {
		want[k] = true
	}
	want[keyOf(3)] = false
	ro, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if ok, _, err := ro.Has(&k); ok != w || err != nil {
			t.Fatalf("read-only: Has(%x) = %v, %v, want %v", k[:4], ok, err, w)
		}
	}
	ro.Close()
	tb := openTest(t, dir, nil)
	mergeError(tb)
	tb.mu.RLock()
	for _, f := range tb.files {
		if f.hdr.version != fileVersion {
			t.Errorf("%s: version %d after the upgrade's merge", f.name, f.hdr.version)
		}
	}
	tb.mu.RUnlock()
	for k, w := range want {
		if ok, _, err := tb.Has(&k); ok != w || err != nil {
			t.Fatalf("upgraded: Has(%x) = %v, %v, want %v", k[:4], ok, err, w)
		}
	}
	if got := tb.Len(); got != int64(len(live)+1) {
		t.Fatalf("Len = %d, want %d", got, len(live)+1)
	}
}

// TestConcurrentEntries runs writers of sets (values, kept values,
// expiries), adds and deletes beside readers (GetBatch with values,
// ScanEntries with values, Has) and merges (a small delta); the race
// detector, and the count against a scan at the end, are the test.
func TestConcurrentEntries(t *testing.T) {
	var now int64 = 1000
	var nmu sync.Mutex
	clock := func() int64 {
		nmu.Lock()
		defer nmu.Unlock()
		now++
		return now / 10
	}
	tb := openTest(t, t.TempDir(), &Options{DeltaKeys: 64, Now: clock})
	keys := make([]Key, 500)
	for i := range keys {
		keys[i] = keyOf(uint64(i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 8))
			for round := range 150 {
				var b Batch
				k := rng.IntN(len(keys) - 10)
				switch rng.IntN(3) {
				case 0:
					b.Added = keys[k : k+10]
				case 1:
					b.Deleted = keys[k : k+5]
				default:
					for j := range 5 {
						s := Set{Key: keys[k+j], Cols: Cols{Last: int64(round + 1), Expires: int64(100 + rng.IntN(200))}}
						if rng.IntN(2) == 0 {
							s.Value = fmt.Appendf(nil, "v%d-%d", w, round)
						} else {
							s.KeepValue = true
						}
						b.Set = append(b.Set, s)
					}
				}
				seq, err := tb.Write(&b, nil)
				if err == nil {
					err = tb.SyncTo(seq)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			found := make([]Found, len(keys))
			sorted := slices.Clone(keys)
			slices.SortFunc(sorted, compareKeys)
			for range 40 {
				if _, err := tb.GetBatch(sorted, found, func(int, []byte) error { return nil }); err != nil {
					errs <- err
					return
				}
				if err := tb.ScanEntries(nil, 0, ScanOptions{Values: true}, func(*Entry) error { return nil }); err != nil {
					errs <- err
					return
				}
				if _, _, err := tb.Get(&keys[7], nil, true); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitMerges(tb)
	n := int64(0)
	if err := tb.ScanEntries(nil, 0, ScanOptions{Expired: true}, func(*Entry) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != tb.Len() {
		t.Fatalf("%d records, Len %d", n, tb.Len())
	}
	if err := tb.Verify(); err != nil {
		t.Fatal(err)
	}
}

var _ io.ReaderAt = countingReader{}

// version1File returns a key file of version 1 (as written before
// version 2) of the sorted keys.
func version1File(keys []Key) []byte {
	bits := bucketBitsFor(uint64(len(keys)))
	buckets := make([]uint32, 1<<bits+1)
	n := 0
	for i := range keys {
		for b := leading(&keys[i], bits); n <= int(b); n++ {
			buckets[n] = uint32(i)
		}
	}
	for ; n < len(buckets); n++ {
		buckets[n] = uint32(len(keys))
	}
	var body, bb []byte
	for i := range keys {
		body = append(body, keys[i][:]...)
	}
	for _, o := range buckets {
		bb = binary.LittleEndian.AppendUint32(bb, o)
	}
	h := append([]byte(fileMagic), fileVersion1, bits, 0, 0, 0, 0, 0, 0)
	h = binary.LittleEndian.AppendUint64(h, uint64(len(keys)))
	h = binary.LittleEndian.AppendUint64(h, 0)
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(body, castagnoli))
	h = binary.LittleEndian.AppendUint32(h, crc32.Update(crc32.Checksum(h[:32], castagnoli), castagnoli, bb))
	h = append(h, make([]byte, 20)...)
	h = append(h, "UHKT"...)
	return slices.Concat(h, body, bb)
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestValueGarbage: values replaced stay in their value file (copied by
// merges) until its rows refer to less than half its values; the merge
// after that rewrites it, dropping them. The values held stay within
// twice those referred to (and a delta's more), and every value reads back.
func TestValueGarbage(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprint("stored=", stored), func(t *testing.T) { testValueGarbage(t, stored) })
	}
}

// testValueGarbage is TestValueGarbage with value blocks stored
// uncompressed (Options.StoredValues) or not; every block the table
// writes is in that form.
func testValueGarbage(t *testing.T, stored bool) {
	tb := openTest(t, t.TempDir(), &Options{DeltaKeys: 1000, StoredValues: stored})
	keys := make([]Key, 200)
	want := map[Key]string{}
	var b Batch
	for i := range keys {
		keys[i] = keyOf(uint64(i))
		v := fmt.Sprintf("https://example.org/first/%d", i)
		b.Set = append(b.Set, Set{Key: keys[i], Value: []byte(v)})
		want[keys[i]] = v
	}
	if _, err := tb.Write(&b, nil); err != nil {
		t.Fatal(err)
	}
	waitMerges(tb)
	rng := rand.New(rand.NewPCG(4, 4))
	rewrites := 0
	prevHeld := uint64(0)
	for round := range 12 {
		var b Batch
		for _, i := range rng.Perm(len(keys))[:80] {
			v := fmt.Sprintf("https://example.org/%d/%d", round, i)
			b.Set = append(b.Set, Set{Key: keys[i], Value: []byte(v)})
			want[keys[i]] = v
		}
		if _, err := tb.Write(&b, nil); err != nil {
			t.Fatal(err)
		}
		waitMerges(tb)
		tb.mu.RLock()
		var held, referred uint64
		for _, f := range tb.files {
			referred += f.hdr.values
			if f.vals != nil {
				held += f.vals.Len()
				if n := f.vals.StoredBlocks(); n != f.vals.Blocks()*btoi(stored) {
					t.Fatalf("round %d: %s: %d of %d blocks stored uncompressed", round, f.name, n, f.vals.Blocks())
				}
			}
		}
		tb.mu.RUnlock()
		if referred != uint64(len(keys)) || held > 2*referred+80 {
			t.Fatalf("round %d: the files hold %d values, their rows refer to %d", round, held, referred)
		}
		if held < prevHeld {
			rewrites++
		}
		prevHeld = held
		for _, k := range keys {
			if _, v, err := tb.Get(&k, nil, true); err != nil || string(v) != want[k] {
				t.Fatalf("round %d: value %q, %v, want %q", round, v, err, want[k])
			}
		}
	}
	if rewrites == 0 {
		t.Fatal("no merge rewrote a value file")
	}
	if err := tb.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestDictionaryValueFiles: a table whose value file was written with a
// trained dictionary (as the table wrote them before valueBlockSize)
// opens and reads every value, by Get and GetBatch, also after a merge
// with new values; the files the table writes next have no dictionary.
func TestDictionaryValueFiles(t *testing.T) {
	dir := t.TempDir()
	sets := func(lo, hi int) []Set {
		var ss []Set
		for i := lo; i < hi; i++ {
			ss = append(ss, Set{Key: keyOf(uint64(i)), Value: fmt.Appendf(nil, "https://example.org/dictionary/%d/page?q=%d", i%97, i)})
		}
		slices.SortFunc(ss, func(a, b Set) int { return compareKeys(a.Key, b.Key) })
		return ss
	}
	ingest := func(tb *Table, ss []Set) {
		t.Helper()
		in, err := tb.NewIngestOf(&IngestOptions{Keys: uint64(len(ss)), Values: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range ss {
			if _, err := in.Put(&ss[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := in.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	old := sets(0, 3000)
	tb := openTest(t, dir, &Options{DeltaKeys: 50})
	ingest(tb, old)
	tb.mu.RLock()
	name := valueName(tb.files[0].name)
	tb.mu.RUnlock()
	tb.Close()
	// The value file again, its values in the same order, with a
	// dictionary trained on them.
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := valuefile.Open(bytes.NewReader(b), int64(len(b)), name, valuefile.NewCache(0))
	if err != nil {
		t.Fatal(err)
	}
	var m memFile
	w := valuefile.NewWriter(&m, valuefile.Options{Pair: r.Pair()})
	cur := r.NewCursor()
	for i := range r.Len() {
		v, err := cur.Value(uint32(i))
		if err == nil {
			_, err = w.Add(v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if info, err := w.Close(); err != nil || info.Dict == nil {
		t.Fatalf("rewriting %s: %+v, %v (no dictionary trained)", name, info, err)
	}
	if err := os.WriteFile(name, m.b, 0o644); err != nil {
		t.Fatal(err)
	}

	tb = openTest(t, dir, &Options{DeltaKeys: 50})
	tb.mu.RLock()
	oldDict := tb.files[0].vals.Dict()
	tb.mu.RUnlock()
	if oldDict == nil {
		t.Fatal("the rewritten value file has no dictionary")
	}
	all := slices.Clone(old)
	check := func() {
		t.Helper()
		keys := make([]Key, len(all))
		for i, s := range all {
			keys[i] = s.Key
			if fd, v, err := tb.Get(&s.Key, nil, true); err != nil || !fd.Live || !bytes.Equal(v, s.Value) {
				t.Fatalf("Get(%x) = %+v %q, %v; want %q", s.Key[:4], fd, v, err, s.Value)
			}
		}
		found := make([]Found, len(keys))
		if _, err := tb.GetBatch(keys, found, func(i int, v []byte) error {
			if !bytes.Equal(v, all[i].Value) {
				t.Fatalf("GetBatch: value %q, want %q", v, all[i].Value)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := tb.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	check()
	// A file ingested beside it: written without a dictionary.
	next := sets(3000, 4000)
	ingest(tb, next)
	all = append(all, next...)
	slices.SortFunc(all, func(a, b Set) int { return compareKeys(a.Key, b.Key) })
	tb.mu.RLock()
	newest := tb.files[len(tb.files)-1]
	tb.mu.RUnlock()
	if newest.vals.Dict() != nil {
		t.Errorf("%s was written with a dictionary", valueName(newest.name))
	}
	check()
	// New values through the delta, merged with the files.
	var batch Batch
	for _, s := range sets(4000, 4200) {
		batch.Set = append(batch.Set, s)
	}
	if _, err := tb.Write(&batch, nil); err != nil {
		t.Fatal(err)
	}
	all = append(all, batch.Set...)
	slices.SortFunc(all, func(a, b Set) int { return compareKeys(a.Key, b.Key) })
	waitMerges(tb)
	check()
	tb.Close()
	tb = openTest(t, dir, &Options{DeltaKeys: 50})
	check()
}

// TestValueBlockSize: Options.ValueBlockSize cuts the value blocks merges
// write: a quarter of the default size makes about four times the
// blocks, and every value reads back.
func TestValueBlockSize(t *testing.T) {
	blocks := map[int]int{}
	for _, size := range []int{0, DefaultValueBlockSize / 4} {
		tb := openTest(t, t.TempDir(), &Options{ValueBlockSize: size})
		var b Batch
		for i := range 3000 {
			b.Set = append(b.Set, Set{Key: keyOf(uint64(i)), Value: fmt.Appendf(nil, "https://example.org/%d/%s", i, bytes.Repeat([]byte("z"), i%60))})
		}
		if _, err := tb.Write(&b, nil); err != nil {
			t.Fatal(err)
		}
		waitMerges(tb)
		for _, f := range tb.files {
			blocks[size] += f.vals.Blocks()
		}
		read := 0
		for _, s := range b.Set {
			found := make([]Found, 1)
			if _, err := tb.GetBatch([]Key{s.Key}, found, func(_ int, v []byte) error {
				if !bytes.Equal(v, s.Value) {
					t.Fatalf("value %q, want %q", v, s.Value)
				}
				read++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		if read != len(b.Set) {
			t.Fatalf("%d values read of %d", read, len(b.Set))
		}
	}
	if small, def := blocks[DefaultValueBlockSize/4], blocks[0]; def < 5 || small < 3*def {
		t.Fatalf("%d blocks of 4 KiB against %d of the default", small, def)
	}
}

// TestMergeRewriteReadsBlocksOnce: a merge that rewrites a value file
// (fewer than half its values live) of many runs reads each of its
// blocks once, and keeps every live value.
func TestMergeRewriteReadsBlocksOnce(t *testing.T) {
	dir := t.TempDir()
	const runs, perRun = 24, 100
	tb := openTest(t, dir, &Options{DeltaKeys: perRun})
	want := map[Key][]byte{}
	writeRuns(t, tb, 0, runs, perRun, want)
	// Three of every five deleted: the merge that applies the deletions
	// copies the value blocks (their file's rows all had values), and
	// the next rewrites them.
	var b Batch
	for i := range uint64(runs * perRun) {
		if i%5 < 3 {
			k := keyOf(i)
			b.Deleted = append(b.Deleted, k)
			delete(want, k)
		}
	}
	if _, err := tb.Write(&b, nil); err != nil {
		t.Fatal(err)
	}
	waitMerges(tb)
	reads := 0
	blocks := countReads(t, tb, &reads)
	// Deltas of new keys until a merge takes in the file (see planMerge).
	rewritten := func() bool { return len(tb.files) == 1 && tb.files[0].vals.Len() == tb.files[0].hdr.values }
	for r := 0; !rewritten(); r++ {
		if r == 10 {
			t.Fatalf("no merge took in the file after %d deltas", r)
		}
		writeRuns(t, tb, uint64(1<<40+r*perRun), 1, perRun, want)
	}
	values := uint64(0)
	for _, f := range tb.files {
		values += f.vals.Len()
	}
	if values != uint64(len(want)) {
		t.Fatalf("the files hold %d values after the merge, want %d (rewritten)", values, len(want))
	}
	if reads == 0 || reads > blocks {
		t.Fatalf("the merge read %d blocks; the value files had %d", reads, blocks)
	}
	n := 0
	if err := tb.ScanEntries(nil, 0, ScanOptions{Values: true}, func(e *Entry) error {
		if !bytes.Equal(e.Value, want[e.Key]) {
			t.Fatalf("value %q, want %q", e.Value, want[e.Key])
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("scanned %d entries, want %d", n, len(want))
	}
}

// TestValueWindowYieldsAtOnce: an entry that reads nothing from a file
// goes to fn at once while the window holds nothing (a frontier's scan
// of a queue's key-only due order stops after a few), with the delta's
// value when it has one.
func TestValueWindowYieldsAtOnce(t *testing.T) {
	var got []Entry
	vw := newValueWindow(func(e *Entry, _ dval) error {
		got = append(got, *e)
		return nil
	})
	for i, v := range []dval{{}, {b: []byte("in the delta")}} {
		if err := vw.add(&Entry{Key: keyOf(uint64(i))}, v, true); err != nil {
			t.Fatal(err)
		}
		if len(got) != i+1 || vw.holds() {
			t.Fatalf("after entry %d: %d yielded, holds %v; want it yielded at once", i, len(got), vw.holds())
		}
	}
	if string(got[1].Value) != "in the delta" {
		t.Fatalf("value %q, want the delta's", got[1].Value)
	}
}
