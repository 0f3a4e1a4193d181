package main

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/server"
)

// TestTokenFromEnvironment: a command on a server that wants a token sends
// URLHASH_TOKEN (the command reads it; package backend does not), and is
// refused without it.
func TestTokenFromEnvironment(t *testing.T) {
	db, err := index.Open("", &index.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := httptest.NewServer(server.New(db, &server.Options{Token: "s3cret", Logger: slog.New(slog.DiscardHandler)}))
	defer ts.Close()

	t.Setenv("URLHASH_TOKEN", "s3cret")
	if code, _, errs := runCLI(t, "https://example.com/a\n", "add", "--db", ts.URL); code != exitOK {
		t.Fatalf("add with URLHASH_TOKEN: exit %d, %q", code, errs)
	}
	if code, out, errs := runCLI(t, "https://example.com/a\n", "has", "--db", ts.URL); code != exitOK || out != "present\thttps://example.com/a\n" {
		t.Fatalf("has with URLHASH_TOKEN: exit %d, %q, %q", code, out, errs)
	}
	t.Setenv("URLHASH_TOKEN", "wrong")
	if code, _, errs := runCLI(t, "https://example.com/a\n", "has", "--db", ts.URL); code != exitError || !strings.Contains(errs, "bearer token") {
		t.Errorf("has with a wrong URLHASH_TOKEN: exit %d, %q; want 2 and the server's refusal", code, errs)
	}
}
