package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/threatlist"
)

// nodeClientDir holds the Node interop script and its npm dependencies
// (npm ci there installs Google's @google-cloud/web-risk; .ci/run does).
const nodeClientDir = "../../interop/node"

// TestNodeWebRiskClient runs Google's Node Web Risk client in REST mode
// (numeric enums, the key in x-goog-api-key, camelCase JSON) against a
// server of a synced list: computeDiff (a Rice-coded RESET, then a DIFF
// from the version it got), uris:search, hashes:search, and a wrong key.
// It skips when node or the package is missing (under CI both must be
// there).
func TestNodeWebRiskClient(t *testing.T) {
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat(filepath.Join(nodeClientDir, "node_modules", "@google-cloud", "web-risk"))
	if errNode != nil || errPkg != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("under CI the Node client must be installed (.ci/run runs npm ci in interop/node): %v %v", errNode, errPkg)
		}
		t.Skip("node or @google-cloud/web-risk missing: npm ci in interop/node")
	}
	// An upstream list of 4-byte prefixes, among them evil.example/'s,
	// and the full hash of evil.example/.
	evil := hashkey.Sum([]byte("evil.example/"))
	var b threatlist.Builder
	b.Add(evil[:4])
	b.Add(evil[:])
	for i := range 1000 {
		h := hashkey.Sum([]byte{byte(i), byte(i >> 8)})
		b.Add(h[:4])
	}
	fake := &webRiskFake{lists: []*threatlist.List{b.List()}}
	up := httptest.NewServer(fake)
	defer up.Close()
	dir := filepath.Join(t.TempDir(), "list")
	if code, _, errs := runCLI(t, "", "sync", "--db", dir, "--endpoint", up.URL); code != exitOK {
		t.Fatal(errs)
	}
	db, err := index.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	so := &server.Options{Token: "k3y"}
	if err := serveThreatLists(context.Background(), db, dir, false, so); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(server.New(db, so))
	defer ts.Close()

	cmd := exec.Command("node", "webrisk_interop.js", ts.URL, "k3y", "http://www.evil.example/login", base64.StdEncoding.EncodeToString(evil[:4]))
	cmd.Dir = nodeClientDir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Diff struct {
			ResponseType      any
			RiceEntries       int
			RawBytes          int
			Version, Checksum string
		}
		Again  struct{ ResponseType any }
		Uris   struct{ ThreatTypes []any }
		Hashes struct{ Count int }
		BadKey string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	l := fake.lists[0]
	sum := l.Checksum()
	if got.Diff.ResponseType != "RESET" || got.Diff.RiceEntries != len(l.Concat(4))/4 || got.Diff.RawBytes != 32 ||
		got.Diff.Version != base64.StdEncoding.EncodeToString([]byte{1}) || got.Diff.Checksum != hex.EncodeToString(sum[:]) {
		t.Errorf("computeDiff as the Node client read it: %+v", got.Diff)
	}
	if got.Again.ResponseType != "DIFF" {
		t.Errorf("second computeDiff: %v, want DIFF", got.Again.ResponseType)
	}
	if len(got.Uris.ThreatTypes) != 1 || got.Uris.ThreatTypes[0] != "MALWARE" || got.Hashes.Count != 1 {
		t.Errorf("searches: %+v %+v", got.Uris, got.Hashes)
	}
	if !strings.Contains(got.BadKey, "API key") {
		t.Errorf("a wrong key: %q", got.BadKey)
	}
}
