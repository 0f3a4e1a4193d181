package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// openMem opens an in-memory index closed at the test's end.
func openMem(t testing.TB) *index.DB {
	t.Helper()
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDeletePrefixRefusesEverything: an empty prefix is refused with 400
// and deletes nothing unless all=true says it is meant (testdata/
// delete-prefix.txt, applied in order to one index).
func TestDeletePrefixRefusesEverything(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	keys := []hashkey.Hash{{0x0f, 1}, {0x0f, 2}, {0xa0, 3}}
	for _, h := range keys {
		if err := db.Put(ctx, h, store.Value{}); err != nil {
			t.Fatal(err)
		}
	}
	ts := httptest.NewServer(New(db, nil))
	defer ts.Close()
	f, err := os.Open("testdata/delete-prefix.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 3 {
			t.Fatalf("delete-prefix.txt:%d: want 3 tab-separated fields", line)
		}
		want, _ := strconv.Atoi(fields[1])
		left, _ := strconv.ParseInt(fields[2], 10, 64)
		resp, err := http.Post(ts.URL+"/v1/delete-prefix?"+fields[0], "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("delete-prefix.txt:%d: %q: status %d, want %d", line, fields[0], resp.StatusCode, want)
		}
		full, _, err := db.Count(ctx, nil, 0)
		if err != nil || full != left {
			t.Fatalf("delete-prefix.txt:%d: %q: %d entries left (%v), want %d", line, fields[0], full, err, left)
		}
	}
}

// TestPutRefusesBadTimes: an entry whose seen times or expiry the index
// could not read back (issue 21, item 3) is refused with 400 bad_value on
// every write endpoint, and the index stays whole: Verify and a full Scan
// succeed afterwards.
func TestPutRefusesBadTimes(t *testing.T) {
	ctx := context.Background()
	db := openMem(t)
	ts := httptest.NewServer(New(db, nil))
	defer ts.Close()
	h := hashkey.Sum([]byte("x"))
	good := store.FullEntry(hashkey.Sum([]byte("good")), store.Value{FirstSeen: store.Unix(1893456000), LastSeen: store.Unix(1893456000)})
	for _, v := range []store.Value{
		{FirstSeen: store.Unix(math.MaxInt64), LastSeen: store.Unix(math.MaxInt64)},
		{LastSeen: store.Unix(1 << 62)},
		{FirstSeen: store.Unix(-5), LastSeen: store.Unix(10)},
		{Expires: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Expires: store.Unix(-1)},
	} {
		e := store.FullEntry(h, v)
		body := wire.AppendEntry(wire.AppendEntry(nil, &good), &e) // a good entry first: the batch is refused whole
		for _, path := range []string{"/v1/put", "/v1/add", "/v1/visit"} {
			resp, err := http.Post(ts.URL+path, "application/octet-stream", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !bytes.Contains(msg, []byte("bad_value")) {
				t.Errorf("%s %+v: %d %s, want 400 bad_value", path, v, resp.StatusCode, msg)
			}
		}
	}
	if err := db.Verify(ctx); err != nil {
		t.Fatalf("Verify after refused writes: %v", err)
	}
	if err := db.Scan(ctx, nil, 0, 0, func(store.Entry) error { return nil }); err != nil {
		t.Fatalf("Scan after refused writes: %v", err)
	}
	if ok, _ := db.Has(ctx, h); ok {
		t.Error("a refused entry is stored")
	}
}

// TestSlowBodiesHoldNoSlot: clients that send their headers and then a
// body a byte at a time (written by hand on raw connections) hold no
// in-flight slot: /v1/health, /metrics and whole requests are answered
// at once meanwhile, and the slow ones get 408 after BodyTimeout; a load,
// whose body streams, is cut when it pauses that long (issue 21, item 5).
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	db := openMem(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ts := httptest.NewServer(New(db, &Options{MaxInFlight: 8, BodyTimeout: 1500 * time.Millisecond, Logger: quiet}))
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "http://")
	const slow = 12
	answers := make(chan string, slow)
	for i := range slow {
		path, pause := "/v1/has", 400*time.Millisecond
		if i%3 == 0 {
			path, pause = "/v1/load", 2*time.Second // a streamed body that pauses
		}
		go func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				answers <- err.Error()
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 64\r\n\r\n", path)
			for range 64 {
				if _, err := c.Write([]byte{'{'}); err != nil {
					break
				}
				time.Sleep(pause)
				if c.SetReadDeadline(time.Now().Add(time.Millisecond)) == nil {
					if _, err := c.Read(make([]byte, 1)); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
						break // answered (or closed): stop writing
					}
				}
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			status, err := bufio.NewReader(io.MultiReader(strings.NewReader("H"), c)).ReadString('\n')
			if err != nil {
				status = err.Error()
			}
			answers <- path + ": " + strings.TrimSpace(status)
		}()
	}
	time.Sleep(300 * time.Millisecond) // the slow ones are in
	client := &http.Client{Timeout: 700 * time.Millisecond}
	for _, path := range []string{"/v1/health", "/metrics"} {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatalf("GET %s while slow bodies arrive: %v", path, err)
		}
		resp.Body.Close()
	}
	for range 16 { // more than MaxInFlight
		resp, err := client.Post(ts.URL+"/v1/has", "application/octet-stream", bytes.NewReader(make([]byte, 32)))
		if err != nil {
			t.Fatalf("POST /v1/has while slow bodies arrive: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST /v1/has: %d", resp.StatusCode)
		}
	}
	for range slow {
		if got := <-answers; !strings.Contains(got, " 408 ") {
			t.Errorf("a slow client got %q, want 408", got)
		}
	}
}

// TestCutAndOversizeBodies: written by hand on raw connections, a body cut
// short is a client error (400, was 500) and a Content-Length over MaxBody
// is answered 413 at once, without waiting for a body that never comes.
func TestCutAndOversizeBodies(t *testing.T) {
	db := openMem(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ts := httptest.NewServer(New(db, &Options{MaxBody: 1 << 10, Logger: quiet}))
	defer ts.Close()
	for _, c := range []struct {
		name, req  string
		closeWrite bool
		want       string
	}{
		{"cut", "POST /v1/put HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n\x20\x01\x02", true, " 400 "},
		{"cut before the body", "POST /v1/add HTTP/1.1\r\nHost: x\r\nContent-Length: 35\r\n\r\n", true, " 400 "},
		{"oversize", "POST /v1/put HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\nabc", false, " 413 "},
		{"chunked oversize", "POST /v1/has HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + strings.Repeat("a", 2048) + "\r\n0\r\n\r\n", false, " 413 "},
	} {
		c0, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c0, c.req)
		if c.closeWrite {
			c0.(*net.TCPConn).CloseWrite()
		}
		c0.SetReadDeadline(time.Now().Add(3 * time.Second))
		status, err := bufio.NewReader(c0).ReadString('\n')
		c0.Close()
		if !strings.Contains(status, c.want) {
			t.Errorf("%s: %q, %v; want%s", c.name, status, err, c.want)
		}
	}
}
