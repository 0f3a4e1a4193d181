package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/threatlist"
	"github.com/urlhash/urlhash/threatlist/rice"
)

// webRiskFake serves computeDiff of one list, version 1 then 2, and a bad
// checksum on request.
type webRiskFake struct {
	mu     sync.Mutex
	lists  []*threatlist.List
	badSum bool
	asked  []string
	keys   []string
}

func (f *webRiskFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query()
	f.asked = append(f.asked, q.Get("versionToken"))
	f.keys = append(f.keys, q.Get("key"))
	var old *threatlist.List
	if b, err := threatlist.DecodeBase64(q.Get("versionToken")); err == nil && len(b) == 1 && int(b[0]) <= len(f.lists) {
		old = f.lists[b[0]-1]
	}
	resp := threatlist.EncodeDiff(old, f.lists[len(f.lists)-1], []byte{byte(len(f.lists))}, threatlist.DiffOptions{Rice: true, Next: time.Now().Add(time.Hour)})
	if f.badSum {
		resp.Checksum.Sha256[0] ^= 1
	}
	json.NewEncoder(w).Encode(resp)
}

func prefixList(exprs ...string) *threatlist.List {
	var b threatlist.Builder
	for _, e := range exprs {
		h := hashkey.Sum([]byte(e))
		b.Add(h[:4])
	}
	return b.List()
}

// lookupHash runs lookup --hashes for the expression's hash.
func lookupHash(t *testing.T, dir, expr string) int {
	h := hashkey.Sum([]byte(expr))
	code, _, _ := runCLI(t, "", "lookup", "--db", dir, "--hashes", hex.EncodeToString(h[:]))
	return code
}

// webRiskUpstream serves a fake Web Risk API of lists until the test
// ends; it returns the fake (whose lists a test may change) and its URL.
func webRiskUpstream(t *testing.T, lists ...*threatlist.List) (*webRiskFake, string) {
	fake := &webRiskFake{lists: lists}
	ts := httptest.NewServer(fake)
	t.Cleanup(ts.Close)
	return fake, ts.URL
}

// syncedDir returns a new index directory synced once from endpoint.
func syncedDir(t *testing.T, endpoint string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "list")
	if code, _, errs := runCLI(t, "", "sync", "--db", dir, "--endpoint", endpoint); code != exitOK {
		t.Fatalf("sync: exit %d, %s", code, errs)
	}
	return dir
}

// serveList serves the synced index directory dir with so, threat lists
// included, as "urlhash serve" does, until the test ends; it returns the
// server's URL.
func serveList(t *testing.T, dir string, so *server.Options) string {
	t.Helper()
	db, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := serveThreatLists(context.Background(), db, dir, false, so); err != nil {
		db.Close()
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.New(db, so))
	t.Cleanup(func() { ts.Close(); db.Close() })
	return ts.URL
}

func TestSyncCommand(t *testing.T) {
	fake, endpoint := webRiskUpstream(t, prefixList("a.example/", "b.example/"))
	dir := filepath.Join(t.TempDir(), "list")
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("s3cret\n"), 0o600)

	code, out, errs := runCLI(t, "", "sync", "--db", dir, "--endpoint", endpoint, "--key-file", keyFile)
	if code != exitOK || !strings.HasPrefix(out, "webrisk/MALWARE\tRESET\t+2 -0\t2 entries\tnext ") {
		t.Fatalf("first sync: %d %q %q", code, out, errs)
	}
	if lookupHash(t, dir, "a.example/") != exitOK || lookupHash(t, dir, "c.example/") != exitNotFound {
		t.Fatal("lookup after the first sync")
	}

	// A DIFF, with the key from the environment.
	fake.lists = append(fake.lists, prefixList("b.example/", "c.example/"))
	t.Setenv("WEBRISK_API_KEY", "fromenv")
	code, out, errs = runCLI(t, "", "sync", "--db", dir, "--endpoint", endpoint, "--json")
	var o syncOutput
	if code != exitOK || json.Unmarshal([]byte(out), &o) != nil || o.Response != "DIFF" || o.Added != 1 || o.Removed != 1 || o.Entries != 2 {
		t.Fatalf("second sync: %d %q %q", code, out, errs)
	}
	if lookupHash(t, dir, "a.example/") != exitNotFound || lookupHash(t, dir, "c.example/") != exitOK {
		t.Fatal("lookup after the DIFF")
	}
	if fake.keys[0] != "s3cret" || fake.keys[1] != "fromenv" {
		t.Fatalf("keys sent: %q", fake.keys)
	}

	// A bad checksum: exit 2, the index as before, and a RESET next.
	fake.lists = append(fake.lists, prefixList("d.example/"))
	fake.badSum = true
	code, _, errs = runCLI(t, "", "sync", "--db", dir, "--endpoint", endpoint)
	if code != exitError || !strings.Contains(errs, "checksum mismatch") {
		t.Fatalf("bad checksum: %d %q", code, errs)
	}
	if lookupHash(t, dir, "c.example/") != exitOK || lookupHash(t, dir, "d.example/") != exitNotFound {
		t.Fatal("the index changed after a bad checksum")
	}
	fake.badSum = false
	if code, _, errs = runCLI(t, "", "sync", "--db", dir, "--endpoint", endpoint); code != exitOK {
		t.Fatalf("sync after the bad checksum: %d %q", code, errs)
	}
	if last := fake.asked[len(fake.asked)-1]; last != "" {
		t.Fatalf("asked with version %q after a bad checksum, want none", last)
	}
	if lookupHash(t, dir, "d.example/") != exitOK || lookupHash(t, dir, "c.example/") != exitNotFound {
		t.Fatal("lookup after the RESET")
	}

	// Usage errors.
	for _, args := range [][]string{
		{"sync"},
		{"sync", "--db", dir, "--threat-type", "VIRUS"},
		{"sync", "--db", dir, "--api", "safebrowsing-v5"},
		{"sync", "--db", dir, "--list", "se"},
		{"sync", "--db", "http://127.0.0.1:1"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != exitError {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

// TestSyncFromServe: an index synced from Google is served to a fleet, whose
// members sync from the server.
func TestSyncFromServe(t *testing.T) {
	_, endpoint := webRiskUpstream(t, prefixList("a.example/", "b.example/"))
	mid := serveList(t, syncedDir(t, endpoint), &server.Options{})
	member := filepath.Join(t.TempDir(), "member")
	if code, out, errs := runCLI(t, "", "sync", "--db", member, "--endpoint", mid); code != exitOK || !strings.Contains(out, "RESET\t+2") {
		t.Fatalf("%d %q %q", code, out, errs)
	}
	if lookupHash(t, member, "b.example/") != exitOK {
		t.Fatal("the member does not hold the list")
	}
	// The member holds the upstream's version token: a DIFF next time.
	if code, out, _ := runCLI(t, "", "sync", "--db", member, "--endpoint", mid); code != exitOK || !strings.Contains(out, "DIFF\t+0 -0") {
		t.Fatalf("second member sync: %q", out)
	}
}

func TestNextWait(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	half := func() float64 { return 0.5 }
	zero := func() float64 { return 0 }
	for _, tc := range []struct {
		name     string
		next     time.Time
		failures int
		random   func() float64
		want     time.Duration
	}{
		{"at recommendedNextDiff", now.Add(20 * time.Minute), 0, zero, 20 * time.Minute},
		{"with jitter", now.Add(20 * time.Minute), 0, half, 21 * time.Minute},
		{"jitter at most 5 minutes", now.Add(10 * time.Hour), 0, func() float64 { return 0.999999999 }, 10*time.Hour + 5*time.Minute - 1},
		{"never sooner than a minute", now.Add(-time.Hour), 0, zero, time.Minute},
		{"no time given", time.Time{}, 0, zero, 30 * time.Minute},
		{"first failure", time.Time{}, 1, zero, time.Minute},
		{"third failure", now.Add(time.Hour), 3, zero, 4 * time.Minute},
		{"backoff capped", time.Time{}, 40, zero, 2 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nextWait(now, tc.next, tc.failures, tc.random)
			if got < tc.want-time.Microsecond || got > tc.want+time.Microsecond {
				t.Errorf("nextWait = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWatch runs --watch's loop with a fake sleep: it waits as nextWait
// says after each sync, backs off while the server fails, and stops when
// interrupted.
func TestWatch(t *testing.T) {
	fake, _ := webRiskUpstream(t, prefixList("a.example/"))
	var broken atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			http.Error(w, "down", 503)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errs bytes.Buffer
	e := &env{ctx: ctx, stdout: &bytes.Buffer{}, stderr: &errs}
	o := syncFlags{db: dbFlags{dir: filepath.Join(t.TempDir(), "w")}, api: "webrisk", threatType: "MALWARE"}
	now := time.Now()
	s := &syncer{e: e, o: o, c: &threatlist.Client{Endpoint: proxy.URL}, profile: "webrisk", now: func() time.Time { return now }}
	var waits []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		switch len(waits) {
		case 1, 2:
			broken.Store(true)
		case 3:
			broken.Store(false)
		case 4:
			cancel()
			return ctx.Err()
		}
		return nil
	}
	if err := s.watch(sleep, func() float64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Hour, time.Minute, 2 * time.Minute, time.Hour}
	for i := range want {
		if i >= len(waits) || waits[i] < want[i]-time.Second || waits[i] > want[i]+time.Second {
			t.Fatalf("waits %v, want about %v", waits, want)
		}
	}
	if !strings.Contains(errs.String(), "503") {
		t.Errorf("the failures were not reported: %q", errs.String())
	}
}

// TestSyncPending: an update interrupted after its commit point (the next
// state written, the index half changed) is refused by lookup, which would
// answer from a mix of two versions, and finished by the next sync, even
// when that sync's request fails.
func TestSyncPending(t *testing.T) {
	ctx := context.Background()
	_, endpoint := webRiskUpstream(t, prefixList("a.example/", "b.example/"))
	dir := syncedDir(t, endpoint)
	// Fake the crash: the state file of version 2 as the commit point, and
	// only a part of its changes in the index (c added, a not removed).
	next := prefixList("b.example/", "c.example/")
	db, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := threatlist.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := os.ReadFile(filepath.Join(dir, threatlist.StateFile))
	sum := next.Checksum()
	if err := ls.Apply(ctx, map[string]*threatlist.Update{threatlist.WebRiskName("MALWARE"): {Reset: true, Additions: next, Version: []byte{2}, Checksum: sum[:]}}); err != nil {
		t.Fatal(err)
	}
	// Put back the old state as current and the new one as pending, and
	// a's entry as if its removal had not happened yet.
	applied, _ := os.ReadFile(filepath.Join(dir, threatlist.StateFile))
	os.WriteFile(filepath.Join(dir, threatlist.NextStateFile), applied, 0o644)
	os.WriteFile(filepath.Join(dir, threatlist.StateFile), saved, 0o644)
	a := hashkey.Sum([]byte("a.example/"))
	db.PutPrefix(ctx, a[:4], store.Value{})
	db.Close()

	code, _, errs := runCLI(t, "", "lookup", "--db", dir, "--hashes", hex.EncodeToString(a[:]))
	if code != exitError || !strings.Contains(errs, "interrupted") {
		t.Fatalf("lookup of a half-applied list: %d %q", code, errs)
	}
	// The next sync finishes it, though its request fails.
	if code, _, _ := runCLI(t, "", "sync", "--db", dir, "--endpoint", "http://127.0.0.1:1"); code != exitError {
		t.Fatal("sync to a closed port succeeded")
	}
	if lookupHash(t, dir, "a.example/") != exitNotFound || lookupHash(t, dir, "c.example/") != exitOK {
		t.Fatal("the interrupted update was not finished")
	}
}

// TestSyncSafeBrowsingCommand: --api safebrowsing-v5 with two lists.
func TestSyncSafeBrowsingCommand(t *testing.T) {
	se, mw := prefixList("se.example/"), prefixList("mw.example/", "mw2.example/")
	hl := func(name string, l *threatlist.List) map[string]any {
		raw := l.Concat(4)
		var vs []uint32
		for i := 0; i < len(raw); i += 4 {
			vs = append(vs, uint32(raw[i])<<24|uint32(raw[i+1])<<16|uint32(raw[i+2])<<8|uint32(raw[i+3]))
		}
		first, count, data, err := rice.Encode32(vs, 10)
		if err != nil {
			t.Fatal(err)
		}
		sum := l.Checksum()
		return map[string]any{"name": name, "version": []byte(name + "1"), "sha256Checksum": sum[:], "minimumWaitDuration": "60s",
			"additionsFourBytes": map[string]any{"firstValue": first, "riceParameter": 10, "entriesCount": count, "encodedData": data}}
	}
	var got url.Values
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		if r.URL.Path != "/v5/hashLists:batchGet" {
			http.Error(w, "path", 404)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"hashLists": []any{hl("se", se), hl("mw", mw)}})
	}))
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "sb")
	code, out, errs := runCLI(t, "", "sync", "--db", dir, "--api", "safebrowsing-v5", "--endpoint", ts.URL, "--list", "se", "mw")
	if code != exitOK || !strings.Contains(out, "v5/mw\tRESET\t+2 -0") || !strings.Contains(out, "v5/se\tRESET\t+1 -0") {
		t.Fatalf("%d %q %q", code, out, errs)
	}
	if got["names"][0] != "se" || got["names"][1] != "mw" {
		t.Fatalf("names sent: %q", got["names"])
	}
	if lookupHash(t, dir, "mw2.example/") != exitOK || lookupHash(t, dir, "se.example/") != exitOK {
		t.Fatal("lookup after the v5 sync")
	}
}

// TestSyncOutputFailure: a sync whose report cannot be written says so and
// exits 2, in text and in JSON (see TestOutputFailure).
func TestSyncOutputFailure(t *testing.T) {
	_, endpoint := webRiskUpstream(t, prefixList("a.example/"))
	for _, extra := range [][]string{nil, {"--json"}} {
		args := append([]string{"sync", "--db", filepath.Join(t.TempDir(), "list"), "--endpoint", endpoint}, extra...)
		var errs bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), failingWriter{}, &errs)
		if code != exitError || !strings.Contains(errs.String(), "disk full") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the write error", args, code, errs.String())
		}
	}
}
