package valuefile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// memFile is an in-memory io.WriterAt and io.ReaderAt.
type memFile struct{ b []byte }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if n := int(off) + len(p); n > len(m.b) {
		m.b = append(m.b, make([]byte, n-len(m.b))...)
	}
	return copy(m.b[off:], p), nil
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(m.b).ReadAt(p, off)
}

// corpusURLs returns the URLs of ../shared/corpus, or skips.
func corpusURLs(tb testing.TB) [][]byte {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "..", "shared", "corpus", "debian-package-urls.txt"))
	if err != nil {
		tb.Skipf("no corpus: %v", err)
	}
	defer f.Close()
	var urls [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		urls = append(urls, bytes.Clone(sc.Bytes()))
	}
	return urls
}

// testValues returns n values of 0 to 200 bytes (some empty), and text
// that compresses.
func testValues(n int, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 9))
	vs := make([][]byte, n)
	for i := range vs {
		switch rng.IntN(4) {
		case 0:
			vs[i] = nil
		case 1:
			b := make([]byte, rng.IntN(200))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			vs[i] = b
		default:
			vs[i] = fmt.Appendf(nil, "https://host%d.example.org/path/%d/item?id=%d", rng.IntN(50), rng.IntN(1000), i)
		}
	}
	return vs
}

func write(tb testing.TB, vs [][]byte, o Options) (*memFile, Info) {
	tb.Helper()
	var m memFile
	w := NewWriter(&m, o)
	for i, v := range vs {
		ord, err := w.Add(v)
		if err != nil {
			tb.Fatal(err)
		}
		if ord != uint32(i) {
			tb.Fatalf("Add returned ordinal %d, want %d", ord, i)
		}
	}
	info, err := w.Close()
	if err != nil {
		tb.Fatal(err)
	}
	if info.Bytes != int64(len(m.b)) || info.Values != uint64(len(vs)) {
		tb.Fatalf("Info %+v for a file of %d bytes, %d values", info, len(m.b), len(vs))
	}
	return &m, info
}

// TestRoundTrip writes values with and without a dictionary, trained or
// given, and reads them back by cursor, in and out of order, and one at a
// time through a cache.
func TestRoundTrip(t *testing.T) {
	vs := testValues(5000, 1)
	_, trained := write(t, vs, Options{})
	if trained.Dict == nil || trained.Trained == 0 {
		t.Fatalf("no dictionary trained on %d values", len(vs))
	}
	for _, tc := range []struct {
		name string
		n    int
		o    Options
	}{
		{"trained", 5000, Options{}},
		{"too few to train", 10, Options{}},
		{"none", 5000, Options{NoTrain: true}},
		{"given", 5000, Options{Dict: trained.Dict}},
		{"large blocks", 5000, Options{BlockSize: 64 << 10}},
		{"a value a block", 300, Options{BlockSize: 1}},
		{"empty", 0, Options{}},
		{"stored", 5000, Options{Stored: true}},
		{"stored, a value a block", 300, Options{Stored: true, BlockSize: 1}},
		{"stored, empty", 0, Options{Stored: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := vs[:tc.n]
			m, info := write(t, vs, tc.o)
			c := NewCache(1 << 16)
			defer c.Close()
			r, err := Open(m, int64(len(m.b)), "test.values", c)
			if err != nil {
				t.Fatal(err)
			}
			if tc.o.Dict != nil && !bytes.Equal(r.Dict(), tc.o.Dict) || r.Len() != uint64(len(vs)) || r.Blocks() != int(info.Blocks) {
				t.Fatalf("opened: %d values, %d blocks, dictionary %d bytes", r.Len(), r.Blocks(), len(r.Dict()))
			}
			// Version 2 only for a file with a stored block, so that the
			// others stay readable by readers of version 1.
			if want := byte(1 + btoi(tc.o.Stored && tc.n > 0)); r.hdr.version != want {
				t.Fatalf("version %d, want %d", r.hdr.version, want)
			}
			if tc.o.Stored && (info.Dict != nil || r.Dict() != nil || info.Bytes < info.Raw) {
				t.Fatalf("stored: dictionary %d bytes, %d bytes for %d of values", len(info.Dict), info.Bytes, info.Raw)
			}
			cur := r.NewCursor()
			for i, v := range vs {
				got, err := cur.Value(uint32(i))
				if err != nil || !bytes.Equal(got, v) {
					t.Fatalf("cursor: value %d = %q, %v, want %q", i, got, err, v)
				}
			}
			for _, i := range rand.New(rand.NewPCG(2, 2)).Perm(len(vs)) {
				got, err := r.Value(uint32(i), nil)
				if err != nil || !bytes.Equal(got, vs[i]) {
					t.Fatalf("Value(%d) = %q, %v, want %q", i, got, err, vs[i])
				}
				got, err = cur.Value(uint32(i))
				if err != nil || !bytes.Equal(got, vs[i]) {
					t.Fatalf("cursor out of order: value %d = %q, %v", i, got, err)
				}
			}
			if _, err := r.Value(uint32(len(vs)), nil); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("a value past the end: %v", err)
			}
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDamage: every byte of a small file (compressed, or stored) flipped
// in turn is refused by Open or by the read of the block it is in, with
// an error wrapping store.ErrCorrupt that names the file; never a wrong
// value.
func TestDamage(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprint("stored=", stored), func(t *testing.T) { testDamage(t, stored) })
	}
}

func testDamage(t *testing.T, stored bool) {
	vs := testValues(400, 3)
	m, _ := write(t, vs, Options{BlockSize: 512, Stored: stored})
	c := NewCache(0)
	defer c.Close()
	for off := range m.b {
		b := bytes.Clone(m.b)
		b[off] ^= 0x10
		d := &memFile{b}
		r, err := Open(d, int64(len(b)), "damaged.values", c)
		if err == nil {
			err = r.Verify()
			if err == nil {
				cur := r.NewCursor()
				for i, v := range vs {
					got, err := cur.Value(uint32(i))
					if err == nil && !bytes.Equal(got, v) {
						t.Fatalf("byte %d flipped: value %d read as %q, want %q", off, i, got, v)
					}
				}
				t.Fatalf("byte %d flipped: no error", off)
			}
		}
		if !errors.Is(err, store.ErrCorrupt) && !errors.Is(err, store.ErrFormat) || !strings.Contains(err.Error(), "damaged.values") {
			t.Fatalf("byte %d flipped: %v, want store.ErrCorrupt naming the file", off, err)
		}
	}
	// Cut short.
	if _, err := Open(&memFile{m.b[:len(m.b)-1]}, int64(len(m.b)-1), "cut.values", c); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("cut file: %v", err)
	}
	if stored {
		// A stored block under a header of version 1 (whose readers
		// cannot read one), its checksum mended: refused.
		b := bytes.Clone(m.b)
		b[8] = 1
		binary.LittleEndian.PutUint32(b[56:], crc32.Checksum(b[:56], castagnoli))
		if _, err := Open(&memFile{b}, int64(len(b)), "v1.values", c); !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("a stored block in version 1: %v", err)
		}
	}
}

// TestCache: the cache keeps at most its bytes, and a file forgotten
// leaves nothing.
func TestCache(t *testing.T) {
	vs := testValues(3000, 4)
	m, _ := write(t, vs, Options{NoTrain: true, BlockSize: 1024})
	c := NewCache(8 << 10)
	defer c.Close()
	r, err := Open(m, int64(len(m.b)), "x.values", c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vs {
		if _, err := r.Value(uint32(i), nil); err != nil {
			t.Fatal(err)
		}
		if c.size > c.max {
			t.Fatalf("cache holds %d bytes, more than %d", c.size, c.max)
		}
	}
	if len(c.m) == 0 {
		t.Fatal("nothing cached")
	}
	c.Forget(r)
	if len(c.m) != 0 || c.size != 0 {
		t.Fatalf("after Forget: %d blocks, %d bytes", len(c.m), c.size)
	}
}

// TestSharingCursor: a sharing cursor puts the compressed blocks it
// decodes into the cache, and reads stored ones into its own (they cost
// a pread to read again); both read every value right.
func TestSharingCursor(t *testing.T) {
	vs := testValues(3000, 4)
	for _, stored := range []bool{false, true} {
		m, _ := write(t, vs, Options{NoTrain: true, BlockSize: 1024, Stored: stored})
		c := NewCache(1 << 20)
		r, err := Open(m, int64(len(m.b)), "x.values", c)
		if err != nil {
			t.Fatal(err)
		}
		cur := r.NewSharingCursor()
		for i, v := range vs {
			if got, err := cur.Value(uint32(i)); err != nil || !bytes.Equal(got, v) {
				t.Fatalf("stored %v: value %d = %q, %v, want %q", stored, i, got, err, v)
			}
		}
		if cached := len(c.m); (cached == 0) != stored {
			t.Fatalf("stored %v: %d blocks of %d cached", stored, cached, r.Blocks())
		}
		c.Close()
	}
}

// TestGolden pins the format: the bytes written for fixed values, and
// that the pinned file reads back. A change of format changes the version
// and keeps reading version 1.
func TestGolden(t *testing.T) {
	vs := testValues(200, 5)
	m, _ := write(t, vs, Options{BlockSize: 1024, Pair: 42})
	testGolden(t, vs, m, filepath.Join("testdata", "v1.values"))
	m, _ = write(t, vs, Options{BlockSize: 1024, Pair: 42, Stored: true})
	testGolden(t, vs, m, filepath.Join("testdata", "v2.values"))
}

func testGolden(t *testing.T, vs [][]byte, m *memFile, name string) {
	if *update {
		if err := os.WriteFile(name, m.b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.b, want) {
		t.Fatalf("written file differs from %s (run with -update only for a new format version)", name)
	}
	c := NewCache(0)
	defer c.Close()
	r, err := Open(&memFile{want}, int64(len(want)), name, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Pair() != 42 {
		t.Errorf("Pair = %d", r.Pair())
	}
	cur := r.NewCursor()
	for i, v := range vs {
		if got, err := cur.Value(uint32(i)); err != nil || !bytes.Equal(got, v) {
			t.Fatalf("value %d = %q, %v", i, got, err)
		}
	}
}

// TestCorpusRatio: the corpus's URLs, in hash order as the key table
// writes them, take at most 0.45 of their bytes (the key table's goal is
// 0.6 with its own overhead; measured 0.38-0.40 with 4 KiB blocks).
func TestCorpusRatio(t *testing.T) {
	urls := corpusURLs(t)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(urls), func(i, j int) { urls[i], urls[j] = urls[j], urls[i] })
	_, info := write(t, urls, Options{})
	if r := float64(info.Bytes) / float64(info.Raw); r > 0.45 {
		t.Errorf("%d URLs, %d bytes: %d written, %.3f of their bytes", len(urls), info.Raw, info.Bytes, r)
	}
}

func FuzzOpen(f *testing.F) {
	for _, name := range []string{"v1.values", "v2.values"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
			f.Add(b[:HeaderSize])
		}
	}
	m, _ := write(f, testValues(20, 6), Options{NoTrain: true, BlockSize: 64})
	f.Add(m.b)
	c := NewCache(1 << 20)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Open(&memFile{data}, int64(len(data)), "fuzz.values", c)
		if err != nil {
			return
		}
		// A file that opens reads, or reports damage, without panicking.
		cur := r.NewCursor()
		for i := range min(r.Len(), 100) {
			cur.Value(uint32(i))
			r.Value(uint32(i), nil)
		}
		r.Verify()
		c.Forget(r)
	})
}

// FuzzBlock: the decoded-block parser never panics, and what it accepts
// holds its values within the block.
func FuzzBlock(f *testing.F) {
	f.Add([]byte{2, 1, 2, 'a', 'b', 'c'}, uint32(2))
	f.Add([]byte{0}, uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, count uint32) {
		var d decoded
		if d.parse(data, count) != nil {
			return
		}
		for j := range count {
			if v := d.value(j); len(v) > len(data) {
				t.Fatalf("value %d of %d bytes in a block of %d", j, len(v), len(data))
			}
		}
	})
}

// TestCopyBlocks: a file made of the blocks of two others (one with a
// dictionary, one without) and values of its own (with a third
// dictionary) reads every value back, in runs interleaved as a merge
// reads them; a damaged block is refused by the copy, naming its file.
func TestCopyBlocks(t *testing.T) {
	c := NewCache(1 << 16)
	defer c.Close()
	open := func(m *memFile, name string) *Reader {
		t.Helper()
		r, err := Open(m, int64(len(m.b)), name, c)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	va, vb, vc := testValues(3000, 11), testValues(500, 12), testValues(2000, 13)
	ma, _ := write(t, va, Options{})
	mb, _ := write(t, vb, Options{NoTrain: true})
	_, trained := write(t, vc, Options{})
	a, b := open(ma, "a.values"), open(mb, "b.values")
	var m memFile
	w := NewWriter(&m, Options{Dict: trained.Dict})
	baseB, err := w.CopyBlocks(b)
	if err != nil {
		t.Fatal(err)
	}
	baseA, err := w.CopyBlocks(a)
	if err != nil {
		t.Fatal(err)
	}
	if baseB != 0 || baseA != uint32(len(vb)) {
		t.Fatalf("bases %d, %d", baseB, baseA)
	}
	for _, v := range vc {
		if _, err := w.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.CopyBlocks(a); err == nil {
		t.Fatal("CopyBlocks after Add accepted")
	}
	info, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := open(&m, "c.values")
	if r.Len() != uint64(len(va)+len(vb)+len(vc)) || len(r.dicts) != 2 || !bytes.Equal(info.Dict, trained.Dict) {
		t.Fatalf("%d values, %d dictionaries", r.Len(), len(r.dicts))
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	// The three runs interleaved: each block decoded once by a cursor.
	want := func(ord int) []byte {
		switch {
		case ord < len(vb):
			return vb[ord]
		case ord < len(vb)+len(va):
			return va[ord-len(vb)]
		}
		return vc[ord-len(vb)-len(va)]
	}
	cur := r.NewCursor()
	ia, ib, ic := len(vb), 0, len(vb)+len(va)
	for ia < len(vb)+len(va) || ib < len(vb) || ic < int(r.Len()) {
		for _, p := range []*int{&ib, &ia, &ic} {
			end := map[*int]int{&ib: len(vb), &ia: len(vb) + len(va), &ic: int(r.Len())}[p]
			if *p < end {
				got, err := cur.Value(uint32(*p))
				if err != nil || !bytes.Equal(got, want(*p)) {
					t.Fatalf("value %d = %q, %v, want %q", *p, got, err, want(*p))
				}
				*p++
			}
		}
	}
	// Stored blocks copied into a file that compresses, and compressed
	// ones into a file that stores: each block keeps its form, and the
	// file is version 2 when it holds a stored one.
	ms, _ := write(t, vb, Options{Stored: true, BlockSize: 256})
	s := open(ms, "s.values")
	for _, o := range []Options{{NoTrain: true}, {Stored: true}} {
		var mm memFile
		w := NewWriter(&mm, o)
		for _, src := range []*Reader{s, a} {
			if _, err := w.CopyBlocks(src); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range vc {
			if _, err := w.Add(v); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r := open(&mm, "mixed.values")
		if r.hdr.version != 2 || r.blocks[0].dict != storedBlock || (r.blocks[len(r.blocks)-1].dict == storedBlock) != o.Stored {
			t.Fatalf("%+v: version %d, first block's dictionary %d", o, r.hdr.version, r.blocks[0].dict)
		}
		all := append(append(append([][]byte{}, vb...), va...), vc...)
		cur := r.NewCursor()
		for i, v := range all {
			if got, err := cur.Value(uint32(i)); err != nil || !bytes.Equal(got, v) {
				t.Fatalf("%+v: value %d = %q, %v, want %q", o, i, got, err, v)
			}
			if got, err := r.Value(uint32(i), nil); err != nil || !bytes.Equal(got, v) {
				t.Fatalf("%+v: Value(%d) = %q, %v, want %q", o, i, got, err, v)
			}
		}
	}
	// A damaged block of a file copied.
	ma.b[HeaderSize+10] ^= 1
	w = NewWriter(&memFile{}, Options{})
	if _, err := w.CopyBlocks(a); !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), "a.values") {
		t.Fatalf("CopyBlocks of a damaged file: %v", err)
	}
}

// failingReader answers n bytes and err.
type failingReader struct {
	n   int
	err error
}

func (f failingReader) ReadAt(p []byte, off int64) (int, error) { return f.n, f.err }

// TestReadAt: a read of the whole range is no error, even with io.EOF
// (io.ReaderAt may say EOF with the last bytes); a short one is an error
// naming the file, wrapping io.ErrUnexpectedEOF or the reader's error.
func TestReadAt(t *testing.T) {
	broken := errors.New("disk on fire")
	for _, tc := range []struct {
		name string
		r    io.ReaderAt
		n    int
		off  int64
		want error // nil: the read succeeds
	}{
		{"whole", &memFile{b: []byte("abcdef")}, 3, 2, nil},
		{"to the end", &memFile{b: []byte("abcdef")}, 6, 0, nil},
		{"whole with EOF", failingReader{4, io.EOF}, 4, 0, nil},
		{"short", &memFile{b: []byte("abcdef")}, 4, 4, io.ErrUnexpectedEOF},
		{"past the end", &memFile{b: []byte("abcdef")}, 1, 9, io.ErrUnexpectedEOF},
		{"short without error", failingReader{2, nil}, 4, 0, io.ErrUnexpectedEOF},
		{"reader error", failingReader{0, broken}, 4, 0, broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := make([]byte, tc.n)
			err := ReadAt(tc.r, p, tc.off, "000007.values")
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("ReadAt = %v, want nil", err)
			case tc.want != nil && (!errors.Is(err, tc.want) || !strings.Contains(err.Error(), "read 000007.values: ")):
				t.Fatalf("ReadAt = %v, want an error wrapping %v naming 000007.values", err, tc.want)
			}
		})
	}
}

// failAt fails every write that ends past limit bytes.
type failAt struct {
	memFile
	limit int64
}

var errDiskFull = errors.New("disk full")

func (f *failAt) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.limit {
		return 0, errDiskFull
	}
	return f.memFile.WriteAt(p, off)
}

// TestWriteError: a block's write that fails (blocks are written in the
// background) fails a later Add or Close with its error; Abort after it
// or mid-way returns, and the writer refuses more.
func TestWriteError(t *testing.T) {
	vs := testValues(5000, 11)
	for _, limit := range []int64{HeaderSize, 4 << 10, 40 << 10} {
		f := &failAt{limit: limit}
		w := NewWriter(f, Options{NoTrain: true, BlockSize: 1024})
		var err error
		for _, v := range vs {
			if _, err = w.Add(v); err != nil {
				break
			}
		}
		if err == nil {
			_, err = w.Close()
		}
		if !errors.Is(err, errDiskFull) {
			t.Errorf("limit %d: error %v, want %v", limit, err, errDiskFull)
		}
	}
	w := NewWriter(&memFile{}, Options{NoTrain: true, BlockSize: 1024})
	for _, v := range vs[:1000] {
		if _, err := w.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	w.Abort()
	if _, err := w.Add(vs[0]); err == nil {
		t.Error("Add after Abort succeeded")
	}
	if _, err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
}
