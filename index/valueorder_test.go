package index

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestValueThresholds: on disk, values stay in Badger's tree up to its
// largest threshold for the memtable size (none in the value log: a
// memtable flush never syncs it), in memory too.
func TestValueThresholds(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want int64
	}{
		{"key table", Options{}, 15 * KeyTableMemTableSize / 100},
		{"no key table", Options{NoKeyTable: true}, 1 << 20},
		{"in memory", Options{InMemory: true}, 1 << 20},
		{"small memtables", Options{MemTableSize: 1 << 20, NoKeyTable: true}, 15 * (1 << 20) / 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			db := mustOpen(t, t.TempDir(), &o)
			defer db.Close()
			if db.bo.ValueThreshold != tc.want {
				t.Errorf("value threshold %d, want %d", db.bo.ValueThreshold, tc.want)
			}
			if want := tc.want * int64(btoi(!o.InMemory)); db.st.order.threshold != want {
				t.Errorf("ordered from %d bytes, want %d", db.st.order.threshold, want)
			}
		})
	}
}

// TestValueLogWrites: the writes whose values go to the value log (run
// alone, a transaction at a time, the value logs synced after each) keep
// their order and their contents: entries over several transactions, a
// record ahead of them, overwrites, deletions, a reopen.
func TestValueLogWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := func() *Options {
		// Small memtables: a transaction takes at most 1,572 entries.
		return &Options{NoKeyTable: true, MemTableSize: 1 << 20, valueThreshold: 4 << 10}
	}
	db := mustOpen(t, dir, opts())
	r := rand.New(rand.NewPCG(5, 6))
	hs := randHashes(r, 5000)
	want := map[hashkey.Hash][]byte{}
	put := func(round int) {
		var es []store.Entry
		for i, h := range hs {
			n := 10
			if i%500 == round {
				n = 6000 + round // in the value log
			}
			d := bytes.Repeat([]byte{byte(i + round)}, n)
			es = append(es, store.FullEntry(h, store.Value{Data: d}))
			want[h] = d
		}
		answer := bytes.Repeat([]byte{byte(round)}, 5000) // in the value log too
		rec := &Record{Key: fmt.Sprint("round ", round), TTL: time.Hour, Answer: func([]bool) []byte { return answer }}
		if err := db.PutBatchRecorded(ctx, es, rec); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		for h, d := range want {
			v, err := db.Get(ctx, h)
			if err != nil || !bytes.Equal(v.Data, d) {
				t.Fatalf("%s: %x: %d bytes, %v; want %d", when, h[:4], len(v.Data), err, len(d))
			}
		}
		for round := range 3 {
			b, ok, err := db.Recorded(fmt.Sprint("round ", round))
			if err != nil || !ok || !bytes.Equal(b, bytes.Repeat([]byte{byte(round)}, 5000)) {
				t.Fatalf("%s: record of round %d: %d bytes, %v, %v", when, round, len(b), ok, err)
			}
		}
	}
	for round := range 3 {
		put(round)
	}
	for _, h := range hs[:100] {
		if err := db.Delete(ctx, store.FullEntry(h, store.Value{})); err != nil {
			t.Fatal(err)
		}
		delete(want, h)
	}
	check("written")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if logs := valueLogs(t, dir); len(logs) == 0 {
		t.Fatal("no value log")
	}
	db = mustOpen(t, dir, opts())
	defer db.Close()
	check("reopened")
	if err := db.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWriteOrderedSplits: writeOrdered commits what one transaction cannot
// hold in several, in order (a key written twice keeps the later value).
func TestWriteOrderedSplits(t *testing.T) {
	db := mustOpen(t, t.TempDir(), &Options{NoKeyTable: true, MemTableSize: 1 << 20, valueThreshold: 4 << 10})
	defer db.Close()
	var es []*badger.Entry
	for i := range 4000 {
		es = append(es, badger.NewEntry(metaKey(fmt.Sprint("test/", i%3000)), []byte(fmt.Sprint(i))))
	}
	es[0].Value = bytes.Repeat([]byte("v"), 5000)
	if err := db.st.writeEntries(es); err != nil {
		t.Fatal(err)
	}
	err := db.st.bdb.View(func(txn *badger.Txn) error {
		for i := range 3000 {
			want := fmt.Sprint(i)
			if i < 1000 {
				want = fmt.Sprint(i + 3000)
			}
			b, err := getCopy(txn, metaKey(fmt.Sprint("test/", i)))
			if err != nil || string(b) != want {
				return fmt.Errorf("test/%d: %q, %v; want %q", i, b, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
