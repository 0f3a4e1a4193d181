package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestErrorShape: a request no endpoint serves gets the error body every
// other error gets, {"error","kind"} in JSON, with its status and, for a
// wrong method, the Allow header (testdata/error-shape.txt).
func TestErrorShape(t *testing.T) {
	ts := httptest.NewServer(New(openMem(t), nil))
	defer ts.Close()
	b, err := os.ReadFile(filepath.Join("testdata", "error-shape.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			t.Fatalf("error-shape.txt:%d: want METHOD PATH<TAB>STATUS<TAB>KIND[<TAB>ALLOW]: %q", n, line)
		}
		method, path, _ := strings.Cut(f[0], " ")
		status, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("error-shape.txt:%d: status %q", n, f[1])
		}
		kind, allow := f[2], ""
		if len(f) > 3 {
			allow = f[3]
		}
		t.Run(f[0], func(t *testing.T) {
			req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("x"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != status {
				t.Errorf("status %d, want %d (body %q)", resp.StatusCode, status, body)
			}
			if got := resp.Header.Get("Allow"); got != allow {
				t.Errorf("Allow %q, want %q", got, allow)
			}
			checkErrorBody(t, resp, body, kind)
		})
	}
}

// checkErrorBody checks that an answer is an error body of kind: JSON
// with exactly the fields error (not empty) and kind.
func checkErrorBody(t *testing.T, resp *http.Response, body []byte, kind string) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json (body %q)", ct, body)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("body %q is not JSON: %v", body, err)
	}
	msg, _ := m["error"].(string)
	if len(m) != 2 || m["kind"] != kind || msg == "" {
		t.Errorf("body %s, want {\"error\":..., \"kind\":%q}", body, kind)
	}
}

// TestStatsBodyNames: /v1/stats names its fields in snake_case, like
// every other body, and still under the former Go names (one release).
func TestStatsBodyNames(t *testing.T) {
	ts := httptest.NewServer(New(openMem(t), nil))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"entries", "prefix_entries", "filter_bits", "filter_false_positives", "lsm_bytes", "disk_bytes", "format_version", "profile",
		"Entries", "FilterBits", "FormatVersion", "Profile"} {
		if _, ok := m[name]; !ok {
			t.Errorf("/v1/stats has no %q: %v", name, m)
		}
	}
}
