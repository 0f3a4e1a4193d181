package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// lockedBuffer is a bytes.Buffer the handler goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestRequestLog: every request gets one log line with its method, path,
// status, sizes and, when it failed, its kind, at the level its outcome
// calls for.
func TestRequestLog(t *testing.T) {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ts := httptest.NewServer(New(db, &Options{Logger: logger}))
	defer ts.Close()
	h := hashkey.Sum([]byte("x"))
	e := store.FullEntry(h, store.Value{})
	tests := []struct {
		name, method, path string
		body               []byte
		level              string
		status             int
		kind               string
		bytesIn            int
	}{
		{"answered", "POST", "/v1/has", h[:], "DEBUG", 200, "", 32},
		{"write", "POST", "/v1/add", wire.AppendEntry(nil, &e), "DEBUG", 200, "", len(wire.AppendEntry(nil, &e))},
		{"not found is no warning", "POST", "/v1/get", make([]byte, 32), "DEBUG", 404, "not_found", 32},
		{"malformed", "POST", "/v1/has", []byte("abc"), "WARN", 400, "bad_request", 3},
		{"unknown endpoint", "GET", "/v1/nothing", nil, "WARN", 404, "no_endpoint", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs.mu.Lock()
			logs.b.Reset()
			logs.mu.Unlock()
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, bytes.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			logs.mu.Lock()
			out := logs.b.String()
			logs.mu.Unlock()
			var lines []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
					lines = append(lines, m)
				}
			}
			if tc.level == "" {
				if len(lines) != 0 {
					t.Fatalf("logged %v, want nothing", lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("%d request lines in %q, want 1", len(lines), out)
			}
			l := lines[0]
			kind, _ := l["kind"].(string)
			if l["level"] != tc.level || l["method"] != tc.method || l["path"] != tc.path || l["status"] != float64(tc.status) ||
				kind != tc.kind || l["bytes_in"] != float64(tc.bytesIn) || l["remote"] == "" || l["duration"] == nil || l["bytes_out"] == nil {
				t.Errorf("logged %v, want level %s, %s %s, status %d, kind %q, bytes_in %d", l, tc.level, tc.method, tc.path, tc.status, tc.kind, tc.bytesIn)
			}
			if tc.kind != "" && l["error"] == nil {
				t.Errorf("logged %v without the error", l)
			}
		})
	}
}
