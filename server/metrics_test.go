package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// testToken is the token of the servers of the metrics tests.
const testToken = "metrics-test-token"

// newDiskServer returns a server (with the token testToken) of a new
// index directory with a key table.
func newDiskServer(t testing.TB, opts *Options) (*httptest.Server, *index.DB) {
	t.Helper()
	db, err := index.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Token: testToken, Logger: slog.New(slog.DiscardHandler)}
	if opts != nil {
		o = *opts
		o.Token, o.Logger = testToken, slog.New(slog.DiscardHandler)
	}
	ts := httptest.NewServer(New(db, &o))
	t.Cleanup(func() {
		ts.Close()
		db.Close()
	})
	return ts, db
}

// scrape returns the server's /metrics, each sample line as "NAME{LABELS}"
// to its value.
func scrape(t testing.TB, ts *httptest.Server) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples
}

// TestMetricsScript runs testdata/metrics.txt: requests to a server of an
// index directory, and the metrics they must leave.
//
//	request METHOD PATH [key=K] [token=none|wrong]
//	BODY LINES (names hashed to keys for /v1/add, /v1/has and /v1/get-batch,
//	            URLs for /v1/urls/*)
//	----
//	STATUS
//
//	metrics NAME...   (the samples of those names, sorted)
func TestMetricsScript(t *testing.T) {
	ts, _ := newDiskServer(t, nil)
	datadriven.RunTest(t, "testdata/metrics.txt", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "request":
			method, path := d.CmdArgs[0].Key, d.CmdArgs[1].Key
			var body []byte
			if d.Input != "" {
				for _, l := range strings.Split(d.Input, "\n") {
					switch path {
					case "/v1/add":
						e := store.FullEntry(hashkey.Sum([]byte(l)), store.Value{})
						body = wire.AppendEntry(body, &e)
					case "/v1/has", "/v1/get-batch":
						h := hashkey.Sum([]byte(l))
						body = append(body, h[:]...)
					default:
						body = append(append(body, l...), '\n')
					}
				}
			}
			req, err := http.NewRequest(method, ts.URL+path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			token := testToken
			for _, a := range d.CmdArgs[2:] {
				switch a.Key {
				case "key":
					req.Header.Set(wire.HeaderIdempotencyKey, wire.FormatKey(a.Vals[0]))
				case "token":
					token = map[string]string{"none": "", "wrong": "x" + testToken}[a.Vals[0]]
				default:
					t.Fatalf("%s: unknown argument %s", d.Pos, a.Key)
				}
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			status, _ := send(t, ts.Client(), req)
			return fmt.Sprintln(status)
		case "metrics":
			samples := scrape(t, ts)
			var out []string
			for s, v := range samples {
				name, _, _ := strings.Cut(s, "{")
				if slices.ContainsFunc(d.CmdArgs, func(a datadriven.CmdArg) bool { return a.Key == name }) {
					out = append(out, fmt.Sprintf("%s %g", s, v))
				}
			}
			slices.Sort(out)
			return strings.Join(out, "\n") + "\n"
		}
		t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
		return ""
	})
}

// TestMetricsPresent: a scrape of a server of an index directory has Go's
// and the process's standard metrics, the build, the fsync histogram, the
// index's disk and filesystem figures and its background work.
func TestMetricsPresent(t *testing.T) {
	ts, _ := newDiskServer(t, nil)
	if status, _ := postAuth(t, ts, "/v1/urls/add", "https://example.com/\n"); status != 200 {
		t.Fatalf("urls/add: %d", status)
	}
	samples := scrape(t, ts)
	positive := []string{
		"go_goroutines", "go_memstats_heap_alloc_bytes", "go_gc_duration_seconds_count",
		"urlhash_fsync_duration_seconds_count", "urlhash_fsyncs_total", "urlhash_disk_bytes",
		"urlhash_filesystem_avail_bytes", "urlhash_filesystem_reserve_bytes", "urlhash_requests_in_flight_limit",
		"urlhash_entries",
	}
	if runtime.GOOS == "linux" {
		positive = append(positive, "process_resident_memory_bytes", "process_start_time_seconds", "process_open_fds", "process_cpu_seconds_total")
	}
	for _, name := range positive {
		if v, ok := samples[name]; !ok || v <= 0 {
			t.Errorf("%s = %v (present %v), want a positive value", name, v, ok)
		}
	}
	for _, name := range []string{"urlhash_keytable_merges_total", "urlhash_keytable_merge_seconds_total",
		"urlhash_keytable_merge_written_bytes_total", "urlhash_requests_in_flight", "urlhash_requests_waiting"} {
		if _, ok := samples[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	var build []string
	for s, v := range samples {
		if strings.HasPrefix(s, "urlhash_build_info{") && v == 1 {
			build = append(build, s)
		}
	}
	if len(build) != 1 || !strings.Contains(build[0], `goversion="`+runtime.Version()+`"`) || !strings.Contains(build[0], `version="`) {
		t.Errorf("build info %v, want one urlhash_build_info with goversion, revision and version", build)
	}
}

// postAuth posts body to path of a server with the token testToken.
func postAuth(t testing.TB, ts *httptest.Server, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	return send(t, ts.Client(), req)
}

// TestMetricsInFlight: a request being served counts in flight, one whose
// body arrived but finds every slot taken counts waiting, and both go back
// to 0 when they are answered.
func TestMetricsInFlight(t *testing.T) {
	ts, _ := newDiskServer(t, &Options{MaxInFlight: 1})
	// A load whose body streams holds its slot until the body ends.
	pr, pw := io.Pipe()
	loaded := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/load", pr)
		req.Header.Set("Authorization", "Bearer "+testToken)
		status, _ := send(t, ts.Client(), req)
		loaded <- status
	}()
	e := store.FullEntry(hashkey.Sum([]byte("x")), store.Value{})
	if _, err := pw.Write(store.AppendJSONL(nil, &e)); err != nil {
		t.Fatal(err)
	}
	want := func(inFlight, waiting float64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := scrape(t, ts)
			if s["urlhash_requests_in_flight"] == inFlight && s["urlhash_requests_waiting"] == waiting {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("in flight %v, waiting %v; want %v and %v", s["urlhash_requests_in_flight"], s["urlhash_requests_waiting"], inFlight, waiting)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The written line may still be on its way (the client's transport
	// sends it, the server has not read it): the has goes once the load
	// holds the slot, or it could take the slot first (CI saw it).
	want(1, 0)
	has := make(chan int, 1)
	go func() {
		status, _ := postAuth(t, ts, "/v1/has", string(make([]byte, 32)))
		has <- status
	}()
	want(1, 1)
	pw.Close()
	if status := <-loaded; status != 200 {
		t.Fatalf("load: %d", status)
	}
	if status := <-has; status != 200 {
		t.Fatalf("has: %d", status)
	}
	want(0, 0)
}

// BenchmarkScrape measures a scrape of /metrics of a server over an index
// directory of n keys (a key table's): it reads no key, so its time does
// not grow with n (the goal: at most 0.1 s at any size).
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{0, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ts, db := newDiskServer(b, nil)
			keys := make([]hashkey.Hash, 0, 65536)
			added := make([]bool, 65536)
			for i := 0; i < n; i += cap(keys) {
				keys = keys[:0]
				for j := i; j < min(n, i+cap(keys)); j++ {
					keys = append(keys, hashkey.Sum(strconv.AppendInt(nil, int64(j), 10)))
				}
				if err := db.AddKeys(context.Background(), keys, added[:len(keys)], nil); err != nil {
					b.Fatal(err)
				}
			}
			if err := db.Sync(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				scrape(b, ts)
			}
		})
	}
}

// TestMetricsIndexClosed: when the index's figures cannot be read (here a
// closed index), a scrape still serves every other metric, and the error
// goes to the server's log (it was a plain-text 500).
func TestMetricsIndexClosed(t *testing.T) {
	db, err := index.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	ts := httptest.NewServer(New(db, &Options{Token: testToken, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	defer ts.Close()
	db.Close()
	samples := scrape(t, ts)
	if _, ok := samples["go_goroutines"]; !ok {
		t.Errorf("no go_goroutines in a scrape of a server whose index is closed")
	}
	if _, ok := samples["urlhash_entries"]; ok {
		t.Errorf("urlhash_entries of a closed index")
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if !strings.Contains(logs.b.String(), "level=ERROR") || !strings.Contains(logs.b.String(), "closed") {
		t.Errorf("logged %q, want the error", logs.b.String())
	}
}
