package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeJSONLogDurations: with --log-format json a duration is written
// in seconds, as a float, under NAME_seconds, and still in nanoseconds
// under NAME (one release); text keeps Go's duration text.
func TestServeJSONLogDurations(t *testing.T) {
	var b bytes.Buffer
	l, err := newLogger(&b, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	l.Debug("request", "duration", 1500*time.Millisecond, "status", 200)
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("%s: %v", b.Bytes(), err)
	}
	if m["duration_seconds"] != 1.5 || m["duration"] != float64(1.5e9) || m["status"] != float64(200) {
		t.Errorf("logged %s, want duration_seconds 1.5, duration 1500000000 and status 200", b.Bytes())
	}
	b.Reset()
	if l, err = newLogger(&b, "text", "debug"); err != nil {
		t.Fatal(err)
	}
	l.Debug("request", "duration", 1500*time.Millisecond)
	if !strings.Contains(b.String(), "duration=1.5s") || strings.Contains(b.String(), "_seconds") {
		t.Errorf("text logged %q, want duration=1.5s alone", b.String())
	}
}

// TestServeHTTPErrorLogJSON: net/http's own lines (here a TLS handshake
// that failed: a plain HTTP request to an HTTPS server) go to the server's
// structured log, as JSON lines with --log-format json, at level warn.
func TestServeHTTPErrorLogJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	cmd := childCommand("serve", "--db", filepath.Join(dir, "idx"), "--listen", "127.0.0.1:0",
		"--tls-cert", cert, "--tls-key", key, "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var addr string
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve exited before it was ready")
			}
			if _, a, ok := strings.Cut(l, " on https://"); ok {
				addr = a
			}
		case <-time.After(30 * time.Second):
			t.Fatal("serve not ready after 30 s")
		}
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.Read(make([]byte, 512))
	c.Close()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve exited")
			}
			if !strings.Contains(l, "TLS handshake error") {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("net/http's line is not JSON: %q", l)
			}
			if m["level"] != slog.LevelWarn.String() || m["component"] != "net/http" {
				t.Fatalf("net/http's line %s: want level WARN, component net/http", l)
			}
			return
		case <-deadline:
			t.Fatal("no TLS handshake error logged after 10 s")
		}
	}
}

// writeTestCert writes a certificate for 127.0.0.1 and its key into dir
// (signed by a test CA: newTestPKI) and returns their files.
func writeTestCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	p := newTestPKI(t, dir)
	return p.certFile, p.keyFile
}
