package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
)

func get(t *testing.T, u string, header http.Header) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestWebRiskCompat: the forms Google's API takes, and official clients
// send: enum numbers, snake_case names, enum-encoding=int answers, the key
// in x-goog-api-key.
func TestWebRiskCompat(t *testing.T) {
	sbProfile := safebrowsing.WebRisk.Name() + ";unicode=" + safebrowsing.WebRisk.UnicodeVersion()
	ts := webRiskServer(t, sbProfile, []string{"evil.example/"}, nil, &Options{Token: "k"})
	evil := hashkey.Sum([]byte("evil.example/"))
	prefix := url.QueryEscape(base64.StdEncoding.EncodeToString(evil[:4]))
	key := http.Header{"X-Goog-Api-Key": {"k"}}
	for _, tc := range []struct {
		name   string
		query  string
		header http.Header
		status int
		want   string // a substring of the answer
	}{
		{"Node: number enums, header key", "uris:search?threatTypes=1&uri=http://evil.example/&%24alt=json%3Benum-encoding%3Dint", key, 200, `"threatTypes":[1]`},
		{"names with header key", "uris:search?threatTypes=MALWARE&uri=http://evil.example/", key, 200, `"threatTypes":["MALWARE"]`},
		{"Go: snake_case, key=", "hashes:search?threat_types=MALWARE&hash_prefix=" + prefix + "&key=k", nil, 200, `"threatTypes":["MALWARE"]`},
		{"number 2 is another list", "uris:search?threatTypes=2&uri=http://evil.example/", key, 200, `{}`},
		{"number out of range", "uris:search?threatTypes=9&uri=http://evil.example/", key, 400, `"status":"INVALID_ARGUMENT"`},
		{"wrong header key", "uris:search?threatTypes=1&uri=http://evil.example/", http.Header{"X-Goog-Api-Key": {"x"}}, 401, `"status":"UNAUTHENTICATED"`},
		{"computeDiff number enums", "threatLists:computeDiff?threatType=1&constraints.supportedCompressions=1&constraints.supportedCompressions=2&%24alt=json%3Benum-encoding%3Dint", key, 200, `"responseType":2`},
		{"computeDiff snake_case", "threatLists:computeDiff?threat_type=MALWARE&constraints.supported_compressions=RAW&key=k", nil, 200, `"responseType":"RESET"`},
		{"computeDiff no threat type", "threatLists:computeDiff?key=k", nil, 400, `{"error":{"code":400,"message":"threatType is required","status":"INVALID_ARGUMENT"}}`},
		{"computeDiff bad compression", "threatLists:computeDiff?threatType=MALWARE&constraints.supportedCompressions=ZIP&key=k", nil, 400, `"status":"INVALID_ARGUMENT"`},
		{"computeDiff bad token", "threatLists:computeDiff?threatType=MALWARE&versionToken=%21%21&key=k", nil, 400, `"status":"INVALID_ARGUMENT"`},
		{"computeDiff other list", "threatLists:computeDiff?threatType=UNWANTED_SOFTWARE&key=k", nil, 404, `"status":"NOT_FOUND"`},
		{"computeDiff no key", "threatLists:computeDiff?threatType=MALWARE", nil, 401, `"status":"UNAUTHENTICATED"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := get(t, ts.URL+"/v1/"+tc.query, tc.header)
			if status != tc.status || !bytes.Contains(body, []byte(tc.want)) {
				t.Errorf("got %d %s\nwant %d with %s", status, body, tc.status, tc.want)
			}
		})
	}
}

// TestComputeDiffSynced serves a synced list with kept versions: a DIFF to a
// client holding one of them, a RESET otherwise; and a client of the
// threatlist package syncs from it into its own index.
func TestComputeDiffSynced(t *testing.T) {
	mk := func(es ...string) *threatlist.List {
		var b threatlist.Builder
		for _, e := range es {
			h := hashkey.Sum([]byte(e))
			b.Add(h[:4])
		}
		b.Add(func() []byte { h := hashkey.Sum([]byte("full")); return h[:] }())
		return b.List()
	}
	v1 := mk("a/", "b/", "c/", "d/")
	v2 := mk("a/", "c/", "d/", "e/", "f/")
	removals, additions := v1.Diff(v2)
	_ = removals
	var removed threatlist.Builder
	h := hashkey.Sum([]byte("b/"))
	removed.Add(h[:4])
	state := map[string]*threatlist.ListState{
		threatlist.WebRiskName("MALWARE"): {Name: threatlist.WebRiskName("MALWARE"), Version: []byte("v2"), List: v2,
			History: []threatlist.Version{{Token: []byte("v1"), Change: threatlist.Change{Removed: removed.List(), Added: additions}}}},
	}
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := httptest.NewServer(New(db, &Options{ThreatLists: func() (map[string]*threatlist.ListState, error) { return state, nil }}))
	defer ts.Close()
	c := &threatlist.Client{Endpoint: ts.URL}
	for _, tc := range []struct {
		version []byte
		reset   bool
	}{{nil, true}, {[]byte("v1"), false}, {[]byte("v2"), false}, {[]byte("v0"), true}} {
		u, err := c.ComputeDiff(context.Background(), threatlist.DiffRequest{ThreatType: "MALWARE", Version: tc.version})
		if err != nil {
			t.Fatal(err)
		}
		if u.Reset != tc.reset || string(u.Version) != "v2" {
			t.Fatalf("from %q: reset %v, version %q", tc.version, u.Reset, u.Version)
		}
		base := &threatlist.List{}
		if !tc.reset {
			base, _ = state[threatlist.WebRiskName("MALWARE")].At(tc.version)
		}
		got, _, err := base.Apply(u.Removals, u.Additions)
		if err != nil {
			t.Fatal(err)
		}
		if sum := got.Checksum(); !got.Equal(v2) || !bytes.Equal(sum[:], u.Checksum) {
			t.Fatalf("from %q: wrong list", tc.version)
		}
	}
	// A repeated request is answered from the cache: the same bytes,
	// recommendedNextDiff included (unless a minute began in between).
	_, first := get(t, ts.URL+"/v1/threatLists:computeDiff?threatType=MALWARE", nil)
	_, second := get(t, ts.URL+"/v1/threatLists:computeDiff?threatType=MALWARE", nil)
	if !bytes.Equal(first, second) {
		t.Logf("answers differ (a minute boundary?):\n%s\n%s", first, second)
	}
	// RAW only: no Rice data in the answer.
	status, body := get(t, ts.URL+"/v1/threatLists:computeDiff?threatType=MALWARE&versionToken=djE%3D&constraints.supportedCompressions=RAW", nil)
	var r map[string]any
	json.Unmarshal(body, &r)
	if status != 200 || bytes.Contains(body, []byte("rice")) || r["responseType"] != "DIFF" {
		t.Fatalf("RAW diff: %d %s", status, body)
	}
}

// TestComputeDiffOwnList serves the index's own entries, and a DIFF after
// the index changed.
func TestComputeDiffOwnList(t *testing.T) {
	ctx := context.Background()
	sbProfile := safebrowsing.WebRisk.Name() + ";unicode=" + safebrowsing.WebRisk.UnicodeVersion()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetProfile(ctx, sbProfile)
	h := hashkey.Sum([]byte("x/"))
	db.PutPrefix(ctx, h[:4], store.Value{})
	srv := New(db, nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &threatlist.Client{Endpoint: ts.URL}
	u1, err := c.ComputeDiff(ctx, threatlist.DiffRequest{ThreatType: "MALWARE"})
	if err != nil || !u1.Reset || u1.Additions.Len() != 1 {
		t.Fatalf("first: %+v %v", u1, err)
	}
	h2 := hashkey.Sum([]byte("y/"))
	db.PutPrefix(ctx, h2[:8], store.Value{})
	srv.diff.mu.Lock()
	srv.diff.ownAt = srv.diff.ownAt.Add(-ownListTTL) // the cache expires
	srv.diff.mu.Unlock()
	u2, err := c.ComputeDiff(ctx, threatlist.DiffRequest{ThreatType: "MALWARE", Version: u1.Version})
	if err != nil || u2.Reset || u2.Additions.Len() != 1 || !u2.Additions.Has(h2[:8]) {
		t.Fatalf("second: %+v %v", u2, err)
	}
}
