package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesBeforeReady: a serve that cannot answer (a missing or
// bad TLS file, its port taken) exits 2 without its ready line and leaves
// no index directory behind.
func TestServeRefusesBeforeReady(t *testing.T) {
	work := t.TempDir()
	pki := newTestPKI(t, work)
	garbage := filepath.Join(work, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing key", []string{"--tls-cert", pki.certFile, "--tls-key", filepath.Join(work, "nope.pem")}, "nope.pem"},
		{"bad key", []string{"--tls-cert", pki.certFile, "--tls-key", garbage}, "garbage.pem"},
		{"key for another cert", []string{"--tls-cert", pki.caFile, "--tls-key", pki.keyFile}, "private key does not match"},
		{"port in use", []string{"--listen", busy.Addr().String()}, "address already in use"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			args := append([]string{"serve", "--db", dir, "--listen", "127.0.0.1:0"}, tc.args...)
			code, _, errs := runCLI(t, "", args...)
			if code != exitError || strings.Contains(errs, "serving") || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2, %q and no serving line", code, errs, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the failed serve left %s (%v)", dir, err)
			}
		})
	}
}

// TestSyncFailureLeavesNoDir: a sync that fails removes the index
// directory it created, and only that one: a directory that existed, or
// an index that holds a list, stays as it was. Without an API key sync
// refuses before it opens anything or goes to the network.
func TestSyncFailureLeavesNoDir(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() // nothing answers there
	ln.Close()

	t.Run("new directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "list")
		if code, _, errs := runCLI(t, "", "sync", "--db", dir, "--endpoint", down); code != exitError {
			t.Fatalf("sync from a closed port: exit %d, %s", code, errs)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the failed sync left %s (%v)", dir, err)
		}
	})
	t.Run("existing directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "list")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runCLI(t, "", "sync", "--db", dir, "--endpoint", down); code != exitError {
			t.Fatalf("exit %d, %s", code, errs)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("a directory the sync did not create was removed: %v", err)
		}
	})
	t.Run("index with a list", func(t *testing.T) {
		_, endpoint := webRiskUpstream(t, prefixList("a.example/"))
		dir := syncedDir(t, endpoint)
		if code, _, errs := runCLI(t, "", "sync", "--db", dir, "--endpoint", down); code != exitError {
			t.Fatalf("exit %d, %s", code, errs)
		}
		if lookupHash(t, dir, "a.example/") != exitOK {
			t.Error("the list synced before is gone")
		}
	})
	t.Run("no key", func(t *testing.T) {
		t.Setenv("WEBRISK_API_KEY", "")
		dir := filepath.Join(t.TempDir(), "list")
		code, _, errs := runCLI(t, "", "sync", "--db", dir)
		if code != exitError || !strings.Contains(errs, "no API key") {
			t.Errorf("exit %d, %q; want 2 and no API key", code, errs)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("sync without a key left %s (%v)", dir, err)
		}
	})
}
