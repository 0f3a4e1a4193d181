package index

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/internal/fakeclock"
	"github.com/urlhash/urlhash/store"
)

func TestVisitRevisitAfter(t *testing.T) {
	ctx := context.Background()
	const after = time.Hour
	// Each step advances the clock, then visits key "a"; want is whether
	// the visit reports it new.
	steps := []struct {
		name    string
		advance time.Duration
		want    bool
	}{
		{"absent", 0, true},
		{"at once", 0, false},
		{"a second short", after - time.Second, false},
		{"half a second short, in the same second", 500 * time.Millisecond, false},
		{"exactly revisitAfter, to the second", 500 * time.Millisecond, true},
		{"just revisited", 0, false},
		{"exactly revisitAfter", after, true},
		{"long after", 100 * after, true},
	}
	for _, mem := range []bool{true, false} {
		clock := fakeclock.New(fakeclock.Start())
		db := openTestDB(t, mem, &Options{now: clock.Now})
		h := hashOf("a")
		start := clock.Now()
		for _, st := range steps {
			clock.Advance(st.advance)
			got, err := db.VisitBatch(ctx, []store.Entry{store.FullEntry(h, store.Value{Text: []byte("u")})}, after)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != st.want {
				t.Errorf("mem=%v %s: new = %v, want %v", mem, st.name, got[0], st.want)
			}
			v, err := db.Get(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			if !v.FirstSeen.Equal(start) || v.LastSeen.Before(start) || string(v.Text) != "u" {
				t.Errorf("mem=%v %s: value %+v, want first seen %v", mem, st.name, v, start)
			}
			if st.want && v.LastSeen.Unix() != clock.Now().Unix() {
				t.Errorf("mem=%v %s: last seen %v, want %v", mem, st.name, v.LastSeen, clock.Now())
			}
		}
	}
}

func TestVisitKeepsAndNever(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(fakeclock.Start())
	db := openTestDB(t, true, &Options{now: clock.Now})
	a, b := hashOf("a"), hashOf("b")
	// A plain entry (no times) is due at its first visit.
	if _, err := db.Add(ctx, a, store.Value{Data: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	got, err := db.VisitBatch(ctx, []store.Entry{store.FullEntry(a, store.Value{}), store.FullEntry(b, store.Value{}),
		store.FullEntry(b, store.Value{})}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0] || !got[1] || got[2] {
		t.Fatalf("visit = %v, want [true true false]", got)
	}
	v, _ := db.Get(ctx, a)
	if string(v.Data) != "\x01" || !v.FirstSeen.Equal(clock.Now()) {
		t.Fatalf("kept value: %+v", v)
	}
	// revisitAfter <= 0: never new again.
	clock.Advance(1000 * time.Hour)
	got, err = db.VisitBatch(ctx, []store.Entry{store.FullEntry(a, store.Value{})}, 0)
	if err != nil || got[0] {
		t.Fatalf("revisit with 0 = %v, %v, want false", got, err)
	}
}

func TestTTLBoundary(t *testing.T) {
	ctx := context.Background()
	for _, mem := range []bool{true, false} {
		clock := fakeclock.New(fakeclock.Start())
		db := openTestDB(t, mem, &Options{now: clock.Now})
		h, p := hashOf("a"), hashOf("p")
		exp := clock.Now().Add(time.Hour)
		keep := hashOf("keep")
		err := db.PutBatch(ctx, []store.Entry{
			store.FullEntry(h, store.Value{Expires: exp}),
			{Hash: p, Len: 4, Value: store.Value{Text: []byte("t"), Expires: exp}},
			store.FullEntry(keep, store.Value{}),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []struct {
			name    string
			advance time.Duration
			live    bool
		}{
			{"written", 0, true},
			{"a second before", time.Hour - time.Second, true},
			{"at expiry", time.Second, false},
			{"after", time.Hour, false},
		} {
			clock.Advance(st.advance)
			has, err := db.Has(ctx, h)
			if err != nil || has != st.live {
				t.Errorf("mem=%v %s: Has = %v, %v, want %v", mem, st.name, has, err, st.live)
			}
			v, err := db.Get(ctx, h)
			if st.live && (err != nil || !v.Expires.Equal(exp)) {
				t.Errorf("mem=%v %s: Get = %+v, %v", mem, st.name, v, err)
			}
			if !st.live && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("mem=%v %s: Get err = %v, want not found", mem, st.name, err)
			}
			hb, err := db.HasBatch(ctx, []hashkey.Hash{h, keep, hashOf("x"), h})
			if err != nil || hb[0] != st.live || !hb[1] || hb[2] || hb[3] != st.live {
				t.Errorf("mem=%v %s: HasBatch = %v, %v", mem, st.name, hb, err)
			}
			m, ok, err := db.Match(ctx, p)
			if err != nil || ok != st.live || (ok && m.Len != 4) {
				t.Errorf("mem=%v %s: Match = %+v %v, %v", mem, st.name, m, ok, err)
			}
			full, prefixes, err := db.Count(ctx, nil, 0)
			want := int64(1)
			if st.live {
				want = 2
			}
			if err != nil || full != want || prefixes != want-1 {
				t.Errorf("mem=%v %s: Count = %d %d, %v", mem, st.name, full, prefixes, err)
			}
			s, err := db.Stats(ctx)
			if err != nil || s.Entries != want || s.PrefixEntries != want-1 || s.Expiring != 2*(want-1) {
				t.Errorf("mem=%v %s: Stats entries=%d prefixes=%d expiring=%d, %v", mem, st.name, s.Entries, s.PrefixEntries, s.Expiring, err)
			}
			n := 0
			if err := db.ForEach(ctx, func(store.Entry) error { n++; return nil }); err != nil || n != int(2*want-1) {
				t.Errorf("mem=%v %s: ForEach saw %d, %v", mem, st.name, n, err)
			}
		}
		// An expired key is absent to add-if-absent.
		added, err := db.Add(ctx, h, store.Value{})
		if err != nil || !added {
			t.Errorf("mem=%v: Add after expiry = %v, %v, want true", mem, added, err)
		}
		if err := db.Verify(ctx); err != nil {
			t.Errorf("mem=%v: Verify: %v", mem, err)
		}
	}
}

// TestTTLPersists reopens an index with expiring entries: the expiry and
// the times survive, and Stats still counts live entries.
func TestTTLPersists(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(fakeclock.Start())
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{now: clock.Now})
	h := hashOf("a")
	exp := clock.Now().Add(time.Hour)
	if _, err := db.VisitBatch(ctx, []store.Entry{store.FullEntry(h, store.Value{Expires: exp})}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, &Options{now: clock.Now})
	defer db.Close()
	v, err := db.Get(ctx, h)
	if err != nil || !v.Expires.Equal(exp) || !v.LastSeen.Equal(clock.Now()) {
		t.Fatalf("Get after reopen = %+v, %v", v, err)
	}
	clock.Advance(time.Hour)
	s, err := db.Stats(ctx)
	if err != nil || s.Entries != 0 || s.Expiring != 0 {
		t.Fatalf("Stats after expiry: %+v, %v", s, err)
	}
}

// TestVisitConcurrent visits the same keys from several goroutines: each
// key is new exactly once per revisit interval.
func TestVisitConcurrent(t *testing.T) {
	clock := fakeclock.New(fakeclock.Start())
	db := openTestDB(t, true, &Options{now: clock.Now})
	const keys, workers = 500, 6
	var es []store.Entry
	for i := range keys {
		es = append(es, store.FullEntry(hashOf(string(rune('a'+i%26))+string(rune(i))), store.Value{}))
	}
	for round := range 3 {
		var news atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := 0; i < keys; i += 50 {
					// Different batch shapes per worker: overlapping
					// batches in different orders.
					batch := es[i:min(i+50+w*7, keys)]
					got, err := db.VisitBatch(context.Background(), batch, time.Hour)
					if err != nil {
						t.Error(err)
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
		if got := news.Load(); got != keys {
			t.Fatalf("round %d: %d visits reported new, want %d", round, got, keys)
		}
		clock.Advance(time.Hour)
	}
}

func TestDeletePrefix(t *testing.T) {
	ctx := context.Background()
	for _, mem := range []bool{true, false} {
		db := openTestDB(t, mem, nil)
		var es []store.Entry
		for i := range 300 {
			var h hashkey.Hash
			h[0], h[1], h[31] = byte(i%3)<<4, byte(i), 1
			es = append(es, store.FullEntry(h, store.Value{}))
		}
		es = append(es, store.Entry{Hash: hashkey.Hash{0x10, 1, 2, 3}, Len: 4})
		es = append(es, store.Entry{Hash: hashkey.Hash{0x20, 1, 2, 3}, Len: 5})
		if err := db.PutBatch(ctx, es); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			prefix         []byte
			bits           int
			full, prefixes int64
		}{
			{[]byte{0x10}, 4, 100, 1},
			{[]byte{0x10}, 4, 0, 0},
			{[]byte{0x20, 0x05}, 16, 1, 0},
			{[]byte{0x00}, 0, 199, 1},
		} {
			full, prefixes, err := db.DeletePrefix(ctx, tc.prefix, tc.bits)
			if err != nil || full != tc.full || prefixes != tc.prefixes {
				t.Errorf("mem=%v DeletePrefix(%x, %d) = %d %d, %v, want %d %d", mem, tc.prefix, tc.bits, full, prefixes, err, tc.full, tc.prefixes)
			}
		}
		s, err := db.Stats(ctx)
		if err != nil || s.Entries != 0 || s.PrefixEntries != 0 {
			t.Errorf("mem=%v Stats after deleting all: %+v, %v", mem, s, err)
		}
		if err := db.Verify(ctx); err != nil {
			t.Errorf("mem=%v Verify: %v", mem, err)
		}
		if _, _, err := db.DeletePrefix(ctx, []byte{1}, 9); !errors.Is(err, store.ErrPrefixLength) {
			t.Errorf("DeletePrefix(9 bits of 1 byte) = %v, want ErrPrefixLength", err)
		}
	}
}

// TestRecoverKeepsTimes: Recover copies the seen times and the expiry.
func TestRecoverKeepsTimes(t *testing.T) {
	ctx := context.Background()
	clock := fakeclock.New(fakeclock.Start())
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{now: clock.Now})
	h := hashOf("a")
	exp := clock.Now().Add(time.Hour)
	if _, err := db.VisitBatch(ctx, []store.Entry{store.FullEntry(h, store.Value{Expires: exp, Data: []byte{1}})}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	to := t.TempDir() + "/to"
	if _, err := Recover(dir, to, &Options{now: clock.Now}); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, to, &Options{now: clock.Now})
	defer db.Close()
	v, err := db.Get(ctx, h)
	if err != nil || !v.Expires.Equal(exp) || !v.LastSeen.Equal(clock.Now()) || string(v.Data) != "\x01" {
		t.Fatalf("recovered value %+v, %v", v, err)
	}
}
