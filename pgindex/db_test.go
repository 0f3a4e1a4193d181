package pgindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// backend is the method set the comparison drives on both indexes.
type backend interface {
	Put(context.Context, hashkey.Hash, store.Value) error
	PutPrefix(context.Context, []byte, store.Value) error
	PutBatch(context.Context, []store.Entry) error
	Get(context.Context, hashkey.Hash) (store.Value, error)
	GetBatch(context.Context, []hashkey.Hash) ([]store.Value, []bool, error)
	Has(context.Context, hashkey.Hash) (bool, error)
	HasBatch(context.Context, []hashkey.Hash) ([]bool, error)
	Delete(context.Context, store.Entry) error
	Add(context.Context, hashkey.Hash, store.Value) (bool, error)
	AddBatch(context.Context, []store.Entry) ([]bool, error)
	Match(context.Context, hashkey.Hash) (store.Match, bool, error)
	Scan(ctx context.Context, prefix []byte, bits, limit int, fn func(store.Entry) error) error
	ForEach(ctx context.Context, fn func(store.Entry) error) error
	Count(ctx context.Context, prefix []byte, bits int) (int64, int64, error)
	Load(context.Context, iter.Seq[store.Entry]) (store.LoadResult, error)
	Stats(context.Context) (store.Stats, error)
	Verify(context.Context) error
	Sync(context.Context) error
	Close() error
	Path() string
	Profile(context.Context) (string, error)
}

var (
	_ backend       = (*DB)(nil)
	_ backend       = (*index.DB)(nil)
	_ store.Backend = (*DB)(nil)
)

func randHashes(r *rand.Rand, n int) []hashkey.Hash {
	hs := make([]hashkey.Hash, n)
	for i := range hs {
		for j := range hs[i] {
			hs[i][j] = byte(r.Uint32())
		}
	}
	return hs
}

func entries(r *rand.Rand, hs []hashkey.Hash) []store.Entry {
	es := make([]store.Entry, len(hs))
	for i, h := range hs {
		es[i] = store.Entry{Hash: h, Len: hashkey.Size}
		switch r.IntN(4) {
		case 0:
			es[i].Value.Text = fmt.Appendf(nil, "https://example.com/%d", i)
		case 1:
			es[i].Value.Data = []byte{byte(i), 0, byte(i >> 8)}
		}
	}
	return es
}

// same runs op on both backends and fails unless the answers are equal.
func same[T any](t *testing.T, what string, op func(backend) (T, error), a, b backend) T {
	t.Helper()
	ga, ea := op(a)
	gb, eb := op(b)
	if fmt.Sprint(ea) != fmt.Sprint(eb) && !(errors.Is(ea, store.ErrNotFound) && errors.Is(eb, store.ErrNotFound)) {
		t.Fatalf("%s: errors differ: badger %v, postgres %v", what, ea, eb)
	}
	if fmt.Sprintf("%v", ga) != fmt.Sprintf("%v", gb) {
		t.Fatalf("%s: answers differ:\nbadger   %v\npostgres %v", what, ga, gb)
	}
	return ga
}

// load runs Load and drops Streamed, which only Badger sets.
func load(db backend, es []store.Entry) (store.LoadResult, error) {
	res, err := db.Load(context.Background(), slices.Values(es))
	res.Streamed = false
	return res, err
}

func collect(db backend, prefix []byte, bits, limit int) ([]store.Entry, error) {
	var out []store.Entry
	err := db.Scan(context.Background(), prefix, bits, limit, func(e store.Entry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

func exportAll(db backend) ([]store.Entry, error) {
	var out []store.Entry
	err := db.ForEach(context.Background(), func(e store.Entry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// TestSameAsBadger drives a Badger index and a PostgreSQL index with the
// same writes and compares every read.
func TestSameAsBadger(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(8, 8))
	bdb, pdb := openBadger(t), openTestDB(t, nil)
	hs := randHashes(r, 2000)
	es := entries(r, hs)

	// Writes: Load with repeats, AddBatch with repeats, Put,
	// PutBatch replacing values, prefix entries of every length (some of
	// them prefixes of stored hashes).
	loadIn := append(slices.Clone(es[:1000]), es[10], es[20], es[999])
	same(t, "Load", func(db backend) (store.LoadResult, error) { return load(db, loadIn) }, bdb, pdb)
	addIn := append(slices.Clone(es[900:1600]), es[1500], es[5])
	same(t, "AddBatch", func(db backend) ([]bool, error) { return db.AddBatch(ctx, addIn) }, bdb, pdb)
	for i := 1600; i < 1700; i++ {
		same(t, "Add", func(db backend) (bool, error) { return db.Add(ctx, hs[i], es[i].Value) }, bdb, pdb)
		same(t, "Add again", func(db backend) (bool, error) { return db.Add(ctx, hs[i], store.Value{}) }, bdb, pdb)
	}
	for i := 1700; i < 1800; i++ {
		same(t, "Put", func(db backend) (int, error) { return 0, db.Put(ctx, hs[i], es[i].Value) }, bdb, pdb)
	}
	putIn := slices.Clone(es[1800:])
	for i := range 50 {
		e := es[r.IntN(1800)]
		e.Value = store.Value{Text: []byte("replaced"), Data: []byte{byte(i)}}
		putIn = append(putIn, e)
	}
	same(t, "PutBatch", func(db backend) (int, error) { return 0, db.PutBatch(ctx, putIn) }, bdb, pdb)
	var prefixes []store.Entry
	for i := range 400 {
		var src hashkey.Hash
		if i%2 == 0 {
			src = hs[r.IntN(len(hs))]
		} else {
			src = randHashes(r, 1)[0]
		}
		n := store.MinPrefixEntryLen + i%(store.MaxPrefixEntryLen-store.MinPrefixEntryLen+1)
		e, err := store.PrefixEntry(src[:n], store.Value{Data: []byte{byte(n)}})
		if err != nil {
			t.Fatal(err)
		}
		prefixes = append(prefixes, e)
	}
	same(t, "AddBatch prefixes", func(db backend) ([]bool, error) { return db.AddBatch(ctx, prefixes[:200]) }, bdb, pdb)
	for _, e := range prefixes[150:300] {
		same(t, "PutPrefix", func(db backend) (int, error) {
			return 0, db.PutPrefix(ctx, e.Key(), store.Value{Text: []byte("p")})
		}, bdb, pdb)
	}
	same(t, "Load prefixes", func(db backend) (store.LoadResult, error) { return load(db, prefixes[250:]) }, bdb, pdb)
	// Nested prefixes of one hash, for Match's longest-prefix rule.
	nest := randHashes(r, 1)[0]
	for _, n := range []int{4, 9, 17} {
		same(t, "PutPrefix nested", func(db backend) (int, error) {
			return 0, db.PutPrefix(ctx, nest[:n], store.Value{Data: []byte{byte(n)}})
		}, bdb, pdb)
	}

	// A short prefix entry just past a scan range whose upper bound
	// carries: only the length rule keeps it out of Scan(01020304ff, 40).
	same(t, "PutPrefix edge", func(db backend) (int, error) {
		return 0, db.PutPrefix(ctx, []byte{1, 2, 3, 5}, store.Value{})
	}, bdb, pdb)
	same(t, "PutPrefix edge 2", func(db backend) (int, error) {
		return 0, db.PutPrefix(ctx, []byte{1, 2, 3, 4, 0xff, 9}, store.Value{})
	}, bdb, pdb)

	// Deletes, including absent keys.
	for i := 0; i < 2000; i += 97 {
		same(t, "Delete", func(db backend) (int, error) {
			return 0, db.Delete(ctx, store.FullEntry(hs[i], store.Value{}))
		}, bdb, pdb)
	}
	same(t, "Delete absent", func(db backend) (int, error) {
		return 0, db.Delete(ctx, store.FullEntry(hs[0], store.Value{}))
	}, bdb, pdb)
	same(t, "DeletePrefix", func(db backend) (int, error) { return 0, db.Delete(ctx, prefixes[3]) }, bdb, pdb)
	same(t, "DeletePrefix absent", func(db backend) (int, error) { return 0, db.Delete(ctx, prefixes[3]) }, bdb, pdb)

	// Reads.
	all := same(t, "export", exportAll, bdb, pdb)
	if len(all) < 2000 {
		t.Fatalf("export has %d entries, want at least 2000", len(all))
	}
	probes := append(slices.Clone(hs), randHashes(r, 300)...)
	for _, p := range prefixes {
		h := p.Hash
		for j := p.Len; j < hashkey.Size; j++ {
			h[j] = byte(r.Uint32())
		}
		probes = append(probes, h)
	}
	for _, n := range []int{4, 8, 9, 16, 17, 20} {
		h := nest
		for j := n; j < hashkey.Size; j++ {
			h[j] ^= 0x5a
		}
		probes = append(probes, h)
	}
	same(t, "HasBatch", func(db backend) ([]bool, error) { return db.HasBatch(ctx, probes) }, bdb, pdb)
	// GetBatch, with repeats, and in queries of 64 keys.
	getIn := append(slices.Clone(probes), probes[1], probes[2100], probes[1501], probes[1])
	getBatch := func(db backend) ([]any, error) {
		vs, found, err := db.GetBatch(ctx, getIn)
		return []any{vs, found}, err
	}
	same(t, "GetBatch", getBatch, bdb, pdb)
	same(t, "GetBatch by 64", getBatch, bdb, openSchema(t, &Options{Schema: pdb.opts.Schema, BatchSize: 64}))
	for i, h := range probes {
		if i%5 == 0 {
			same(t, "Has", func(db backend) (bool, error) { return db.Has(ctx, h) }, bdb, pdb)
			same(t, "Get", func(db backend) (store.Value, error) { return db.Get(ctx, h) }, bdb, pdb)
		}
		if i%3 == 0 || i >= 2300 {
			same(t, "Match", func(db backend) ([]any, error) {
				m, ok, err := db.Match(ctx, h)
				return []any{m, ok}, err
			}, bdb, pdb)
		}
	}
	type scanCase struct {
		prefix      []byte
		bits, limit int
	}
	cases := []scanCase{{nil, 0, 0}, {nil, 0, 7}, {[]byte{0xff, 0xff}, 16, 0}, {[]byte{0}, 1, 0}, {[]byte{0x80}, 1, 1500}, {[]byte{1, 2, 3, 4, 0xff}, 40, 0}}
	for i := range 60 {
		src := probes[r.IntN(len(probes))]
		bits := []int{2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 5, 13, 256}[i%14]
		cases = append(cases, scanCase{src[:(bits+7)/8], bits, []int{0, 0, 1, 3}[i%4]})
	}
	for _, c := range cases {
		what := fmt.Sprintf("Scan(%x, %d, %d)", c.prefix, c.bits, c.limit)
		same(t, what, func(db backend) ([]store.Entry, error) { return collect(db, c.prefix, c.bits, c.limit) }, bdb, pdb)
		same(t, "Count "+what, func(db backend) ([]int64, error) {
			f, p, err := db.Count(ctx, c.prefix, c.bits)
			return []int64{f, p}, err
		}, bdb, pdb)
	}
	same(t, "Scan past end", func(db backend) ([]store.Entry, error) { return collect(db, []byte{1}, 9, 0) }, bdb, pdb)
	same(t, "Stats counts", func(db backend) ([]int64, error) {
		s, err := db.Stats(ctx)
		return []int64{s.Entries, s.PrefixEntries}, err
	}, bdb, pdb)
	same(t, "Verify", func(db backend) (int, error) { return 0, db.Verify(ctx) }, bdb, pdb)
}

// TestScanPages checks Scan's paging across several pages with a callback
// that stops early and one that calls the DB.
func TestScanPages(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	r := rand.New(rand.NewPCG(3, 4))
	hs := randHashes(r, 2*scanPage+17)
	if _, err := db.Load(ctx, slices.Values(entries(r, hs))); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(hs, func(a, b hashkey.Hash) int { return bytes.Compare(a[:], b[:]) })
	var got []hashkey.Hash
	err := db.ForEach(ctx, func(e store.Entry) error {
		ok, err := db.Has(ctx, e.Hash) // fn may call db
		if !ok || err != nil {
			return fmt.Errorf("Has inside Scan: %v, %v", ok, err)
		}
		got = append(got, e.Hash)
		return nil
	})
	if err != nil || !slices.Equal(got, hs) {
		t.Fatalf("ForEach: %d entries, err %v; want %d in order", len(got), err, len(hs))
	}
	stop := errors.New("stop")
	n := 0
	err = db.Scan(ctx, nil, 0, 0, func(store.Entry) error {
		if n++; n == scanPage+5 {
			return stop
		}
		return nil
	})
	if err != stop || n != scanPage+5 {
		t.Fatalf("Scan stopped with %v after %d entries, want %v after %d", err, n, stop, scanPage+5)
	}
	got = got[:0]
	err = db.Scan(ctx, nil, 0, scanPage+1, func(e store.Entry) error { got = append(got, e.Hash); return nil })
	if err != nil || !slices.Equal(got, hs[:scanPage+1]) {
		t.Fatalf("Scan limit %d: %d entries, err %v", scanPage+1, len(got), err)
	}
}

// TestAddIfAbsentConcurrent adds the same keys from goroutines sharing a
// DB and from two DBs on one schema (two pools, as two processes would
// have): every key must be reported new exactly once.
func TestAddIfAbsentConcurrent(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	dbs := []*DB{openSchema(t, &Options{Schema: schema}), openSchema(t, &Options{Schema: schema, BatchSize: 64})}
	r := rand.New(rand.NewPCG(5, 6))
	hs := randHashes(r, 2000)
	const workers = 8
	counts := make([][]int, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		counts[w] = make([]int, len(hs))
		order := rand.New(rand.NewPCG(uint64(w), 9)).Perm(len(hs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := dbs[w%len(dbs)]
			for start := 0; start < len(order); start += 150 {
				idx := order[start:min(start+150, len(order))]
				if w%4 == 3 { // single adds
					for _, i := range idx {
						added, err := db.Add(ctx, hs[i], store.Value{})
						if err != nil {
							errs <- err
							return
						}
						if added {
							counts[w][i]++
						}
					}
					continue
				}
				batch := make([]store.Entry, 0, len(idx)+1)
				for _, i := range idx {
					batch = append(batch, store.Entry{Hash: hs[i]})
				}
				batch = append(batch, batch[0]) // a repeat within the batch
				added, err := db.AddBatch(ctx, batch)
				if err != nil {
					errs <- err
					return
				}
				if added[len(added)-1] {
					errs <- fmt.Errorf("repeated key reported added twice in one batch")
					return
				}
				for j, i := range idx {
					if added[j] {
						counts[w][i]++
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	perWorker := make([]int, workers)
	for i := range hs {
		total := 0
		for w := range workers {
			total += counts[w][i]
			perWorker[w] += counts[w][i]
		}
		if total != 1 {
			t.Fatalf("key %d reported added %d times", i, total)
		}
	}
	t.Logf("keys added per worker: %v", perWorker)
	full, _, err := dbs[0].Count(ctx, nil, 0)
	if err != nil || full != int64(len(hs)) {
		t.Fatalf("Count = %d, %v; want %d", full, err, len(hs))
	}
}

// TestConcurrentLoad runs two Loads of overlapping input through two DBs:
// the keys added by both add up to the distinct keys.
func TestConcurrentLoad(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	a, b := openSchema(t, &Options{Schema: schema}), openSchema(t, &Options{Schema: schema})
	r := rand.New(rand.NewPCG(7, 7))
	es := entries(r, randHashes(r, 3000))
	var ra, rb store.LoadResult
	var ea, eb error
	var wg sync.WaitGroup
	wg.Go(func() { ra, ea = a.Load(ctx, slices.Values(es[:2000])) })
	wg.Go(func() { rb, eb = b.Load(ctx, slices.Values(es[1000:])) })
	wg.Wait()
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	if ra.Added+rb.Added != 3000 || ra.Present+rb.Present != 1000 {
		t.Fatalf("loads added %d+%d, present %d+%d; want 3000 added, 1000 present", ra.Added, rb.Added, ra.Present, rb.Present)
	}
}

func TestProfile(t *testing.T) {
	schema := newSchema(t)
	ctx, u := context.Background(), testURL(t)
	db, err := Open(ctx, u, &Options{Schema: schema, Profile: "urlhash+sha256;unicode=17.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, u, &Options{Schema: schema, Profile: "safebrowsing"}); !errors.Is(err, store.ErrProfileMismatch) {
		t.Fatalf("Open with another profile: %v, want ErrProfileMismatch", err)
	}
	db = openSchema(t, &Options{Schema: schema})
	if got := db.profileName(); got != "urlhash+sha256;unicode=17.0.0" {
		t.Fatalf("Profile() = %q, want the recorded one", got)
	}
	// An index created without a profile records the first one asked for.
	other := newSchema(t)
	openSchema(t, &Options{Schema: other}).Close()
	if db := openSchema(t, &Options{Schema: other, Profile: "p1"}); db.profileName() != "p1" {
		t.Fatalf("Profile() = %q, want p1", db.profileName())
	}
	if _, err := Open(ctx, u, &Options{Schema: other, Profile: "p2"}); !errors.Is(err, store.ErrProfileMismatch) {
		t.Fatalf("Open with p2: %v, want ErrProfileMismatch", err)
	}
}

func TestMustExistReadOnlyFormat(t *testing.T) {
	schema := newSchema(t)
	ctx, u := context.Background(), testURL(t)
	for _, o := range []Options{{Schema: schema, MustExist: true}, {Schema: schema, ReadOnly: true}} {
		if _, err := Open(ctx, u, &o); !errors.Is(err, store.ErrNoIndex) {
			t.Fatalf("Open(%+v) of a missing index: %v, want ErrNoIndex", o, err)
		}
	}
	w := openSchema(t, &Options{Schema: schema})
	h := hashkey.Sum([]byte("x"))
	if err := w.Put(context.Background(), h, store.Value{}); err != nil {
		t.Fatal(err)
	}
	ro := openSchema(t, &Options{Schema: schema, ReadOnly: true})
	if ok, err := ro.Has(context.Background(), h); !ok || err != nil {
		t.Fatalf("read-only Has = %v, %v", ok, err)
	}
	if err := ro.Put(context.Background(), h, store.Value{}); !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("read-only Put: %v, want ErrReadOnly", err)
	}
	if _, err := ro.Load(context.Background(), slices.Values([]store.Entry{{Hash: h}})); !errors.Is(err, store.ErrReadOnly) {
		t.Fatalf("read-only Load: %v, want ErrReadOnly", err)
	}
	// A newer format is refused; Verify catches a missing record.
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	meta := pgx.Identifier{schema, "meta"}.Sanitize()
	if _, err := conn.Exec(ctx, `UPDATE `+meta+` SET value = '99' WHERE name = 'format'`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, u, &Options{Schema: schema}); !errors.Is(err, store.ErrFormat) {
		t.Fatalf("Open of format 99: %v, want ErrFormat", err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM `+meta+` WHERE name = 'format'`); err != nil {
		t.Fatal(err)
	}
	if err := w.Verify(context.Background()); !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("Verify without a format record: %v, want ErrCorrupt", err)
	}
}

func TestBadPrefixLength(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	h := hashkey.Sum([]byte("x"))
	for _, n := range []int{0, 3, 32} {
		if err := db.PutPrefix(ctx, h[:n], store.Value{}); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("PutPrefix(%d bytes): %v, want ErrPrefixLength", n, err)
		}
	}
	for _, n := range []int{-1, 2, 33} {
		if err := db.Delete(ctx, store.Entry{Hash: h, Len: n}); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("Delete(Len %d): %v, want ErrPrefixLength", n, err)
		}
		bad := []store.Entry{{Hash: h}, {Hash: h, Len: n}}
		if err := db.PutBatch(ctx, bad); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("PutBatch(Len %d): %v, want ErrPrefixLength", n, err)
		}
		if _, err := db.AddBatch(ctx, bad); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("AddBatch(Len %d): %v, want ErrPrefixLength", n, err)
		}
		if _, err := db.Load(ctx, slices.Values(bad)); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("Load(Len %d): %v, want ErrPrefixLength", n, err)
		}
	}
	for _, c := range []struct {
		prefix []byte
		bits   int
	}{{nil, 4}, {h[:1], 9}, {h[:], 257}, {h[:], -1}} {
		if err := db.Scan(ctx, c.prefix, c.bits, 0, func(store.Entry) error { return nil }); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("Scan(%d bytes, %d bits): %v, want ErrPrefixLength", len(c.prefix), c.bits, err)
		}
		if _, _, err := db.Count(ctx, c.prefix, c.bits); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("Count(%d bytes, %d bits): %v, want ErrPrefixLength", len(c.prefix), c.bits, err)
		}
	}
	// Nothing of the refused writes is stored.
	if n, p, err := db.Count(ctx, nil, 0); n != 0 || p != 0 || err != nil {
		t.Fatalf("Count after refused writes = %d, %d, %v", n, p, err)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	h := hashkey.Sum([]byte("x"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	calls := map[string]error{
		"Put":       db.Put(ctx, h, store.Value{}),
		"PutPrefix": db.PutPrefix(ctx, h[:4], store.Value{}),
		"PutBatch":  db.PutBatch(ctx, []store.Entry{{Hash: h}}),
		"Delete":    db.Delete(ctx, store.FullEntry(h, store.Value{})),
		"Scan":      db.Scan(ctx, nil, 0, 0, func(store.Entry) error { return nil }),
		"ForEach":   db.ForEach(ctx, func(store.Entry) error { return nil }),
		"Verify":    db.Verify(ctx),
		"Sync":      db.Sync(ctx),
	}
	_, calls["Get"] = db.Get(ctx, h)
	_, calls["Has"] = db.Has(ctx, h)
	_, calls["HasBatch"] = db.HasBatch(ctx, []hashkey.Hash{h})
	_, _, calls["GetBatch"] = db.GetBatch(ctx, []hashkey.Hash{h})
	_, calls["Add"] = db.Add(ctx, h, store.Value{})
	_, calls["AddBatch"] = db.AddBatch(ctx, []store.Entry{{Hash: h}})
	_, _, calls["Match"] = db.Match(ctx, h)
	_, _, calls["Count"] = db.Count(ctx, nil, 0)
	_, calls["Load"] = db.Load(ctx, slices.Values([]store.Entry{{Hash: h}}))
	_, calls["Stats"] = db.Stats(ctx)
	for name, err := range calls {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func TestPathRedacted(t *testing.T) {
	db := openTestDB(t, nil)
	if got, want := db.Path(), Redact(testURL(t)); got != want {
		t.Fatalf("Path() = %q, want %q", got, want)
	}
	if _, err := Open(context.Background(), "postgres://u:secret@127.0.0.1:1/db?connect_timeout=x", nil); err == nil ||
		bytes.Contains([]byte(err.Error()), []byte("secret")) {
		t.Fatalf("Open with a bad connection string: %v (want an error without the password)", err)
	}
}

func TestStatsVerify(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, &Options{Profile: "urlhash+sha256;unicode=17.0.0"})
	r := rand.New(rand.NewPCG(9, 9))
	if _, err := db.Load(ctx, slices.Values(entries(r, randHashes(r, 500)))); err != nil {
		t.Fatal(err)
	}
	if err := db.PutPrefix(ctx, []byte{1, 2, 3, 4}, store.Value{}); err != nil {
		t.Fatal(err)
	}
	s, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != 500 || s.PrefixEntries != 1 || s.FormatVersion != FormatVersion || s.Profile != "urlhash+sha256;unicode=17.0.0" ||
		s.DiskBytes <= 0 {
		t.Fatalf("Stats = %+v", s)
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}
