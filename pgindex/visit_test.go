package pgindex

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/urlhash/urlhash/internal/fakeclock"
	"github.com/urlhash/urlhash/store"
)

// TestVisitConcurrent visits the same keys through two DBs from several
// goroutines: each key is new exactly once per revisit interval.
func TestVisitConcurrent(t *testing.T) {
	schema := newSchema(t)
	clock := fakeclock.New(fakeclock.Start())
	dbs := []*DB{openSchema(t, &Options{Schema: schema, Now: clock.Now}),
		openSchema(t, &Options{Schema: schema, BatchSize: 64, Now: clock.Now})}
	hs := randHashes(rand.New(rand.NewPCG(7, 8)), 1000)
	const workers = 6
	for round := range 3 {
		var news atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			order := rand.New(rand.NewPCG(uint64(w), uint64(round))).Perm(len(hs))
			wg.Go(func() {
				db := dbs[w%len(dbs)]
				for start := 0; start < len(order); start += 100 {
					var batch []store.Entry
					for _, i := range order[start:min(start+100, len(order))] {
						batch = append(batch, store.FullEntry(hs[i], store.Value{}))
					}
					got, err := db.VisitBatch(context.Background(), batch, time.Hour)
					if err != nil {
						errs <- err
						return
					}
					for _, ok := range got {
						if ok {
							news.Add(1)
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := news.Load(); got != int64(len(hs)) {
			t.Fatalf("round %d: %d visits reported new, want %d", round, got, len(hs))
		}
		clock.Advance(time.Hour)
	}
}

// TestUpgradeTimes opens a schema made before the time columns: a
// read-only open is refused, a writable one adds them and keeps the rows.
func TestUpgradeTimes(t *testing.T) {
	schema := newSchema(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`CREATE SCHEMA ` + s,
		`CREATE TABLE ` + s + `.meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`INSERT INTO ` + s + `.meta VALUES ('format', '1')`,
		`CREATE TABLE ` + s + `.entries (h BYTEA PRIMARY KEY CHECK (length(h) = 32), text BYTEA, data BYTEA)`,
		`CREATE TABLE ` + s + `.prefixes (p BYTEA PRIMARY KEY CHECK (length(p) BETWEEN 4 AND 31), text BYTEA, data BYTEA)`,
		`INSERT INTO ` + s + `.entries VALUES (decode(repeat('ab', 32), 'hex'), 'old', NULL)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := Open(ctx, testURL(t), &Options{Schema: schema, ReadOnly: true}); !errors.Is(err, store.ErrFormat) {
		t.Fatalf("read-only open of an old schema: %v, want ErrFormat", err)
	}
	db := openSchema(t, &Options{Schema: schema})
	var h [32]byte
	for i := range h {
		h[i] = 0xab
	}
	v, err := db.Get(context.Background(), h)
	if err != nil || string(v.Text) != "old" {
		t.Fatalf("Get after upgrade = %+v, %v", v, err)
	}
	if got, err := db.VisitBatch(context.Background(), []store.Entry{store.FullEntry(h, store.Value{})}, time.Hour); err != nil || !got[0] {
		t.Fatalf("visit of an old row = %v, %v, want new", got, err)
	}
	ro := openSchema(t, &Options{Schema: schema, ReadOnly: true})
	if v, err := ro.Get(context.Background(), h); err != nil || v.LastSeen.IsZero() {
		t.Fatalf("read-only Get after upgrade = %+v, %v", v, err)
	}
}

func TestPurgeExpired(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(fakeclock.Start())
	db := openTestDB(t, &Options{Now: clock.Now})
	hs := randHashes(rand.New(rand.NewPCG(1, 2)), 3)
	err := db.PutBatch(ctx, []store.Entry{
		store.FullEntry(hs[0], store.Value{Expires: clock.Now().Add(time.Hour)}),
		store.FullEntry(hs[1], store.Value{Expires: clock.Now().Add(2 * time.Hour)}),
		store.FullEntry(hs[2], store.Value{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		advance time.Duration
		want    int64
	}{{59 * time.Minute, 0}, {time.Minute, 1}, {time.Hour, 1}, {time.Hour, 0}} {
		clock.Advance(tc.advance)
		if n, err := db.PurgeExpired(ctx); err != nil || n != tc.want {
			t.Errorf("after %v: PurgeExpired = %d, %v, want %d", tc.advance, n, err, tc.want)
		}
	}
	if s, err := db.Stats(ctx); err != nil || s.Entries != 1 {
		t.Fatalf("Stats after purges: %+v, %v", s, err)
	}
}
