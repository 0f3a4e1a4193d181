package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/golden"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

func entriesBody(n int, seed string) []byte {
	var b []byte
	for i := range n {
		e := store.FullEntry(hashkey.Sum(fmt.Appendf(nil, "%s%d", seed, i)), store.Value{})
		b = wire.AppendEntry(b, &e)
	}
	return b
}

// TestIdempotentRepeat: every write endpoint answers a repeat of its key
// with the first answer, byte for byte, without applying it again, and
// refuses the key with another request (422).
func TestIdempotentRepeat(t *testing.T) {
	_, ts, db := newTestServer(t, nil)
	if err := db.PutBatch(context.Background(), []store.Entry{store.FullEntry(hashkey.Sum([]byte("del")), store.Value{})}); err != nil {
		t.Fatal(err)
	}
	del := store.FullEntry(hashkey.Sum([]byte("del")), store.Value{})
	for _, tc := range []struct {
		name, path string
		body       []byte
		status     int
		want       string
	}{
		{"add", "/v1/add", entriesBody(3, "a"), 200, "\x01\x01\x01"},
		{"visit", "/v1/visit?after=1h", entriesBody(2, "v"), 200, "\x01\x01"},
		{"put", "/v1/put", entriesBody(2, "p"), 204, ""},
		{"delete", "/v1/delete", wire.AppendEntry(nil, &del), 204, ""},
		{"urls add", "/v1/urls/add", []byte("https://a.example/\nhttps://A.example/\nnope\n"), 200,
			"new\npresent\ninvalid\thashkey: urlhash+sha256: invalid url \"nope\": missing scheme\n"},
		{"urls visit", "/v1/urls/add?revisit_after=24h", []byte("https://v.example/\n"), 200, "new\n"},
		{"load", "/v1/load", []byte(`{"key":"` + strings.Repeat("ab", 32) + `"}` + "\n"), 200, `{"Added":1,"Present":0,"Streamed":false}` + "\n"},
		{"delete prefix", "/v1/delete-prefix?prefix=abab", nil, 200, `{"full":1,"prefixes":0}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "key-" + tc.name
			for i := range 3 {
				status, got := post(t, ts, tc.path, key, tc.body)
				if status != tc.status || got != tc.want {
					t.Fatalf("try %d: %d %q, want %d %q", i, status, got, tc.status, tc.want)
				}
			}
			// Without the key it is a new request.
			if status, got := post(t, ts, tc.path, "", tc.body); status == tc.status && got == tc.want && tc.status == 200 && tc.name != "put" {
				t.Errorf("without a key: %d %q, the first answer again", status, got)
			}
			other := append(bytes.Clone(tc.body), tc.body...)
			if tc.body == nil {
				other = []byte("x")
			}
			if status, got := post(t, ts, tc.path, key, other); status != 422 || !strings.Contains(got, "key_reused") {
				t.Errorf("other body: %d %s, want 422 key_reused", status, got)
			}
		})
	}
}

// TestIdempotentConcurrent: repeats of one key sent at once all get the
// answer of the one that ran, which alone stored the keys.
func TestIdempotentConcurrent(t *testing.T) {
	_, ts, _ := newTestServer(t, nil)
	body := entriesBody(2000, "c")
	want := string(bytes.Repeat([]byte{1}, 2000))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			status, got := post(t, ts, "/v1/add", "same", body)
			if status != 200 || got != want {
				t.Errorf("%d, %d answers not all new", status, len(got))
			}
		})
	}
	wg.Wait()
	// A new key for the same body: every key present now.
	if _, got := post(t, ts, "/v1/add", "other", body); got != string(make([]byte, 2000)) {
		t.Errorf("another key: not all present")
	}
}

// TestIdempotencyKeyHeader: malformed keys are refused (400), a bare
// token is taken.
func TestIdempotencyKeyHeader(t *testing.T) {
	_, ts, _ := newTestServer(t, nil)
	for _, tc := range []struct {
		value string
		want  int
	}{
		{`"ok-1"`, 200},
		{`bare-token`, 200},
		{`""`, 400},
		{`"unterminated`, 400},
		{`"` + strings.Repeat("k", 256) + `"`, 400},
		{"\"tab\there\"", 400},
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/urls/add", strings.NewReader("https://k.example/\n"))
		req.Header.Set("Idempotency-Key", tc.value)
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Idempotency-Key: %s: %d, want %d", tc.value, resp.StatusCode, tc.want)
		}
	}
}

// TestPresentWithoutSync: a batch of present keys is answered without an
// fsync, with or without a key; a batch with a new key waits for one.
func TestPresentWithoutSync(t *testing.T) {
	s, ts, _ := newTestServer(t, nil)
	body := entriesBody(10, "s")
	post(t, ts, "/v1/add", "", body)
	before := s.commit.syncs.Load()
	for i := range 5 {
		post(t, ts, "/v1/add", "", body)
		post(t, ts, "/v1/add", fmt.Sprintf("k%d", i), body)
		post(t, ts, "/v1/urls/add", "", []byte("invalid only\n"))
	}
	if got := s.commit.syncs.Load() - before; got != 0 {
		t.Errorf("%d fsyncs for present keys only, want 0", got)
	}
	post(t, ts, "/v1/add", "", entriesBody(1, "new"))
	if got := s.commit.syncs.Load() - before; got != 1 {
		t.Errorf("%d fsyncs for a new key, want 1", got)
	}
}

// TestReplayWritesMissingKeys: a record stored without its keys (a crash
// after the record, which is written first) is answered as recorded, and
// the keys are written again.
func TestReplayWritesMissingKeys(t *testing.T) {
	_, ts, db := newTestServer(t, nil)
	body := entriesBody(3, "crash")
	digest := wire.RequestDigest("POST", "/v1/add", "", body)
	a := answer{status: 200, ctype: "application/octet-stream", body: []byte{1, 1, 1}, fresh: true}
	rec := &index.Record{Key: "crashed", TTL: time.Hour, Answer: func([]bool) []byte { return a.appendRecord(nil, &digest) }}
	if err := db.PutRecord(rec); err != nil {
		t.Fatal(err)
	}
	status, got := post(t, ts, "/v1/add", "crashed", body)
	if status != 200 || got != "\x01\x01\x01" {
		t.Fatalf("replay: %d %q, want the recorded answer", status, got)
	}
	es, _ := wire.DecodeEntries(body)
	hs := []hashkey.Hash{es[0].Hash, es[1].Hash, es[2].Hash}
	found, err := db.HasBatch(context.Background(), hs)
	if err != nil || !found[0] || !found[1] || !found[2] {
		t.Errorf("after the replay: %v, %v; want every key stored", found, err)
	}
}

// hidden is a backend that cannot keep records with its writes.
type hidden struct{ store.Backend }

// TestIdempotentMemRecords: on a backend without records the server keeps
// answers in memory, with the same semantics while it runs.
func TestIdempotentMemRecords(t *testing.T) {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := httptest.NewServer(New(hidden{db}, &Options{Logger: slog.New(slog.DiscardHandler)}))
	defer ts.Close()
	body := entriesBody(2, "mem")
	for i := range 2 {
		if status, got := post(t, ts, "/v1/add", "m", body); status != 200 || got != "\x01\x01" {
			t.Fatalf("try %d: %d %q", i, status, got)
		}
	}
	if status, _ := post(t, ts, "/v1/add", "m", entriesBody(1, "other")); status != 422 {
		t.Errorf("other body: %d, want 422", status)
	}
}

func FuzzParseRecord(f *testing.F) {
	d := [32]byte{1}
	a := answer{status: 200, ctype: "text/plain", body: []byte("new\n"), fresh: true}
	f.Add(a.appendRecord(nil, &d))
	f.Add([]byte{recordVersion})
	bits := answer{status: 200, ctype: wire.ContentTypeBinary, body: bytes.Repeat([]byte{1, 0, 0}, 50)}
	f.Add(bits.appendRecord(nil, &d))
	f.Fuzz(func(t *testing.T, b []byte) {
		digest, a, err := parseRecord(b)
		if err != nil {
			return
		}
		again, a2, err := parseRecord(a.appendRecord(nil, &digest))
		if err != nil || again != digest || a2.status != a.status&0xffff || a2.ctype != a.ctype || !bytes.Equal(a2.body, a.body) || a2.fresh != a.fresh {
			t.Fatalf("round trip of %x: %v", b, err)
		}
	})
}

// TestIdempotentEmpty: requests that store nothing keep their answer too.
func TestIdempotentEmpty(t *testing.T) {
	_, ts, db := newTestServer(t, nil)
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/put", "", ""},
		{"/v1/add", "", ""},
		{"/v1/urls/add", "bad\n", "invalid\thashkey: urlhash+sha256: invalid url \"bad\": missing scheme\n"},
	} {
		key := "empty" + tc.path
		post(t, ts, tc.path, key, []byte(tc.body))
		var got []byte
		var ok bool
		// The record of a write that stored nothing may follow its answer.
		for range 100 {
			if got, ok, _ = db.Recorded(key); ok {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !ok {
			t.Errorf("%s: no record", tc.path)
			continue
		}
		if _, a, err := parseRecord(got); err != nil || string(a.body) != tc.want {
			t.Errorf("%s: record %q, %v; want %q", tc.path, a.body, err, tc.want)
		}
	}
}

// TestRecordGolden pins the bytes of an idempotency record as the index
// keeps them (go test ./server -update rewrites the file).
func TestRecordGolden(t *testing.T) {
	digest := wire.RequestDigest("POST", "/v1/urls/add", "", []byte("https://example.com/\n"))
	a := answer{status: 200, ctype: wire.ContentTypeText, body: []byte("new\n"), fresh: true}
	golden.Check(t, "testdata/record-v1.golden", a.appendRecord(nil, &digest))
}

// TestRecordPacked: a batch's answer of 0 and 1 bytes is kept packed 8 to
// a byte (version 2, pinned in testdata/record-v2.golden) and read back
// byte for byte; other bodies, and short ones, stay version 1; damaged
// packed records are refused.
func TestRecordPacked(t *testing.T) {
	digest := wire.RequestDigest("POST", "/v1/add", "", []byte("body"))
	body := make([]byte, 16384)
	for i := range body {
		body[i] = byte(i*7%3) & 1
	}
	a := answer{status: 200, ctype: wire.ContentTypeBinary, body: body, fresh: true}
	got := a.appendRecord(nil, &digest)
	if got[0] != packedVersion || len(got) > 64+len(body)/8 {
		t.Fatalf("version %d, %d bytes for a %d-byte answer of bits", got[0], len(got), len(body))
	}
	d2, a2, err := parseRecord(got)
	if err != nil || d2 != digest || !bytes.Equal(a2.body, body) || a2.status != 200 || !a2.fresh || a2.ctype != a.ctype {
		t.Fatalf("round trip: %v", err)
	}
	for _, b := range [][]byte{bytes.Repeat([]byte{1}, minPacked-1), append(bytes.Repeat([]byte{0}, 100), 2)} {
		if v := (&answer{status: 200, body: b}).appendRecord(nil, &digest)[0]; v != recordVersion {
			t.Errorf("body of %d bytes: version %d, want %d", len(b), v, recordVersion)
		}
	}
	short := answer{status: 200, ctype: wire.ContentTypeBinary, body: bytes.Repeat([]byte{1, 0, 1}, 33)}
	packed := short.appendRecord(nil, &digest)
	golden.Check(t, "testdata/record-v2.golden", packed)
	for name, damage := range map[string]func([]byte) []byte{
		"cut":           func(b []byte) []byte { return b[:len(b)-1] },
		"longer":        func(b []byte) []byte { return append(b, 0) },
		"bits past end": func(b []byte) []byte { b[len(b)-1] |= 0x80; return b },
		"flag lost":     func(b []byte) []byte { b[35] &^= flagPacked; b[0] = packedVersion; return b },
	} {
		if _, _, err := parseRecord(damage(bytes.Clone(packed))); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}
