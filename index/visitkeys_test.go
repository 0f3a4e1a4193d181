package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/internal/fakeclock"
	"github.com/urlhash/urlhash/store"
)

// TestVisitKeysAgreesWithModel drives VisitKeys on a key-table index
// (format 3: the bare path, visitHashes) and VisitBatch on an index
// without a key table (every entry in Badger: visitLocked) with the same
// operations and clock, and compares every answer and, after each step,
// every key's stored value and the counts. The steps mix visits with
// repeated keys, adds of entries with text, data and expiries, deletes
// and clock jumps; the key table's delta is small, so that rows are found
// in its files as well as in the delta.
func TestVisitKeysAgreesWithModel(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			clock := fakeclock.New(fakeclock.Start())
			bare := openTestDB(t, false, &Options{now: clock.Now, keyTableDelta: 64})
			model := openTestDB(t, false, &Options{now: clock.Now, NoKeyTable: true})
			if !bare.st.visitsBare() || model.st.visitsBare() {
				t.Fatalf("visitsBare: key table %v, without %v; want true, false", bare.st.visitsBare(), model.st.visitsBare())
			}
			r := rand.New(rand.NewPCG(seed, 7))
			keys := randHashes(rand.New(rand.NewPCG(seed, 8)), 200)
			pick := func() hashkey.Hash { return keys[r.IntN(len(keys))] }
			afters := []time.Duration{time.Hour, 0, -time.Second, 90 * time.Minute}
			for step := range 400 {
				switch op := r.IntN(10); {
				case op < 6:
					batch := make([]hashkey.Hash, 1+r.IntN(60))
					for i := range batch {
						batch[i] = pick()
					}
					after := afters[r.IntN(len(afters))]
					got := make([]bool, len(batch))
					if err := bare.VisitKeys(ctx, batch, after, got, nil); err != nil {
						t.Fatal(err)
					}
					es := make([]store.Entry, len(batch))
					for i := range batch {
						es[i] = store.FullEntry(batch[i], store.Value{})
					}
					want, err := model.VisitBatch(ctx, es, after)
					if err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("step %d: visit (after %v) of %x (position %d): new %v, model %v", step, after, batch[i][:4], i, got[i], want[i])
						}
					}
				case op < 8:
					v := store.Value{}
					switch r.IntN(4) {
					case 0:
						v.Text = []byte("https://example.com/" + fmt.Sprint(step))
					case 1:
						v.Data = []byte{byte(step)}
					case 2:
						v.Expires = clock.Now().Add(time.Duration(1+r.IntN(3)) * time.Hour)
					}
					e := []store.Entry{store.FullEntry(pick(), v)}
					if err := bare.PutBatch(ctx, e); err != nil {
						t.Fatal(err)
					}
					if err := model.PutBatch(ctx, e); err != nil {
						t.Fatal(err)
					}
				case op < 9:
					e := store.FullEntry(pick(), store.Value{})
					errA, errB := bare.Delete(ctx, e), model.Delete(ctx, e)
					if (errA == nil) != (errB == nil) {
						t.Fatalf("step %d: delete %x: %v, model %v", step, e.Hash[:4], errA, errB)
					}
				default:
					// Often exactly a revisit period, or a second short.
					steps := []time.Duration{time.Second, time.Hour - time.Second, time.Hour, 90 * time.Minute, time.Duration(r.IntN(3*3600)) * time.Second}
					clock.Advance(steps[r.IntN(len(steps))])
				}
				if step%20 == 19 {
					compareIndexes(t, ctx, step, bare, model, keys)
				}
			}
			compareIndexes(t, ctx, -1, bare, model, keys)
		})
	}
}

// compareIndexes fails t unless a and b hold the same values for keys and
// count the same entries.
func compareIndexes(t *testing.T, ctx context.Context, step int, a, b *DB, keys []hashkey.Hash) {
	t.Helper()
	for _, h := range keys {
		va, errA := a.Get(ctx, h)
		vb, errB := b.Get(ctx, h)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("step %d: get %x: %v, model %v", step, h[:4], errA, errB)
		}
		if errA != nil {
			continue
		}
		if !va.FirstSeen.Equal(vb.FirstSeen) || !va.LastSeen.Equal(vb.LastSeen) || !va.Expires.Equal(vb.Expires) ||
			string(va.Text) != string(vb.Text) || string(va.Data) != string(vb.Data) {
			t.Fatalf("step %d: get %x: %+v, model %+v", step, h[:4], va, vb)
		}
	}
	sa, err := a.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sa.Entries != sb.Entries || sa.Expiring != sb.Expiring {
		t.Fatalf("step %d: %d entries (%d expiring), model %d (%d)", step, sa.Entries, sa.Expiring, sb.Entries, sb.Expiring)
	}
}

// TestVisitKeysAllocs holds visitHashes to its promise: a batch of
// stored keys not due allocates nothing per key (a bound a quarter of the
// keys, as TestAddKeysAllocs: the race detector's sync.Pool drops the
// scratch at random).
func TestVisitKeysAllocs(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, false, nil)
	keys := randHashes(rand.New(rand.NewPCG(1, 2)), 4096)
	visited := make([]bool, len(keys))
	if err := db.VisitKeys(ctx, keys, time.Hour, visited, nil); err != nil {
		t.Fatal(err)
	}
	allocs := func(n int) float64 {
		return testing.AllocsPerRun(20, func() {
			if err := db.VisitKeys(ctx, keys[:n], time.Hour, visited[:n], nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(64), allocs(len(keys))
	t.Logf("allocations: %v for 64 keys, %v for %d", small, large, len(keys))
	for i, v := range visited {
		if v {
			t.Fatalf("key %d new at its second visit", i)
		}
	}
	if large >= float64(len(keys)/4) {
		t.Errorf("%v allocations for %d keys, %v for 64: allocations per key", large, len(keys), small)
	}
}

// TestVisitKeysReopen: first sightings, logged as rows with columns
// (keytable.Batch.AddedCols), keep their times through a reopen, which
// replays the key table's log.
func TestVisitKeysReopen(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(fakeclock.Start())
	dir := t.TempDir()
	db, err := Open(dir, &Options{now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	keys := randHashes(rand.New(rand.NewPCG(3, 4)), 100)
	visited := make([]bool, len(keys))
	if err := db.VisitKeys(ctx, keys, time.Hour, visited, nil); err != nil {
		t.Fatal(err)
	}
	seen := clock.Now().Truncate(time.Second)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if db, err = Open(dir, &Options{now: clock.Now}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, h := range keys {
		v, err := db.Get(ctx, h)
		if err != nil || !v.FirstSeen.Equal(seen) || !v.LastSeen.Equal(seen) {
			t.Fatalf("%x after a reopen: %+v, %v; want first and last seen %v", h[:4], v, err, seen)
		}
	}
	if err := db.VisitKeys(ctx, keys, time.Hour, visited, nil); err != nil {
		t.Fatal(err)
	}
	for i, v := range visited {
		if v {
			t.Fatalf("key %d new again a minute after its first sighting", i)
		}
	}
}
