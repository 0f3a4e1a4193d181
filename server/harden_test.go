package server

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// openMem opens an in-memory index closed at the test's end.
func openMem(t testing.TB) *index.DB {
	t.Helper()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDeletePrefixRefusesEverything: an empty prefix is refused with 400
// and deletes nothing unless all=true says it is meant (testdata/
// delete-prefix.txt, applied in order to one index).
func TestDeletePrefixRefusesEverything(t *testing.T) {
	db := openMem(t)
	keys := []hashkey.Hash{{0x0f, 1}, {0x0f, 2}, {0xa0, 3}}
	for _, h := range keys {
		if err := db.Put(h, store.Value{}); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(New(db, nil))
	defer ts.Close()
	f, err := os.Open("testdata/delete-prefix.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 3 {
			t.Fatalf("delete-prefix.txt:%d: want 3 tab-separated fields", line)
		}
		want, _ := strconv.Atoi(fields[1])
		left, _ := strconv.ParseInt(fields[2], 10, 64)
		resp, err := http.Post(ts.URL+"/v1/delete-prefix?"+fields[0], "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("delete-prefix.txt:%d: %q: status %d, want %d", line, fields[0], resp.StatusCode, want)
		}
		full, _, err := db.Count(nil, 0)
		if err != nil || full != left {
			t.Fatalf("delete-prefix.txt:%d: %q: %d entries left (%v), want %d", line, fields[0], full, err, left)
		}
	}
}
