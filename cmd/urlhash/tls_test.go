package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// clientRun runs a urlhash command as a child with extra environment and
// returns its exit code and its output (stdout and stderr).
func clientRun(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := childCommand(args...)
	cmd.Env = append(cmd.Env, env...)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestTLSClients: a client trusts a server's private CA with --ca-file (or
// SSL_CERT_FILE, as Go reads it), is told to when it does not, and http://
// to an HTTPS server says to use https://.
func TestTLSClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	work := t.TempDir()
	pki := newTestPKI(t, work)
	_, addr := startServeWith(t, filepath.Join(work, "idx"), "--listen", "127.0.0.1:0", "--tls-cert", pki.certFile, "--tls-key", pki.keyFile)
	if !strings.HasPrefix(addr, "https://") {
		t.Fatalf("serve --tls-cert serves %s", addr)
	}
	url := "https://example.com/"
	// No system root at all: the test's CA is not among them anyway.
	noCerts := []string{"SSL_CERT_FILE=" + filepath.Join(work, "none.pem"), "SSL_CERT_DIR=" + t.TempDir()}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		want []string
	}{
		{"ca-file", noCerts, []string{"has", "--db", addr, "--ca-file", pki.caFile, url}, exitNotFound, []string{"absent\t" + url}},
		{"ca-file add", nil, []string{"add", "--db", addr, "--ca-file", pki.caFile, url}, exitOK, nil},
		{"SSL_CERT_FILE", []string{"SSL_CERT_FILE=" + pki.caFile}, []string{"has", "--db", addr, url}, exitOK, []string{"present\t" + url}},
		{"unknown CA", noCerts, []string{"has", "--db", addr, url}, exitError,
			[]string{"certificate signed by unknown authority", "urlhash: hint: --ca-file FILE"}},
		{"http to https", nil, []string{"has", "--db", "http://" + strings.TrimPrefix(addr, "https://"), url}, exitError,
			[]string{"the server speaks HTTPS: use " + addr}},
		{"ca-file on a directory", nil, []string{"has", "--db", filepath.Join(work, "other"), "--ca-file", pki.caFile, url}, exitError,
			[]string{"--ca-file applies to an https:// server"}},
		{"ca-file not PEM", nil, []string{"has", "--db", addr, "--ca-file", pki.keyFile, url}, exitError,
			[]string{"no PEM certificate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := clientRun(t, tc.env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
			if strings.Contains(out, "invalid character") {
				t.Errorf("output %q is a JSON decoding error", out)
			}
		})
	}
}

// TestTokens: a server with a token answers /v1/health to anyone with
// nothing but its status; a 401 says how to send the token; a client
// without URLHASH_TOKEN, or with another, is told so; a password in a
// --db location is never echoed.
func TestTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	work := t.TempDir()
	tokenFile := filepath.Join(work, "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, addr := startServeWith(t, filepath.Join(work, "idx"), "--listen", "127.0.0.1:0", "--token-file", tokenFile)

	resp, err := http.Get(addr + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "{\"status\":\"ok\"}\n" {
		t.Errorf("GET /v1/health without a token: %d %q; want 200 {\"status\":\"ok\"}", resp.StatusCode, body)
	}
	resp, err = http.Get(addr + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error, Kind string }
	err = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 401 || err != nil || e.Kind != "unauthorized" || !strings.Contains(e.Error, "Authorization: Bearer TOKEN") || !strings.Contains(e.Error, "URLHASH_TOKEN") {
		t.Errorf("GET /v1/stats without a token: %d %+v %v; want 401 unauthorized with how to send a token", resp.StatusCode, e, err)
	}

	hostPort := strings.TrimPrefix(addr, "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	url := "https://example.com/"
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"no token", []string{"URLHASH_TOKEN="}, []string{"has", "--db", addr, url}, exitError, "urlhash: hint: set URLHASH_TOKEN"},
		{"wrong token", []string{"URLHASH_TOKEN=nope"}, []string{"has", "--db", addr, url}, exitError, "URLHASH_TOKEN is not the token"},
		{"token", []string{"URLHASH_TOKEN=s3cret-token"}, []string{"has", "--db", addr, url}, exitNotFound, "absent\t" + url},
		{"password, 401", []string{"URLHASH_TOKEN="}, []string{"has", "--db", "http://crawler:pa55word@" + hostPort, url}, exitError, "crawler:xxxxx@"},
		{"password, down", nil, []string{"has", "--db", "http://crawler:pa55word@" + down, url}, exitError, "connection refused"},
		{"password, stats", []string{"URLHASH_TOKEN="}, []string{"stats", "--db", "http://crawler:pa55word@" + hostPort + "/"}, exitError, "xxxxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := clientRun(t, tc.env, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, out, tc.code, tc.want)
			}
			if strings.Contains(out, "pa55word") {
				t.Errorf("the password is echoed: %q", out)
			}
		})
	}
}

// TestClientHelpNamesToken: every command whose --db takes a server
// names URLHASH_TOKEN and --ca-file in its help and its manual page.
func TestClientHelpNamesToken(t *testing.T) {
	clients := 0
	for _, c := range commands() {
		fs, _ := c.flags()
		db := fs.Lookup("db")
		if db == nil || !strings.Contains(db.Usage, "http") {
			continue
		}
		clients++
		for what, text := range map[string]string{"help": c.usage(), "man page": c.manPage()} {
			for _, want := range []string{"URLHASH_TOKEN", "ca\\-file", "ca-file"} {
				if what == "help" && want == "ca\\-file" || what == "man page" && want == "ca-file" {
					continue
				}
				if !strings.Contains(text, want) {
					t.Errorf("%s's %s does not name %s", c.name, what, want)
				}
			}
		}
	}
	if clients < 10 {
		t.Errorf("%d commands take --db http://: want every client command", clients)
	}
}
