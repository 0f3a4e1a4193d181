package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// TestMalformedRequests: a malformed body is a 4xx with a JSON error, and
// the server goes on serving.
func TestMalformedRequests(t *testing.T) {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := httptest.NewServer(New(db, &Options{MaxBody: 1 << 10}))
	defer ts.Close()
	for _, c := range []struct {
		path string
		body []byte
		want int
	}{
		{"/v1/has", []byte("short"), 400},
		{"/v1/add", []byte{33, 1, 2}, 400},
		{"/v1/add", []byte{3, 1, 2, 3, 0, 0}, 400}, // a 3-byte prefix
		{"/v1/get", bytes.Repeat([]byte{1}, 64), 400},
		{"/v1/has", bytes.Repeat([]byte{1}, 2048), 413},
		{"/v1/get", bytes.Repeat([]byte{7}, 32), 404},
	} {
		resp, err := http.Post(ts.URL+c.path, "application/octet-stream", bytes.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %x: %d %s, want %d with a JSON error", c.path, c.body, resp.StatusCode, resp.Header.Get("Content-Type"), c.want)
		}
	}
	resp, err := http.Get(ts.URL + "/v1/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health after malformed requests: %v %v", resp, err)
	}
}

// TestMetricsAndToken: with a token, requests without it are 401 and
// /metrics too; with it, /metrics counts requests, group-commit fsyncs and
// the filter's answers.
func TestMetricsAndToken(t *testing.T) {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := httptest.NewServer(New(db, &Options{Token: "s3cret"}))
	defer ts.Close()
	do := func(method, path, token string, body []byte) (int, string) {
		req, _ := http.NewRequest(method, ts.URL+path, bytes.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	for _, tok := range []string{"", "wrong"} {
		if code, _ := do("GET", "/metrics", tok, nil); code != 401 {
			t.Errorf("/metrics with token %q: %d, want 401", tok, code)
		}
	}
	e := store.FullEntry(hashkey.Sum([]byte("x")), store.Value{})
	if code, _ := do("POST", "/v1/add", "s3cret", wire.AppendEntry(nil, &e)); code != 200 {
		t.Fatalf("add: %d", code)
	}
	// The add's check and the absent key: "absent"; x: "found".
	absent := hashkey.Sum([]byte("y"))
	if code, _ := do("POST", "/v1/has", "s3cret", append(e.Hash[:], absent[:]...)); code != 200 {
		t.Fatalf("has: %d", code)
	}
	code, body := do("GET", "/metrics", "s3cret", nil)
	for _, want := range []string{`urlhash_requests_total{endpoint="/v1/add",status="200"} 1`, "urlhash_fsyncs_total 1", "urlhash_entries 1", "urlhash_request_seconds_bucket",
		`urlhash_filter_probes_total{result="absent"} 2`, `urlhash_filter_probes_total{result="found"} 1`, `urlhash_filter_probes_total{result="false_positive"} 0`} {
		if code != 200 || !bytes.Contains([]byte(body), []byte(want)) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
}
