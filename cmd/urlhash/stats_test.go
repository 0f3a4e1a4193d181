package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/urlhash/urlhash/internal/golden"
)

// diskFigure matches the figures of a stats output that measure files on
// disk (they depend on the file system's allocation): the JSON fields of
// stats --json and of GET /v1/stats, and the numbers of the text line.
var diskFigure = regexp.MustCompile(`("(?:disk_bytes|disk_bytes_per_entry|lsm_bytes|vlog_bytes|DiskBytes|LSMBytes|VlogBytes)":)([0-9.]+)` +
	`|(disk bytes: )([0-9]+) \(([0-9.]+) per entry; lsm ([0-9]+), vlog ([0-9]+)\)`)

// maskDisk replaces the disk figures of out by D, after checking that
// each is positive (an index on disk has tables and a value log).
func maskDisk(t *testing.T, out string) string {
	t.Helper()
	return diskFigure.ReplaceAllStringFunc(out, func(m string) string {
		g := diskFigure.FindStringSubmatch(m)
		nums := g[2:3]
		if g[1] == "" {
			nums = g[4:8]
		}
		for _, n := range nums {
			if x, err := strconv.ParseFloat(n, 64); err != nil || x <= 0 {
				t.Errorf("disk figure %q in %q, want a positive number", n, m)
			}
		}
		if g[1] != "" {
			return g[1] + "D"
		}
		return g[3] + "D (D per entry; lsm D, vlog D)"
	})
}

// checkGolden compares got with the file testdata/name (go test
// ./cmd/urlhash -update rewrites it).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// TestStatsGolden pins the stats contract for a Badger index: the text
// and --json output of "urlhash stats", from the directory and through a
// server, and the server's GET /v1/stats body and stats metrics. Only the
// disk figures are masked (and checked positive).
func TestStatsGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := filepath.Join(t.TempDir(), "idx")
	var in strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&in, "https://stats.example/%d\n", i)
	}
	if code, _, errs := runCLI(t, in.String(), "add", "--db", dir); code != exitOK {
		t.Fatalf("add: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "add", "--db", dir, "--ttl", "24h", "https://ttl.example/"); code != exitOK {
		t.Fatalf("add --ttl: exit %d, %s", code, errs)
	}
	for _, args := range [][]string{{}, {"--json"}} {
		code, out, errs := runCLI(t, "", append([]string{"stats", "--db", dir}, args...)...)
		if code != exitOK {
			t.Fatalf("stats %v: exit %d, %s", args, code, errs)
		}
		checkGolden(t, "stats-cli"+strings.Join(args, "")+".golden", []byte(maskDisk(t, out)))
	}

	srv, addr := startServe(t, dir)
	for _, args := range [][]string{{}, {"--json"}} {
		out, err := cli(t, "", append([]string{"stats", "--db", addr}, args...)...)
		if err != nil {
			t.Fatalf("stats %v through the server: %v", args, err)
		}
		checkGolden(t, "stats-cli"+strings.Join(args, "")+".golden", []byte(maskDisk(t, out)))
	}
	get := func(path string) string {
		resp, err := http.Get(addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s, %v", path, resp.Status, err)
		}
		return string(b)
	}
	checkGolden(t, "stats-v1.golden", []byte(maskDisk(t, get("/v1/stats"))))
	// One lookup found and one the filter answers: the probe counters move.
	if out, _ := cli(t, "", "has", "--db", addr, "https://stats.example/1", "https://none.example/"); out != "present\thttps://stats.example/1\nabsent\thttps://none.example/\n" {
		t.Fatalf("has through the server: %q", out)
	}
	var metrics strings.Builder
	for _, line := range strings.SplitAfter(get("/metrics"), "\n") {
		if strings.Contains(line, "urlhash_entries") || strings.Contains(line, "urlhash_filter_") {
			metrics.WriteString(line)
		}
	}
	checkGolden(t, "stats-metrics.golden", []byte(metrics.String()))
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
}
