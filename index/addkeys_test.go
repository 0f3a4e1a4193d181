package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestAddKeysModel: AddKeys answers as AddBatch of the same keys as bare
// entries on an index without a key table (the slow, obviously correct
// version), among puts of values (keys in Badger), deletes and merges,
// with a key table and without one (in memory: AddKeys is AddBatch).
func TestAddKeysModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		mem  bool
		opts *Options
	}{
		{"key-table", false, &Options{keyTableDelta: 40}},
		{"in-memory", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t, tc.mem, tc.opts)
			ref := openTestDB(t, false, &Options{NoKeyTable: true})
			if !tc.mem && !db.st.hasKeyTable() {
				t.Fatal("no key table")
			}
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(1, 2))
			pool := make([]hashkey.Hash, 300)
			for i := range pool {
				pool[i] = hashkey.Sum(fmt.Appendf(nil, "%d", i))
			}
			for step := range 400 {
				switch op := rng.IntN(10); {
				case op < 6:
					keys := make([]hashkey.Hash, rng.IntN(50))
					es := make([]store.Entry, len(keys))
					for i := range keys {
						keys[i] = pool[rng.IntN(len(pool))]
						es[i] = store.FullEntry(keys[i], store.Value{})
					}
					in := slices.Clone(keys)
					got := make([]bool, len(keys))
					var answered []bool
					rec := &Record{Key: fmt.Sprint("r", step), TTL: time.Hour, Answer: func(added []bool) []byte {
						answered = slices.Clone(added)
						return nil
					}}
					err := db.AddKeys(ctx, keys, got, rec)
					want, wantErr := ref.AddBatch(ctx, es)
					if fmt.Sprint(got, err) != fmt.Sprint(want, wantErr) {
						t.Fatalf("step %d: AddKeys %v %v, AddBatch %v %v", step, got, err, want, wantErr)
					}
					if !slices.Equal(answered, got) {
						t.Fatalf("step %d: the record's answer %v, AddKeys %v", step, answered, got)
					}
					if !slices.Equal(keys, in) {
						t.Fatalf("step %d: AddKeys changed its keys", step)
					}
				case op < 8:
					es := []store.Entry{store.FullEntry(pool[rng.IntN(len(pool))], store.Value{Text: []byte("v")})}
					if err, want := db.PutBatch(ctx, slices.Clone(es)), ref.PutBatch(ctx, es); fmt.Sprint(err) != fmt.Sprint(want) {
						t.Fatalf("step %d: PutBatch %v, reference %v", step, err, want)
					}
				default:
					e := store.FullEntry(pool[rng.IntN(len(pool))], store.Value{})
					if err, want := db.Delete(ctx, e), ref.Delete(ctx, e); fmt.Sprint(err) != fmt.Sprint(want) {
						t.Fatalf("step %d: Delete %v, reference %v", step, err, want)
					}
				}
			}
			got, err := db.HasBatch(ctx, pool)
			want, wantErr := ref.HasBatch(ctx, pool)
			if fmt.Sprint(got, err) != fmt.Sprint(want, wantErr) {
				t.Fatalf("HasBatch %v %v, reference %v %v", got, err, want, wantErr)
			}
			if a, b := db.entries.Load(), ref.entries.Load(); a != b {
				t.Fatalf("%d entries counted, reference %d", a, b)
			}
			if err := db.Verify(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAddKeysArgs: answers of another length are refused, and an empty
// batch stores its record.
func TestAddKeysArgs(t *testing.T) {
	db := openTestDB(t, false, nil)
	ctx := context.Background()
	if err := db.AddKeys(ctx, make([]hashkey.Hash, 2), make([]bool, 1), nil); err == nil {
		t.Error("AddKeys of 2 keys with 1 answer: no error")
	}
	rec := &Record{Key: "empty", TTL: time.Hour, Answer: func([]bool) []byte { return []byte("a") }}
	if err := db.AddKeys(ctx, nil, nil, rec); err != nil {
		t.Fatal(err)
	}
	if b, ok, err := db.Recorded("empty"); string(b) != "a" || !ok || err != nil {
		t.Errorf("Recorded: %q %v %v, want the record", b, ok, err)
	}
}

// TestAddKeysAllocs: an add of present keys through the key table
// allocates nothing per key (its scratch is reused). The count takes in
// the index's background work too (a filter snapshot, the key table's
// merges), hence a bound well below one a key rather than 0;
// BenchmarkAddKeys measures 4 a batch.
func TestAddKeysAllocs(t *testing.T) {
	db := openTestDB(t, false, nil)
	ctx := context.Background()
	keys := randHashes(rand.New(rand.NewPCG(3, 4)), 4096)
	added := make([]bool, len(keys))
	if err := db.AddKeys(ctx, keys, added, nil); err != nil {
		t.Fatal(err)
	}
	allocs := func(n int) float64 {
		return testing.AllocsPerRun(20, func() {
			if err := db.AddKeys(ctx, keys[:n], added[:n], nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(64), allocs(len(keys))
	t.Logf("allocations: %v for 64 keys, %v for %d", small, large, len(keys))
	if large >= float64(len(keys)/4) {
		t.Errorf("%v allocations for %d keys, %v for 64: allocations per key", large, len(keys), small)
	}
}

// BenchmarkAddKeys adds batches of 4,096 bare keys to an index with a
// key table: present keys (a seen-set's steady state) through AddKeys and
// through AddBatch of entries, and new keys through AddKeys.
func BenchmarkAddKeys(b *testing.B) {
	const n = 4096
	ctx := context.Background()
	present := func(b *testing.B) (*DB, []hashkey.Hash) {
		db := openTestDB(b, false, nil)
		keys := randHashes(rand.New(rand.NewPCG(5, 6)), n)
		if err := db.AddKeys(ctx, keys, make([]bool, n), nil); err != nil {
			b.Fatal(err)
		}
		return db, keys
	}
	b.Run("present/keys", func(b *testing.B) {
		db, keys := present(b)
		added := make([]bool, n)
		b.ReportAllocs()
		for b.Loop() {
			if err := db.AddKeys(ctx, keys, added, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("present/entries", func(b *testing.B) {
		db, keys := present(b)
		es := make([]store.Entry, n)
		b.ReportAllocs()
		for b.Loop() {
			for i := range keys {
				es[i] = store.FullEntry(keys[i], store.Value{})
			}
			if _, err := db.AddBatch(ctx, es); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("new/keys", func(b *testing.B) {
		db := openTestDB(b, false, nil)
		rng := rand.New(rand.NewPCG(7, 8))
		keys := make([]hashkey.Hash, n)
		added := make([]bool, n)
		b.ReportAllocs()
		for b.Loop() {
			for i := range keys {
				binaryRand(rng, &keys[i])
			}
			if err := db.AddKeys(ctx, keys, added, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// binaryRand fills h with random bytes.
func binaryRand(rng *rand.Rand, h *hashkey.Hash) {
	for i := 0; i < len(h); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			h[i+j] = byte(v >> (8 * j))
		}
	}
}

// TestKeyTableMemTable: an index with a key table gets Badger memtables
// of KeyTableMemTableSize unless MemTableSize is set; one without keeps
// DefaultMemTableSize.
func TestKeyTableMemTable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		dir  string
		opts *Options
		want int64
	}{
		{"new", dir, nil, KeyTableMemTableSize},
		{"reopened", dir, nil, KeyTableMemTableSize},
		{"set", dir, &Options{MemTableSize: 8 << 20}, 8 << 20},
		{"no key table", t.TempDir(), &Options{NoKeyTable: true}, DefaultMemTableSize},
	} {
		db := mustOpen(t, tc.dir, tc.opts)
		if got := db.bo.MemTableSize; got != tc.want {
			t.Errorf("%s: MemTableSize %d, want %d", tc.name, got, tc.want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkValuedWrites measures what the key table's smaller Badger
// memtable (KeyTableMemTableSize) costs the entries that still go to
// Badger: puts of batches of 1,000 new entries with a 100-byte text, and
// with an expiry, on an index with a key table, with each memtable size.
func BenchmarkValuedWrites(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int64{KeyTableMemTableSize, 8 << 20, DefaultMemTableSize} {
		for _, kind := range []string{"text", "ttl"} {
			b.Run(fmt.Sprintf("%s/memtable=%dMiB", kind, size>>20), func(b *testing.B) {
				db := openTestDB(b, false, &Options{MemTableSize: size})
				rng := rand.New(rand.NewPCG(9, 10))
				es := make([]store.Entry, 1000)
				text := make([]byte, 100)
				b.ReportAllocs()
				for b.Loop() {
					for i := range es {
						var h hashkey.Hash
						binaryRand(rng, &h)
						es[i] = store.FullEntry(h, store.Value{})
						if kind == "text" {
							es[i].Value.Text = text
						} else {
							es[i].Value.Expires = time.Now().Add(time.Hour)
						}
					}
					if err := db.PutBatch(ctx, es); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(es)), "ns/entry")
			})
		}
	}
}
