package threatlist

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// readJSONL decodes each line of a testdata file into a new T.
func readJSONL[T any](t testing.TB, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	return out
}

// decodeWebRisk decodes, for case i, a Web Risk response of type typ
// whose field ("additions" or "removals") is raw, with a checksum.
func decodeWebRisk(t *testing.T, i int, typ, field string, raw json.RawMessage) *Update {
	t.Helper()
	r := &DiffResponse{ResponseType: Enum(typ), Checksum: &struct {
		Sha256 Bytes `json:"sha256,omitempty"`
	}{make([]byte, 32)}}
	if err := json.Unmarshal([]byte(`{"`+field+`":`+string(raw)+`}`), r); err != nil {
		t.Fatal(err)
	}
	u, err := r.Decode()
	if err != nil {
		t.Fatalf("case %d: %v", i, err)
	}
	return u
}

// TestWebRiskAdditions decodes the additions Google's server produced
// (google/webrisk hash_test.go TestDecodeHashes, as computeDiff JSON).
func TestWebRiskAdditions(t *testing.T) {
	type tc struct {
		Additions []json.RawMessage
		Want      []string
	}
	for i, c := range readJSONL[tc](t, "webrisk_additions.jsonl") {
		var b Builder
		for _, a := range c.Additions {
			u := decodeWebRisk(t, i, "RESET", "additions", a)
			for e := range u.Additions.All() {
				b.Add(e)
			}
		}
		var got []string
		for e := range b.List().All() {
			got = append(got, hex.EncodeToString(e))
		}
		if !slices.Equal(got, c.Want) {
			t.Errorf("case %d:\ngot  %v\nwant %v", i, got, c.Want)
		}
	}
}

// TestWebRiskRemovals decodes removal indices Google's server produced
// (google/webrisk hash_test.go TestDecodeIndices).
func TestWebRiskRemovals(t *testing.T) {
	type tc struct {
		Removals []json.RawMessage
		Want     []int32
	}
	for i, c := range readJSONL[tc](t, "webrisk_removals.jsonl") {
		var got []int32
		for _, rm := range c.Removals {
			u := decodeWebRisk(t, i, "DIFF", "removals", rm)
			got = append(got, u.Removals...)
		}
		if !slices.Equal(got, c.Want) {
			t.Errorf("case %d: got %v, want %v", i, got, c.Want)
		}
	}
}

// randomList returns n random entries: mostly 4-byte prefixes, some
// longer ones and some full hashes.
func randomList(t testing.TB, r *rand.Rand, n int) *List {
	var b Builder
	for i := range n {
		size := 4
		switch i % 50 {
		case 1:
			size = 32
		case 2:
			size = 8 + i%20
		}
		e := make([]byte, size)
		for j := range e {
			e[j] = byte(r.Uint32())
		}
		if err := b.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	return b.List()
}

// fakeServer serves computeDiff from a sequence of versions of a list, and
// misbehaves on request.
type fakeServer struct {
	mu       sync.Mutex
	versions []*List // version token i+1 is versions[i]
	rice     bool
	mode     string   // "", "badsum", "cut", "garbage"
	asked    []string // the versionToken of every request
	cache    map[string][]byte
}

// body returns the answer to a client holding version token tok, encoded
// once per version (benchmarks prepare it outside their timer).
func (f *fakeServer) body(tok string) []byte {
	key := fmt.Sprint(len(f.versions), tok, f.rice)
	if b, ok := f.cache[key]; ok {
		return b
	}
	cur := len(f.versions)
	var old *List
	if b, err := DecodeBase64(tok); err == nil && len(b) == 1 && int(b[0]) >= 1 && int(b[0]) <= cur {
		old = f.versions[b[0]-1]
	}
	resp := EncodeDiff(old, f.versions[cur-1], []byte{byte(cur)}, DiffOptions{Rice: f.rice, Next: time.Unix(1800000000, 0)})
	body, _ := json.Marshal(resp)
	if f.cache == nil {
		f.cache = map[string][]byte{}
	}
	f.cache[key] = body
	return body
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := r.URL.Query()
	if r.URL.Path != "/v1/threatLists:computeDiff" || q.Get("threatType") != "MALWARE" || q.Get("key") != "k" {
		http.Error(w, "bad request", 400)
		return
	}
	if got := q["constraints.supportedCompressions"]; !slices.Equal(got, []string{"RAW", "RICE"}) {
		http.Error(w, "bad compressions", 400)
		return
	}
	tok := q.Get("versionToken")
	f.asked = append(f.asked, tok)
	body := f.body(tok)
	switch f.mode {
	case "badsum":
		var resp DiffResponse
		json.Unmarshal(body, &resp)
		resp.Checksum.Sha256[0] ^= 1
		body, _ = json.Marshal(&resp)
	case "garbage":
		w.Write([]byte(`{"responseType":"RESET","additions":{"riceHashes":{"firstValue":"1","riceParameter":40,"entryCount":3,"encodedData":"AAAA"}}}`))
		return
	}
	if f.mode == "cut" {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body[:len(body)/2])
		// Drop the connection mid-answer.
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		conn.Close()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func (f *fakeServer) set(mode string, l *List) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode = mode
	if l != nil {
		f.versions = append(f.versions, l)
	}
}

// openIndex opens a new index in a temporary directory, closed at cleanup.
func openIndex(t testing.TB, dir string) *index.DB {
	t.Helper()
	db, err := index.Open(dir, &index.Options{Profile: "webrisk"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openLists opens the lists kept in db.
func openLists(t testing.TB, db store.Backend) *Lists {
	t.Helper()
	ls, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// indexEntries returns every entry key of the index, as a list.
func indexEntries(t testing.TB, db store.Backend) *List {
	t.Helper()
	var b Builder
	err := db.Scan(context.Background(), nil, 0, 0, func(e store.Entry) error { return b.Add(e.Key()) })
	if err != nil {
		t.Fatal(err)
	}
	return b.List()
}

func TestSyncWebRisk(t *testing.T) {
	for _, useRice := range []bool{false, true} {
		t.Run(fmt.Sprintf("rice=%v", useRice), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			v1 := randomList(t, r, 2000)
			srv := &fakeServer{rice: useRice, versions: []*List{v1}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			c := &Client{Endpoint: ts.URL, Key: "k"}
			dir := t.TempDir()
			db := openIndex(t, dir)
			ls := openLists(t, db)
			ctx := context.Background()
			req := DiffRequest{ThreatType: "MALWARE"}
			name := WebRiskName("MALWARE")

			// RESET into the empty index.
			u, err := ls.SyncWebRisk(ctx, c, req)
			if err != nil {
				t.Fatal(err)
			}
			if !u.Reset || !indexEntries(t, db).Equal(v1) || !bytes.Equal(ls.Version(name), []byte{1}) {
				t.Fatalf("after the RESET: reset %v, version %x", u.Reset, ls.Version(name))
			}
			if want := time.Unix(1800000000, 0); !u.Next.Equal(want) {
				t.Errorf("next %v, want %v", u.Next, want)
			}

			// A DIFF with removals and additions.
			removals := []int32{0, 5, 17, 1999}
			add := randomList(t, r, 300)
			v2, _, err := v1.Apply(removals, add)
			if err != nil {
				t.Fatal(err)
			}
			srv.set("", v2)
			u, err = ls.SyncWebRisk(ctx, c, req)
			if err != nil {
				t.Fatal(err)
			}
			if u.Reset || len(u.Removals) != len(removals) || !indexEntries(t, db).Equal(v2) {
				t.Fatalf("after the DIFF: reset %v, %d removals", u.Reset, len(u.Removals))
			}

			// A bad checksum, then a malformed answer, then a cut one: the
			// index answers as before; the first two forget the version.
			v3, _, _ := v2.Apply([]int32{1, 2, 3}, randomList(t, r, 10))
			for _, mode := range []string{"badsum", "garbage", "cut"} {
				srv.set(mode, nil)
				if mode == "badsum" {
					srv.set(mode, v3)
				}
				before := indexEntries(t, db)
				_, err = ls.SyncWebRisk(ctx, c, req)
				want := map[string]error{"badsum": ErrChecksum, "garbage": ErrMalformed}[mode]
				if err == nil || (want != nil && !errors.Is(err, want)) {
					t.Fatalf("%s: err %v, want %v", mode, err, want)
				}
				if !indexEntries(t, db).Equal(before) || !before.Equal(v2) {
					t.Fatalf("%s: the index changed", mode)
				}
				if mode != "cut" && len(ls.Version(name)) != 0 {
					t.Fatalf("%s: version %x kept", mode, ls.Version(name))
				}
			}
			// The next sync asks for a reset, and gets v3.
			srv.set("", nil)
			u, err = ls.SyncWebRisk(ctx, c, req)
			if err != nil {
				t.Fatal(err)
			}
			if last := srv.asked[len(srv.asked)-1]; last != "" || !u.Reset {
				t.Fatalf("asked with version %q, reset %v", last, u.Reset)
			}
			if !indexEntries(t, db).Equal(v3) {
				t.Fatal("index is not v3")
			}

			// The state survives a reopen, and keeps the history.
			db.Close()
			db = openIndex(t, dir)
			ls = openLists(t, db)
			s := ls.State(name)
			if !s.List.Equal(v3) || !bytes.Equal(s.Version, []byte{3}) {
				t.Fatal("state not kept")
			}
		})
	}
}

// TestInterruptedCommit: an Apply whose context is done before it begins
// changes nothing; a crash after the commit point leaves the next state
// file; readers refuse the directory, and Open finishes the update.
func TestInterruptedCommit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	v1 := randomList(t, r, 500)
	dir := t.TempDir()
	db := openIndex(t, dir)
	ls := openLists(t, db)
	name := WebRiskName("MALWARE")
	sum := v1.Checksum()
	u := map[string]*Update{name: {Reset: true, Additions: v1, Version: []byte("a"), Checksum: sum[:]}}
	// An Apply interrupted before it begins changes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ls.Apply(ctx, u); !errors.Is(err, context.Canceled) || Pending(dir) || indexEntries(t, db).Len() != 0 {
		t.Fatalf("Apply with a cancelled context: %v; want context.Canceled and nothing changed", err)
	}
	if err := ls.Apply(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	// Write the next state by hand, as Apply does before it changes the
	// index, and stop there.
	v2, _, _ := v1.Apply([]int32{0, 1, 2}, randomList(t, r, 50))
	next := state{name: {Name: name, Version: []byte("b"), List: v2}}
	if err := writeFile(filepath.Join(dir, NextStateFile), next.marshal()); err != nil {
		t.Fatal(err)
	}
	if !Pending(dir) {
		t.Fatal("not pending")
	}
	if _, err := ReadState(dir); !errors.Is(err, ErrState) {
		t.Fatalf("ReadState of an interrupted update: %v", err)
	}
	ls = openLists(t, db)
	if Pending(dir) || !indexEntries(t, db).Equal(v2) || string(ls.Version(name)) != "b" {
		t.Fatal("the interrupted update was not finished")
	}
}

func TestHistory(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	db := openIndex(t, dir)
	ls := openLists(t, db)
	name := WebRiskName("MALWARE")
	var versions []*List
	l := &List{}
	for i := range KeepVersions + 3 {
		var removals []int32
		for j := 0; j < l.Len(); j += 7 {
			removals = append(removals, int32(j))
		}
		next, _, err := l.Apply(removals, randomList(t, r, 100))
		if err != nil {
			t.Fatal(err)
		}
		sum := next.Checksum()
		u := &Update{Reset: i == 0, Removals: removals, Additions: next, Version: []byte{byte(i)}, Checksum: sum[:]}
		u.Removals, u.Additions = l.Diff(next)
		if i == 0 {
			u.Removals = nil
		}
		if err := ls.Apply(context.Background(), map[string]*Update{name: u}); err != nil {
			t.Fatalf("version %d: %v", i, err)
		}
		versions = append(versions, next)
		l = next
	}
	s := ls.State(name)
	for i, v := range versions {
		got, ok := s.At([]byte{byte(i)})
		kept := i >= len(versions)-1-KeepVersions
		if ok != kept {
			t.Fatalf("version %d: kept %v, want %v", i, ok, kept)
		}
		if ok && !got.Equal(v) {
			t.Fatalf("version %d: wrong list", i)
		}
	}
}

// TestSyncMillion syncs a RESET of a million prefixes, then a DIFF.
func TestSyncMillion(t *testing.T) {
	ctx := context.Background()
	if testing.Short() {
		t.Skip("a million prefixes")
	}
	r := rand.New(rand.NewPCG(7, 8))
	var b Builder
	raw := make([]byte, 4)
	for range 1_000_000 {
		for j := range raw {
			raw[j] = byte(r.Uint32())
		}
		b.Add(raw)
	}
	v1 := b.List()
	srv := &fakeServer{rice: true, versions: []*List{v1}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &Client{Endpoint: ts.URL, Key: "k"}
	db := openIndex(t, t.TempDir())
	ls := openLists(t, db)
	if _, err := ls.SyncWebRisk(ctx, c, DiffRequest{ThreatType: "MALWARE"}); err != nil {
		t.Fatal(err)
	}
	full, prefixes, err := db.Count(ctx, nil, 0)
	if err != nil || full != 0 || prefixes != int64(v1.Len()) {
		t.Fatalf("count %d %d %v, want %d prefixes", full, prefixes, err, v1.Len())
	}
	v2, _, _ := v1.Apply([]int32{0, 1000, 500000}, randomList(t, r, 10000))
	srv.set("", v2)
	if _, err := ls.SyncWebRisk(ctx, c, DiffRequest{ThreatType: "MALWARE"}); err != nil {
		t.Fatal(err)
	}
	if !indexEntries(t, db).Equal(v2) {
		t.Fatal("index is not v2")
	}
}
