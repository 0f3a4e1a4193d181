package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
)

// TestSyncKillLoop kills sync with SIGKILL at random points while it
// applies RESETs and large DIFFs that switch the list between two versions
// of 100,000 prefixes, and checks after each kill that the index holds
// exactly the list its saved state names (or, when the kill came after the
// commit point, that readers refuse it until the next sync finishes it).
func TestSyncKillLoop(t *testing.T) {
	ctx := context.Background()
	runs := killRuns(t, 8)
	r := rand.New(rand.NewPCG(11, 12))
	fake := newTwoVersionList(t, r, 100000)
	dir := filepath.Join(t.TempDir(), "list")
	pending := 0
	for run := 0; run <= runs; run++ {
		cmd := childCommand("sync", "--db", dir, "--endpoint", fake.url)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if run < runs {
			time.Sleep(time.Duration(30+r.IntN(900)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		} else if err := cmd.Wait(); err != nil {
			t.Fatalf("the last sync: %v", err)
		}
		if threatlist.Pending(dir) {
			pending++
			if code, _, errs := runCLI(t, "", "lookup", "--db", dir, "--hashes", "00000000"); code != exitError {
				t.Fatalf("run %d: lookup of a pending update: %d %q", run, code, errs)
			}
		}
		// Open (writable: recovers after the kill, finishes a pending
		// update) and compare the index with the saved list.
		db, err := index.Open(dir, nil)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		ls, err := threatlist.Open(ctx, db)
		if err != nil {
			db.Close()
			t.Fatalf("run %d: %v", run, err)
		}
		var b threatlist.Builder
		err = db.Scan(ctx, nil, 0, 0, func(e store.Entry) error { return b.Add(e.Key()) })
		st := ls.State(threatlist.WebRiskName("MALWARE"))
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := b.List()
		switch {
		case st == nil:
			if got.Len() != 0 {
				t.Fatalf("run %d: no list synced, %d entries", run, got.Len())
			}
		case !got.Equal(st.List) || (!st.List.Equal(fake.lists[1]) && !st.List.Equal(fake.lists[2])):
			t.Fatalf("run %d: the index holds %d entries, not the saved list of %d", run, got.Len(), st.List.Len())
		}
	}
	t.Logf("%d killed runs, %d left an update pending", runs, pending)
}

// twoVersionList is a fake Web Risk endpoint (computeDiff) that switches
// a list between two versions: 1, n random prefixes, and 2, half of them
// and n/2 others. A client holding one gets a DIFF to the other (both
// removals and additions); a client holding none, a RESET to version 1.
type twoVersionList struct {
	url   string
	lists map[byte]*threatlist.List // by version
	mu    sync.Mutex
	last  byte // the version of the last answer
}

func newTwoVersionList(t testing.TB, r *rand.Rand, n int) *twoVersionList {
	mk := func(n int, keep *threatlist.List) *threatlist.List {
		var b threatlist.Builder
		if keep != nil {
			i := 0
			for e := range keep.All() {
				if i%2 == 0 {
					b.Add(e)
				}
				i++
			}
		}
		e := make([]byte, 4)
		for range n {
			for j := range e {
				e[j] = byte(r.Uint32())
			}
			b.Add(e)
		}
		return b.List()
	}
	a := mk(n, nil)
	f := &twoVersionList{lists: map[byte]*threatlist.List{1: a, 2: mk(n/2, a)}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tok, _ := threatlist.DecodeBase64(req.URL.Query().Get("versionToken"))
		from, to := byte(0), byte(1)
		if len(tok) == 1 && f.lists[tok[0]] != nil {
			from, to = tok[0], 3-tok[0]
		}
		resp := threatlist.EncodeDiff(f.lists[from], f.lists[to], []byte{to}, threatlist.DiffOptions{Rice: true})
		f.mu.Lock()
		f.last = to
		f.mu.Unlock()
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

// sent returns the version of the last answer.
func (f *twoVersionList) sent() byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}
