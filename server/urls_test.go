package server

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/golden"
	"github.com/urlhash/urlhash/wire"
)

// newTestServer serves an in-memory index.
func newTestServer(t testing.TB, opts *Options) (*Server, *httptest.Server, *index.DB) {
	t.Helper()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := New(db, &o)
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.Close()
		db.Close()
	})
	return s, ts, db
}

// post sends body to path with the Idempotency-Key key (none when empty)
// and returns the status and the answer.
func post(t testing.TB, ts *httptest.Server, path, key string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(wire.HeaderIdempotencyKey, wire.FormatKey(key))
	}
	return send(t, ts.Client(), req)
}

// send sends req with c and returns the status and the answer.
func send(t testing.TB, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// postExpecting posts body as a careful client of large bodies does, with
// Expect: 100-continue: a body the server refuses unread (413 and
// Connection: close) is then never written, so the client reads the
// answer instead of racing the close with its writes (connection reset).
func postExpecting(t testing.TB, ts *httptest.Server, path string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Expect", "100-continue")
	tr := ts.Client().Transport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = time.Minute
	defer tr.CloseIdleConnections()
	return send(t, &http.Client{Transport: tr}, req)
}

func TestURLs(t *testing.T) {
	golden.Rewrite(t)
	_, ts, _ := newTestServer(t, nil)
	datadriven.RunTest(t, "testdata/urls.txt", func(t *testing.T, d *datadriven.TestData) string {
		path := "/v1/" + strings.Replace(d.Cmd, "-", "/", 1)
		if d.HasArg("revisit_after") {
			var v string
			d.ScanArgs(t, "revisit_after", &v)
			path += "?revisit_after=" + v
		}
		body := d.Input
		if body != "" {
			body += "\n"
		}
		status, out := post(t, ts, path, "", []byte(body))
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, out)
		}
		return out
	})
}

// TestURLLineEnds: CR LF ends a line as LF does, and the last line needs
// no LF.
func TestURLLineEnds(t *testing.T) {
	_, ts, _ := newTestServer(t, nil)
	for _, tc := range []struct{ name, body, want string }{
		{"crlf", "https://a.example/\r\nhttps://a.example/\r\n", "new\npresent\n"},
		{"no final lf", "https://b.example/\nhttps://b.example/", "new\npresent\n"},
		{"blank crlf", "\r\n", "invalid\tblank line\n"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, got := post(t, ts, "/v1/urls/add", "", []byte(tc.body))
			if status != 200 || got != tc.want {
				t.Errorf("got %d %q, want %q", status, got, tc.want)
			}
		})
	}
}

// TestURLLimits: hostile bodies are refused whole with a 4xx.
func TestURLLimits(t *testing.T) {
	_, ts, _ := newTestServer(t, &Options{MaxBody: 1 << 20})
	for _, tc := range []struct {
		name string
		body []byte
		want int
	}{
		{"long line", append([]byte("https://a.example/"), bytes.Repeat([]byte("a"), wire.MaxLineLen)...), 400},
		{"body too large", bytes.Repeat([]byte("https://a.example/\n"), 1<<16), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/urls/add", "/v1/urls/has"} {
				if status, out := postExpecting(t, ts, path, tc.body); status != tc.want {
					t.Errorf("%s: %d %s, want %d", path, status, out, tc.want)
				}
			}
		})
	}
	if status, _ := post(t, ts, "/v1/urls/add?revisit_after=soon", "", []byte("https://a.example/\n")); status != 400 {
		t.Errorf("revisit_after=soon: %d, want 400", status)
	}
}
