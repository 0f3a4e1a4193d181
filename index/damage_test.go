package index

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index/internal/integrity"
	"github.com/urlhash/urlhash/store"
)

// A damageIndex is an index on disk with many tables, and what it holds.
type damageIndex struct {
	dir      string
	full     map[hashkey.Hash]string // full entries and their value texts
	fullKeys []hashkey.Hash          // sorted
	prefixes []store.Entry           // prefix entries (empty values)
	absent   []hashkey.Hash
	opts     func(readOnly bool) *Options
}

// damageConfig is how the damage test's index is stored.
type damageConfig struct {
	name        string
	compression options.CompressionType
	noChecksums bool // Badger's table code then panics on some damage
}

var damageConfigs = []damageConfig{
	{"snappy", options.Snappy, false},
	{"none", options.None, false},
	{"none-nochecksums", options.None, true},
}

// damageOptions returns options with small tables, so that a few tens of
// thousands of keys fill several.
func damageOptions(c damageConfig, readOnly bool) *Options {
	// Badger's damage: every entry in Badger (an index with a key table
	// keeps only its prefix entries there; the key table's damage has
	// tests of its own).
	o := &Options{MemTableSize: 1 << 20, ReadOnly: readOnly, noBlockChecksums: c.noChecksums, NoKeyTable: true}
	d := o.withDefaults()
	bo := d.badgerOptions("")
	d.setCodec(&bo, c.compression, false)
	bo.BaseTableSize = 128 << 10
	bo.ValueLogFileSize = 1 << 20
	bo.ValueThreshold = 4 << 10 // its large values in the value log
	o.Badger = &bo
	return o
}

var (
	damageOnce  sync.Map // config name -> *damageIndex
	damageBuild sync.Mutex
)

// buildDamageIndex builds (once per config and test binary) an index of
// 12,000 full entries (a quarter with values) and 300 prefix entries.
func buildDamageIndex(t *testing.T, c damageConfig) *damageIndex {
	ctx := context.Background()
	damageBuild.Lock()
	defer damageBuild.Unlock()
	if v, ok := damageOnce.Load(c.name); ok {
		return v.(*damageIndex)
	}
	dir, err := os.MkdirTemp("", "urlhash-damage-")
	if err != nil {
		t.Fatal(err)
	}
	// Shared by the tests of this binary; TestMain removes it.
	di := &damageIndex{dir: dir, full: map[hashkey.Hash]string{}}
	di.opts = func(ro bool) *Options { return damageOptions(c, ro) }
	r := rand.New(rand.NewPCG(51, 52))
	hs := randHashes(r, 12_000+300+1000)
	db, err := Open(dir, di.opts(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, slices.Values(entriesOf(hs[:9000]))); err != nil {
		t.Fatal(err)
	}
	var es []store.Entry
	for i, h := range hs[9000:12000] {
		v := fmt.Sprintf("https://example.com/%d", i)
		es = append(es, store.FullEntry(h, store.Value{Text: []byte(v)}))
		di.full[h] = v
	}
	for _, h := range hs[:9000] {
		di.full[h] = ""
	}
	// Five values large enough for the value log (the filter snapshot is
	// in a file of its own).
	for i, h := range hs[9000:9005] {
		v := fmt.Sprintf("https://example.com/%d/%s", i, strings.Repeat("x", 6000))
		es[i] = store.FullEntry(h, store.Value{Text: []byte(v)})
		di.full[h] = v
	}
	if _, err := db.AddBatch(ctx, es); err != nil {
		t.Fatal(err)
	}
	for _, h := range hs[12000:12300] {
		pe, _ := store.PrefixEntry(h[:4+int(h[31])%5], store.Value{})
		di.prefixes = append(di.prefixes, pe)
	}
	if err := db.PutBatch(ctx, di.prefixes); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	di.absent = hs[12300:]
	for h := range di.full {
		di.fullKeys = append(di.fullKeys, h)
	}
	slices.SortFunc(di.fullKeys, func(a, b hashkey.Hash) int { return bytes.Compare(a[:], b[:]) })
	slices.SortFunc(di.prefixes, func(a, b store.Entry) int { return bytes.Compare(a.Key(), b.Key()) })
	damageOnce.Store(c.name, di)
	return di
}

// copyDir copies the files of src into a new directory under t.TempDir.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "index")
	copyTree(t, src, dst)
	return dst
}

// copyTree copies the files of src into dst, and its directories (a key
// table's) recursively.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			copyTree(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// largestTable returns the path of the largest table file in dir.
func largestTable(t testing.TB, dir string) string { return largestFile(t, dir, "*.sst") }

// largestFile returns the path of the largest file in dir matching
// pattern.
func largestFile(t testing.TB, dir, pattern string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(files) == 0 {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	sort.Slice(files, func(i, j int) bool {
		a, _ := os.Stat(files[i])
		b, _ := os.Stat(files[j])
		return a.Size() > b.Size()
	})
	return files[0]
}

// TestMain removes the damage test's shared indexes.
func TestMain(m *testing.M) {
	flag.Parse()
	if *update {
		// The one convention: -update rewrites golden files and the
		// expected output of datadriven files alike.
		flag.Set("rewrite", "true")
	}
	code := m.Run()
	damageOnce.Range(func(_, v any) bool {
		os.RemoveAll(v.(*damageIndex).dir)
		return true
	})
	os.Exit(code)
}

// A damage changes the files of an index directory and returns the name
// of the file an error must name ("" when the damage must not be an
// error: a cache).
type damage struct {
	name string
	do   func(t testing.TB, dir string) string
}

func rewriteFile(t testing.TB, path string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

var damages = []damage{
	{"sst: 64 random bytes", func(t testing.TB, dir string) string {
		p := largestTable(t, dir)
		rewriteFile(t, p, func(b []byte) []byte {
			r := rand.New(rand.NewPCG(1, 2))
			for i := range 64 {
				b[len(b)/2+i] = byte(r.Uint32())
			}
			return b
		})
		return filepath.Base(p)
	}},
	{"sst: truncated", func(t testing.TB, dir string) string {
		p := largestTable(t, dir)
		rewriteFile(t, p, func(b []byte) []byte { return b[:len(b)/2] })
		return filepath.Base(p)
	}},
	{"sst: bit flip", func(t testing.TB, dir string) string {
		p := largestTable(t, dir)
		rewriteFile(t, p, func(b []byte) []byte { b[len(b)/3] ^= 0x10; return b })
		return filepath.Base(p)
	}},
	{"MANIFEST missing", func(t testing.TB, dir string) string {
		if err := os.Remove(filepath.Join(dir, badger.ManifestFilename)); err != nil {
			t.Fatal(err)
		}
		return badger.ManifestFilename
	}},
	{"MANIFEST truncated", func(t testing.TB, dir string) string {
		rewriteFile(t, filepath.Join(dir, badger.ManifestFilename), func(b []byte) []byte { return b[:len(b)/2] })
		return ".sst" // the tables it no longer lists
	}},
	{"sst: orphan", func(t testing.TB, dir string) string {
		b, err := os.ReadFile(largestTable(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		p := table.NewFilename(9999, dir)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Base(p)
	}},
	{"sst: missing", func(t testing.TB, dir string) string {
		p := largestTable(t, dir)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return filepath.Base(p)
	}},
	{"snapshot damaged", func(t testing.TB, dir string) string {
		// A cache: the filter is rebuilt, nothing is lost.
		rewriteFile(t, filepath.Join(dir, snapshotFileName), func(b []byte) []byte {
			for i := range 64 {
				b[len(b)/2-32+i] ^= 0x5a
			}
			return b
		})
		return ""
	}},
	{"snapshot missing", func(t testing.TB, dir string) string {
		if err := os.Remove(filepath.Join(dir, snapshotFileName)); err != nil {
			t.Fatal(err)
		}
		return ""
	}},
	{"value log: damaged value", func(t testing.TB, dir string) string {
		// The first record of the value log is a large value.
		p := largestFile(t, dir, "*.vlog")
		rewriteFile(t, p, func(b []byte) []byte {
			for i := range 64 {
				b[integrity.LogHeaderSize+100+i] ^= 0x5a
			}
			return b
		})
		return filepath.Base(p)
	}},
}

// errWrong marks a wrong answer given without an error.
var errWrong = errors.New("WRONG ANSWER")

func wrong(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errWrong, fmt.Sprintf(format, args...))
}

// A damageOp runs one operation over the whole index and checks its
// answers: nil when all are right, the operation's error, or errWrong.
type damageOp struct {
	name     string
	writes   bool
	run      func(db *DB, di *damageIndex) error
	readOnly bool // runs on read-only opens only (else: writable only when writes)
}

var damageOps = []damageOp{
	{name: "Get", run: func(db *DB, di *damageIndex) error {
		for _, h := range di.fullKeys {
			v, err := db.Get(context.Background(), h)
			if errors.Is(err, store.ErrNotFound) {
				return wrong("Get(%x): absent", h[:4])
			}
			if err != nil {
				return err
			}
			if string(v.Text) != di.full[h] {
				return wrong("Get(%x) = %q, want %q", h[:4], v.Text, di.full[h])
			}
		}
		for _, h := range di.absent {
			if _, err := db.Get(context.Background(), h); !errors.Is(err, store.ErrNotFound) {
				if err == nil {
					return wrong("Get(absent %x) found", h[:4])
				}
				return err
			}
		}
		return nil
	}},
	{name: "Has", run: func(db *DB, di *damageIndex) error {
		for _, h := range di.fullKeys {
			ok, err := db.Has(context.Background(), h)
			if err != nil {
				return err
			}
			if !ok {
				return wrong("Has(%x) = false", h[:4])
			}
		}
		return nil
	}},
	{name: "HasBatch", run: func(db *DB, di *damageIndex) error {
		got, err := db.HasBatch(context.Background(), append(slices.Clone(di.fullKeys), di.absent...))
		if err != nil {
			return err
		}
		for i, ok := range got {
			if ok != (i < len(di.fullKeys)) {
				return wrong("HasBatch[%d] = %v", i, ok)
			}
		}
		return nil
	}},
	{name: "Match", run: func(db *DB, di *damageIndex) error {
		for _, h := range di.fullKeys {
			m, ok, err := db.Match(context.Background(), h)
			if err != nil {
				return err
			}
			if !ok || !m.IsFull() || string(m.Value.Text) != di.full[h] {
				return wrong("Match(%x) = %+v, %v", h[:4], m, ok)
			}
		}
		for _, p := range di.prefixes {
			h := p.Hash
			h[31] ^= 0xff // not a stored full entry
			m, ok, err := db.Match(context.Background(), h)
			if err != nil {
				return err
			}
			if !ok || m.Len < p.Len {
				return wrong("Match(under prefix %x) = %+v, %v", p.Key(), m, ok)
			}
		}
		return nil
	}},
	{name: "Scan", run: func(db *DB, di *damageIndex) error {
		// Every 4-bit prefix, without a limit and with one.
		for nib := range 16 {
			for _, limit := range []int{0, 100} {
				p := []byte{byte(nib << 4)}
				var got []hashkey.Hash
				err := db.Scan(context.Background(), p, 4, limit, func(e store.Entry) error {
					if !e.IsPrefix() {
						got = append(got, e.Hash)
					}
					return nil
				})
				if err != nil {
					return err
				}
				var want []hashkey.Hash
				for _, h := range di.fullKeys {
					if h[0]>>4 == byte(nib) {
						want = append(want, h)
					}
				}
				if limit > 0 {
					want = want[:min(limit, len(want))]
				}
				if !slices.Equal(got, want) {
					return wrong("Scan(%x, limit %d): %d entries, want %d", p, limit, len(got), len(want))
				}
			}
		}
		return nil
	}},
	{name: "Count", run: func(db *DB, di *damageIndex) error {
		full, prefixes, err := db.Count(context.Background(), nil, 0)
		if err != nil {
			return err
		}
		if full != int64(len(di.fullKeys)) || prefixes != int64(len(di.prefixes)) {
			return wrong("Count = %d, %d", full, prefixes)
		}
		return nil
	}},
	{name: "ForEach", run: func(db *DB, di *damageIndex) error {
		var got []hashkey.Hash
		np := 0
		err := db.ForEach(context.Background(), func(e store.Entry) error {
			if e.IsPrefix() {
				np++
			} else {
				got = append(got, e.Hash)
				if string(e.Value.Text) != di.full[e.Hash] {
					return wrong("ForEach value of %x = %q", e.Hash[:4], e.Value.Text)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !slices.Equal(got, di.fullKeys) || np != len(di.prefixes) {
			return wrong("ForEach: %d entries and %d prefix entries", len(got), np)
		}
		return nil
	}},
	{name: "Verify", run: func(db *DB, di *damageIndex) error { return db.Verify(context.Background()) }},
	{name: "Load", writes: true, run: func(db *DB, di *damageIndex) error {
		extra := randHashes(rand.New(rand.NewPCG(61, 62)), 100)
		res, err := db.Load(context.Background(), slices.Values(entriesOf(append(slices.Clone(di.fullKeys), extra...))))
		if err != nil {
			return err
		}
		if res.Added != 100 || res.Present != int64(len(di.fullKeys)) {
			return wrong("Load = %+v", res)
		}
		return nil
	}},
}

// outcome classifies what an operation did.
func outcome(err error, names string) string {
	switch {
	case err == nil:
		return "correct"
	case errors.Is(err, errWrong):
		msg := err.Error()
		if len(msg) > 100 {
			msg = msg[:100] + "..."
		}
		return msg
	case errors.Is(err, store.ErrCorrupt) && names != "" && strings.Contains(err.Error(), names):
		return "error names " + names
	case errors.Is(err, store.ErrCorrupt):
		return "UNNAMED ErrCorrupt: " + integrity.FirstLine(err.Error())
	}
	return "OTHER ERROR: " + integrity.FirstLine(err.Error())
}

// runCaught runs fn and turns a panic into a result.
func runCaught(fn func() error) (err error, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			panicked = p
		}
	}()
	return fn(), nil
}

// TestDamage damages an index in each way of damages and runs each
// operation on a fresh open of it, read-only and writable: every outcome
// must be the right answer or an error wrapping store.ErrCorrupt that
// names the damaged file; never a panic, a wrong "absent" or a partial
// result. With -v it prints the outcome table.
func TestDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	type row struct{ config, damage, mode, op, out string }
	var mu sync.Mutex
	var rows []row
	for _, c := range damageConfigs {
		t.Run(c.name, func(t *testing.T) {
			di := buildDamageIndex(t, c)
			for _, d := range damages {
				t.Run(d.name, func(t *testing.T) {
					t.Parallel()
					for _, ro := range []bool{true, false} {
						mode := "writable"
						if ro {
							mode = "read-only"
						}
						dir := copyDir(t, di.dir)
						names := d.do(t, dir)
						record := func(op, out string) {
							mu.Lock()
							rows = append(rows, row{c.name, d.name, mode, op, out})
							mu.Unlock()
							bad := strings.HasPrefix(out, "WRONG") || strings.HasPrefix(out, "PANIC") ||
								strings.HasPrefix(out, "UNNAMED") || strings.HasPrefix(out, "OTHER")
							if c.noChecksums && strings.HasPrefix(out, "WRONG") && !strings.Contains(out, "absent") && !strings.Contains(out, "false") {
								// Without block checksums (which Options
								// never turns off) a flipped value byte
								// is read as data; this config tests
								// that no panic escapes and no key goes
								// missing.
								bad = false
							}
							if names == "" && out != "correct" {
								bad = true // a damaged cache is never an error
							}
							if bad {
								t.Errorf("%s %s: %s", mode, op, out)
							}
						}
						before := snapshotDir(t, dir)
						db, err := Open(dir, di.opts(ro))
						if ro {
							if after := snapshotDir(t, dir); after != before {
								t.Errorf("read-only Open changed the directory:\n%s\n%s", before, after)
							}
						}
						record("Open", outcome(err, names))
						if err != nil {
							continue
						}
						db.Close()
						for _, op := range damageOps {
							if op.writes && ro {
								continue
							}
							db, err := Open(dir, di.opts(ro))
							if err != nil {
								t.Fatalf("reopen for %s: %v", op.name, err)
							}
							err, p := runCaught(func() error { return op.run(db, di) })
							out := outcome(err, names)
							if db.st.panics.Load() > 0 {
								out += " (panic caught)"
							}
							if p != nil {
								out = fmt.Sprintf("PANIC: %v", integrity.FirstLine(fmt.Sprint(p)))
							}
							record(op.name, out)
							if _, p := runCaught(db.Close); p != nil {
								record("Close", fmt.Sprintf("PANIC: %v", p))
							}
						}
					}
				})
			}
		})
	}
	// The outcome table: damage x operation, one column per config and mode.
	cols := map[string]bool{}
	cells := map[[2]string]map[string]string{}
	for _, r := range rows {
		col := r.config + "/" + r.mode
		cols[col] = true
		k := [2]string{r.damage, r.op}
		if cells[k] == nil {
			cells[k] = map[string]string{}
		}
		cells[k][col] = r.out
	}
	var colNames []string
	for c := range cols {
		colNames = append(colNames, c)
	}
	slices.Sort(colNames)
	var b strings.Builder
	fmt.Fprintf(&b, "| damage | operation | %s |\n", strings.Join(colNames, " | "))
	for _, d := range damages {
		for _, op := range append([]damageOp{{name: "Open"}}, damageOps...) {
			m := cells[[2]string{d.name, op.name}]
			if m == nil {
				continue
			}
			var cs []string
			for _, c := range colNames {
				cs = append(cs, cmpOr(m[c], "-"))
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", d.name, op.name, strings.Join(cs, " | "))
		}
	}
	t.Logf("outcomes:\n%s", b.String())
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// snapshotDir describes every file of dir (name, size, mode time,
// content hash) so that two descriptions differ when anything changed.
func snapshotDir(t testing.TB, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		h := hashkey.Sum(nil)
		if !e.IsDir() {
			data, _ := io.ReadAll(f)
			h = hashkey.Sum(data)
		}
		f.Close()
		fmt.Fprintf(&b, "%s %d %d %x\n", e.Name(), info.Size(), info.ModTime().UnixNano(), h[:8])
	}
	return b.String()
}
