package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/clockhook"
	"github.com/urlhash/urlhash/internal/fakeclock"
	"github.com/urlhash/urlhash/wire"
)

// TestRevisitParameter: /v1/visit and /v1/urls/add take one revisit
// parameter, revisit_after, and its alias after (the name /v1/visit read
// first): both given must agree. A visit due within the hour is not new
// again, whatever name says so.
func TestRevisitParameter(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		query  string
		status int
		answer string // the second visit's, after a first one
	}{
		{"visit revisit_after", wire.PathVisit, "revisit_after=1h", http.StatusOK, "\x00"},
		{"visit revisit_after, due", wire.PathVisit, "revisit_after=1m", http.StatusOK, "\x01"},
		{"visit after, due", wire.PathVisit, "after=1m", http.StatusOK, "\x01"},
		{"urls/add revisit_after, due", wire.PathURLsAdd, "revisit_after=1m", http.StatusOK, "new\n"},
		{"urls/add after, due", wire.PathURLsAdd, "after=1m", http.StatusOK, "new\n"},
		{"visit after", wire.PathVisit, "after=1h", http.StatusOK, "\x00"},
		{"visit both", wire.PathVisit, "revisit_after=1h&after=1h", http.StatusOK, "\x00"},
		{"visit both, disagreeing", wire.PathVisit, "revisit_after=1h&after=2h", http.StatusBadRequest, ""},
		{"visit bad duration", wire.PathVisit, "after=soon", http.StatusBadRequest, ""},
		{"urls/add revisit_after", wire.PathURLsAdd, "revisit_after=1h", http.StatusOK, "present\n"},
		{"urls/add after", wire.PathURLsAdd, "after=1h", http.StatusOK, "present\n"},
		{"urls/add both, disagreeing", wire.PathURLsAdd, "after=1h&revisit_after=1s", http.StatusBadRequest, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The visits are 2 minutes apart by the index's clock.
			clock := fakeclock.New(fakeclock.Start())
			o := index.Options{InMemory: true}
			clockhook.SetIndex(&o, clock.Now)
			db, err := index.Open("", &o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ts := httptest.NewServer(New(db, &Options{Logger: slog.New(slog.DiscardHandler)}))
			defer ts.Close()
			body := entriesBody(1, "a")
			if tc.path == wire.PathURLsAdd {
				body = []byte("https://example.com/\n")
			}
			for i := range 2 {
				clock.Advance(2 * time.Minute)
				status, answer := post(t, ts, tc.path+"?"+tc.query, "", body)
				if status != tc.status {
					t.Fatalf("visit %d: status %d, want %d (%s)", i, status, tc.status, answer)
				}
				if i == 1 && status == http.StatusOK && answer != tc.answer {
					t.Errorf("second visit: %q, want %q", answer, tc.answer)
				}
			}
		})
	}
}

// TestRevisitParameterRepeat: a keyed visit repeated under the other name
// of the revisit parameter is the same request: it gets the first answer,
// not 422 (a client of the old name killed, finished by one of the new).
func TestRevisitParameterRepeat(t *testing.T) {
	_, ts, _ := newTestServer(t, nil)
	body := entriesBody(3, "r")
	status, first := post(t, ts, wire.PathVisit+"?after=1h", "k", body)
	if status != http.StatusOK {
		t.Fatalf("first: %d %q", status, first)
	}
	status, again := post(t, ts, wire.PathVisit+"?revisit_after=1h", "k", body)
	if status != http.StatusOK || again != first {
		t.Fatalf("repeat under revisit_after: %d %q, want the first answer %q", status, again, first)
	}
	if status, _ := post(t, ts, wire.PathVisit+"?revisit_after=2h", "k", body); status != http.StatusUnprocessableEntity {
		t.Fatalf("repeat with another duration: %d, want 422", status)
	}
}

// TestRevisitRepeatKeptBeforeAlias: an answer a server kept before the
// revisit alias (b17882b: the digest of /v1/urls/add?revisit_after=1h as
// sent) answers its repeat after an upgrade, where it was refused 422
// (key_reused); another duration is still another request.
func TestRevisitRepeatKeptBeforeAlias(t *testing.T) {
	_, ts, db := newTestServer(t, nil)
	body := []byte("https://kept.example/\n")
	query := wire.ParamRevisitAfter + "=1h"
	digest := wire.RequestDigestAsSent("POST", wire.PathURLsAdd, query, body)
	a := answer{status: 200, ctype: wire.ContentTypeText, body: []byte("new\n"), fresh: true}
	rec := &index.Record{Key: "kept", TTL: time.Hour, Answer: func([]bool) []byte { return a.appendRecord(nil, &digest) }}
	if err := db.PutRecord(rec); err != nil {
		t.Fatal(err)
	}
	if status, got := post(t, ts, wire.PathURLsAdd+"?"+query, "kept", body); status != http.StatusOK || got != "new\n" {
		t.Fatalf("repeat: %d %q, want the kept answer %q", status, got, "new\n")
	}
	if status, _ := post(t, ts, wire.PathURLsAdd+"?"+wire.ParamRevisitAfter+"=2h", "kept", body); status != http.StatusUnprocessableEntity {
		t.Fatalf("repeat with another duration: %d, want 422", status)
	}
}
