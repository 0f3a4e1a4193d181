package server

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// TestAddScripts runs testdata/adds.txt against a server of an index with
// a key table (bare keys take Server.addKeys and index.DB.AddKeys) and of
// one in memory (no key table).
func TestAddScripts(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("testdata", "adds.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"key-table", func(t *testing.T) string { return t.TempDir() }},
		{"in-memory", func(*testing.T) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			db, err := index.Open(dir, &index.Options{InMemory: dir == ""})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(New(db, &Options{Logger: slog.New(slog.DiscardHandler)}))
			t.Cleanup(func() {
				ts.Close()
				if err := db.Close(); err != nil {
					t.Error(err)
				}
			})
			for n, line := range strings.Split(string(script), "\n") {
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				req, want, ok := strings.Cut(line, " -> ")
				if !ok {
					t.Fatalf("adds.txt:%d: want KEYS -> ANSWER: %q", n+1, line)
				}
				fields := strings.Fields(req)
				var key string
				if fields[0] == "once" {
					key, fields = fields[1], fields[2:]
				}
				var body []byte
				for _, f := range fields {
					name, text, _ := strings.Cut(f, "=")
					e := store.FullEntry(hashkey.Sum([]byte(name)), store.Value{Text: []byte(text)})
					if text == "" {
						e.Value.Text = nil
					}
					body = wire.AppendEntry(body, &e)
				}
				status, got := post(t, ts, "/v1/add", key, body)
				var digits strings.Builder
				for _, c := range []byte(got) {
					fmt.Fprint(&digits, c)
				}
				if status != 200 || digits.String() != want {
					t.Errorf("adds.txt:%d: %s: %d %s, want %s", n+1, req, status, digits.String(), want)
				}
			}
		})
	}
}
