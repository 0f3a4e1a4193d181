package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// TestFilterRebuildsInBackground: an index the last process did not
// close (its filter snapshot stale) rebuilds its filter and counts in the
// background when its key table is large (here forced): meanwhile every
// read answers from the stores alone, stored keys and absent ones (a
// rebuild reads every key: waiting for it is what a restart of a large
// index must not do), while writes and Stats wait for it and then see the
// exact counts.
func TestFilterRebuildsInBackground(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hs := randHashes(rand.New(rand.NewPCG(61, 62)), 3000)
	db := mustOpen(t, dir, nil)
	if _, err := db.AddBatch(ctx, entriesOf(hs[:2000])); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, hs[2000], store.Value{Text: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	pe, err := store.PrefixEntry(hs[2001][:4], store.Value{Text: []byte("p")})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutBatch(ctx, []store.Entry{pe}); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, dir) // as kill -9 leaves it: no current snapshot
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	release := func() {
		select {
		case <-held:
		default:
			close(held)
		}
	}
	db = mustOpen(t, crashed, &Options{backgroundRebuild: true, beforeFilterLoad: func() { <-held }})
	defer db.Close()
	defer release()
	if db.fin.Load() || !db.rebuilding.Load() {
		t.Fatalf("filter in %v, rebuilding %v: want a rebuild in the background", db.fin.Load(), db.rebuilding.Load())
	}
	var under hashkey.Hash // a hash under the prefix entry, stored nowhere else
	copy(under[:], hs[2001][:4])
	answered := make(chan error, 1)
	go func() {
		answered <- func() error {
			for _, tc := range []struct {
				h    hashkey.Hash
				want bool
			}{{hs[0], true}, {hs[1999], true}, {hs[2000], true}, {hs[2500], false}} {
				if ok, err := db.Has(ctx, tc.h); ok != tc.want || err != nil {
					return fmt.Errorf("Has(%x) while rebuilding = %v, %v", tc.h[:4], ok, err)
				}
			}
			got, err := db.HasBatch(ctx, []hashkey.Hash{hs[0], hs[2501], hs[1500]})
			if err != nil || !slices.Equal(got, []bool{true, false, true}) {
				return fmt.Errorf("HasBatch while rebuilding = %v, %v", got, err)
			}
			if got, err := db.HasBatch(ctx, hs[:loadingBatch+1]); err != nil || slices.Contains(got, false) {
				return fmt.Errorf("HasBatch of %d stored while rebuilding = %v", loadingBatch+1, err)
			}
			if v, err := db.Get(ctx, hs[2000]); err != nil || string(v.Text) != "v" {
				return fmt.Errorf("Get(stored) while rebuilding = %q, %v", v.Text, err)
			}
			if _, err := db.Get(ctx, hs[2502]); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("Get(absent) while rebuilding: %v", err)
			}
			vs, ok, err := db.GetBatch(ctx, []hashkey.Hash{hs[2503], hs[2000]})
			if err != nil || !slices.Equal(ok, []bool{false, true}) || string(vs[1].Text) != "v" {
				return fmt.Errorf("GetBatch while rebuilding = %v, %v", ok, err)
			}
			if m, ok, err := db.Match(ctx, under); !ok || err != nil || string(m.Value.Text) != "p" {
				return fmt.Errorf("Match(under the prefix) while rebuilding = %+v, %v, %v", m, ok, err)
			}
			if _, ok, err := db.Match(ctx, hs[2504]); ok || err != nil {
				return fmt.Errorf("Match(absent) while rebuilding = %v, %v", ok, err)
			}
			return nil
		}()
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read waited for the rebuild")
	}
	waited := make(chan string, 2)
	go func() {
		ok, err := db.Add(ctx, hs[2505], store.Value{})
		waited <- fmt.Sprint("Add ", ok, err)
	}()
	go func() {
		s, err := db.Stats(ctx)
		waited <- fmt.Sprint("Stats ", s.Entries, s.PrefixEntries, err)
	}()
	select {
	case got := <-waited:
		t.Fatalf("%s answered before the rebuild ended", got)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	got := []string{<-waited, <-waited}
	slices.Sort(got)
	// Stats may count the add or not, whichever ran first.
	if got[0] != "Add true <nil>" || (got[1] != "Stats 2001 1 <nil>" && got[1] != "Stats 2002 1 <nil>") {
		t.Errorf("after the rebuild: %q", got)
	}
	if s, err := db.Stats(ctx); err != nil || s.Entries != 2002 || s.PrefixEntries != 1 {
		t.Errorf("Stats = %+v, %v; want 2002 full, 1 prefix", s, err)
	}
}

// TestCloseFinishesRebuild: a writable index closed while its filter is
// rebuilt in the background lets the rebuild finish and writes the
// snapshot, so that the next Open needs no pass (stopped, every later
// Open would rebuild again).
func TestCloseFinishesRebuild(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	hs := randHashes(rand.New(rand.NewPCG(63, 64)), 1000)
	db := mustOpen(t, dir, nil)
	if _, err := db.AddBatch(ctx, entriesOf(hs)); err != nil {
		t.Fatal(err)
	}
	if err := db.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	crashed := copyDir(t, dir)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	db = mustOpen(t, crashed, &Options{backgroundRebuild: true, beforeFilterLoad: func() { close(started) }})
	<-started
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, crashed, &Options{ReadOnly: true, backgroundRebuild: true})
	defer db.Close()
	if db.rebuilding.Load() {
		t.Error("the Open after a Close during the rebuild rebuilds again")
	}
	if s, err := db.Stats(ctx); err != nil || s.Entries != int64(len(hs)) {
		t.Errorf("Stats = %+v, %v; want %d entries", s, err, len(hs))
	}
}
