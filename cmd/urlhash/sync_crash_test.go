package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
	mk := func(n int, keep *threatlist.List) *threatlist.List {
		var b threatlist.Builder
		if keep != nil {
			// Half of keep, so that a switch both removes and adds.
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
	a := mk(100000, nil)
	bl := mk(50000, a)
	lists := []*threatlist.List{a, bl}
	// Version 1 is a, version 2 is b: a client holding one gets a DIFF to
	// the other; a client holding none gets a RESET to a.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tok, _ := threatlist.DecodeBase64(req.URL.Query().Get("versionToken"))
		var resp *threatlist.DiffResponse
		switch {
		case len(tok) == 1 && tok[0] == 1:
			resp = threatlist.EncodeDiff(a, bl, []byte{2}, threatlist.DiffOptions{Rice: true})
		case len(tok) == 1 && tok[0] == 2:
			resp = threatlist.EncodeDiff(bl, a, []byte{1}, threatlist.DiffOptions{Rice: true})
		default:
			resp = threatlist.EncodeDiff(nil, a, []byte{1}, threatlist.DiffOptions{Rice: true})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "list")
	pending := 0
	for run := 0; run <= runs; run++ {
		cmd := childCommand("sync", "--db", dir, "--endpoint", ts.URL)
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
		case !got.Equal(st.List) || (!st.List.Equal(lists[0]) && !st.List.Equal(lists[1])):
			t.Fatalf("run %d: the index holds %d entries, not the saved list of %d", run, got.Len(), st.List.Len())
		}
	}
	t.Logf("%d killed runs, %d left an update pending", runs, pending)
}
