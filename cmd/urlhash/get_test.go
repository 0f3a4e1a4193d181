package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/wire"
)

// TestGetOnServer: get on a server asks for each batch of inputs in one
// request (store.Backend.GetBatch: /v1/get-batch), not one a hash, and
// prints what get on a directory prints.
func TestGetOnServer(t *testing.T) {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := server.New(db, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	var mu sync.Mutex
	paths := map[string]int{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()

	if code, _, errs := runCLI(t, "https://a.example/\nhttps://b.example/\n", "add", "--store-url", "--db", ts.URL); code != exitOK {
		t.Fatalf("add: exit %d, %q", code, errs)
	}
	code, out, errs := runCLI(t, "https://b.example/\nhttps://c.example/\nhttps://a.example/\n", "get", "--db", ts.URL)
	if code != exitNotFound {
		t.Fatalf("get: exit %d, %q; want %d (one input absent)", code, errs, exitNotFound)
	}
	var got []string
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if f[0] == "absent" {
			f = append(f[:1], "-") // absent, the hash: no text
		}
		got = append(got, f[0]+" "+f[len(f)-1])
	}
	want := []string{"present https://b.example/", "absent -", "present https://a.example/"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("get printed\n%s\nwant (status, last field)\n%s", out, strings.Join(want, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if paths[wire.PathGetBatch] != 1 || paths[wire.PathGet] != 0 {
		t.Errorf("get of 3 inputs sent %d requests to %s and %d to %s; want 1 and 0",
			paths[wire.PathGetBatch], wire.PathGetBatch, paths[wire.PathGet], wire.PathGet)
	}
}
