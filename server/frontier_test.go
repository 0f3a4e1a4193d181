package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/urlhash/urlhash/frontier"
)

// TestFrontierEndpoints runs testdata/frontier: requests to the
// /v1/frontier/ endpoints of a server with a frontier, each answered with
// its status and body.
//
//	post PATH [key=IDEMPOTENCY-KEY]   body: the input
//	get PATH
//	sleep DURATION
func TestFrontierEndpoints(t *testing.T) {
	f, err := frontier.Open(filepath.Join(t.TempDir(), "frontier"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, ts, _ := newTestServer(t, &Options{Frontier: func(bool) (*frontier.Frontier, error) { return f, nil }})
	datadriven.RunTest(t, "testdata/frontier", func(t *testing.T, td *datadriven.TestData) string {
		var code int
		var body string
		// The path's query holds "=": datadriven splits it as an argument.
		path := td.CmdArgs[0].Key
		if len(td.CmdArgs[0].Vals) > 0 {
			path += "=" + strings.Join(td.CmdArgs[0].Vals, ",")
		}
		switch td.Cmd {
		case "post":
			var key string
			if a, ok := td.Arg("key"); ok {
				key = a.Vals[0]
			}
			code, body = post(t, ts, path, key, []byte(td.Input))
		case "get":
			req, err := http.NewRequest("GET", ts.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			code, body = send(t, ts.Client(), req)
		case "sleep":
			d, err := time.ParseDuration(td.CmdArgs[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
			return ""
		default:
			t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
		}
		if body == "" {
			body = "(empty)"
		}
		return fmt.Sprintf("%d\n%s", code, strings.TrimSuffix(body, "\n")+"\n")
	})
}

// TestNoFrontier: a server without a frontier answers its endpoints 404.
func TestNoFrontier(t *testing.T) {
	_, ts, _ := newTestServer(t, nil)
	if code, body := post(t, ts, "/v1/frontier/claim", "", nil); code != http.StatusNotFound {
		t.Errorf("claim without a frontier: %d %s", code, body)
	}
}

// TestFrontierClaimWait: a claim with wait= holds no slot while it waits
// (an enqueue gets the only one), wakes when something is enqueued and
// answers it; claims beyond the bound of waiters answer at once; a
// waiting claim whose client goes away ends and gives its place back.
func TestFrontierClaimWait(t *testing.T) {
	f, err := frontier.Open(filepath.Join(t.TempDir(), "frontier"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, ts, _ := newTestServer(t, &Options{MaxInFlight: 1, Frontier: func(bool) (*frontier.Frontier, error) { return f, nil }})
	type result struct {
		code int
		body string
	}
	claim := func(ctx context.Context, crawl string) chan result {
		c := make(chan result, 1)
		go func() {
			req, err := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/frontier/claim?wait=30&crawl="+crawl, nil)
			if err != nil {
				panic(err)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				c <- result{body: err.Error()}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			c <- result{resp.StatusCode, string(b)}
		}()
		return c
	}
	waitFor := func(n int) {
		t.Helper()
		for start := time.Now(); len(s.waiters) != n; time.Sleep(time.Millisecond) {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%d claims waiting, want %d", len(s.waiters), n)
			}
		}
	}
	// 4 x MaxInFlight claims wait; the next answers at once, empty.
	var waiting []chan result
	for i := range 4 {
		waiting = append(waiting, claim(context.Background(), fmt.Sprint("w", i)))
	}
	waitFor(4)
	if r := <-claim(context.Background(), "other"); r.code != http.StatusOK || r.body != "" {
		t.Fatalf("a claim beyond the waiters: %d %q", r.code, r.body)
	}
	for i, c := range waiting {
		crawl := fmt.Sprint("w", i)
		if code, body := post(t, ts, "/v1/frontier/enqueue?crawl="+crawl, "", []byte(`{"url": "https://a.example/`+crawl+`"}`)); code != http.StatusOK || body != "new\n" {
			t.Fatalf("enqueue beside waiting claims: %d %q", code, body)
		}
		if r := <-c; r.code != http.StatusOK || !strings.Contains(r.body, `"url":"https://a.example/`+crawl+`"`) {
			t.Errorf("claim waiting in %s: %d %q, want the request enqueued", crawl, r.code, r.body)
		}
	}
	waitFor(0)
	// A client that goes away ends its claim's wait.
	ctx, cancel := context.WithCancel(context.Background())
	gone := claim(ctx, "gone")
	waitFor(1)
	cancel()
	<-gone
	waitFor(0)
	// StopWaiting (a shutdown) answers a waiting claim at once.
	stopped := claim(context.Background(), "stopped")
	waitFor(1)
	s.StopWaiting()
	select {
	case r := <-stopped:
		if r.code != http.StatusOK || r.body != "" {
			t.Errorf("a waiting claim at StopWaiting: %d %q", r.code, r.body)
		}
	case <-time.After(15 * time.Second): // of its 30
		t.Error("a claim still waits after StopWaiting")
	}
}

// TestFrontierLargeBody: an enqueue of 20 requests of 300 bytes each
// (beyond a line scanner's first buffer) is read whole: each line new, and
// each request's data claimed back as it was.
func TestFrontierLargeBody(t *testing.T) {
	f, err := frontier.Open(filepath.Join(t.TempDir(), "frontier"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, ts, _ := newTestServer(t, &Options{Frontier: func(bool) (*frontier.Frontier, error) { return f, nil }})
	var body []byte
	want := map[string][]byte{}
	for i := range 20 {
		data := bytes.Repeat([]byte{byte(i)}, 300)
		url := fmt.Sprintf("https://h%d.example/%d", i, i)
		want[url] = data
		line, _ := json.Marshal(map[string]any{"url": url, "data": data})
		body = append(append(body, line...), '\n')
	}
	if code, got := post(t, ts, "/v1/frontier/enqueue", "", body); code != http.StatusOK || got != strings.Repeat("new\n", 20) {
		t.Fatalf("enqueue: %d %q", code, got)
	}
	code, got := post(t, ts, "/v1/frontier/claim?max=100", "", nil)
	if code != http.StatusOK {
		t.Fatalf("claim: %d %q", code, got)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		var c claimed
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Data, want[c.URL]) {
			t.Errorf("%s: data %q", c.URL, c.Data)
		}
		n++
	}
	if n != 20 {
		t.Errorf("claimed %d requests, want 20", n)
	}
}
