package backend

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
)

// TestTokenIsAnOption: the token reaches the server from Options only;
// URLHASH_TOKEN in the environment is the command's to read, not Open's.
func TestTokenIsAnOption(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"server: missing or wrong bearer token","kind":"unauthorized"}` + "\n"))
			return
		}
		w.Write([]byte(`{"status":"ok","profile":""}` + "\n"))
	}))
	defer ts.Close()
	ctx := context.Background()
	t.Setenv("URLHASH_TOKEN", "s3cret")
	if db, err := Open(ctx, ts.URL, nil); err == nil {
		db.Close()
		t.Error("Open took the token from URLHASH_TOKEN")
	}
	db, err := Open(ctx, ts.URL, &Options{Remote: remote.Options{Token: "s3cret"}})
	if err != nil {
		t.Fatalf("Open with Options.Remote.Token: %v", err)
	}
	db.Close()
	if _, err := Open(ctx, ts.URL, &Options{Remote: remote.Options{Token: "wrong"}}); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Open with a wrong token: %v, want the server's refusal", err)
	}
}
