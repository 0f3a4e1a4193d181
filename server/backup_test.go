package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
)

// TestBackupStream: GET /v1/backup streams what Options.Backup writes and
// ends with the next since as a trailer; a failure before the first byte
// is an error answer, one after it an error trailer, and both are errors
// for the client, as is a server that makes no backups.
func TestBackupStream(t *testing.T) {
	tests := []struct {
		name    string
		backup  func(w io.Writer, since uint64) (uint64, error)
		want    string // the bytes the client gets
		until   uint64
		wantErr string // "" for success
	}{
		{"whole", func(w io.Writer, since uint64) (uint64, error) {
			io.WriteString(w, "backup after "+strings.Repeat("x", int(since)))
			return since + 10, nil
		}, "backup after xxx", 13, ""},
		{"fails at once", func(w io.Writer, since uint64) (uint64, error) {
			return 0, errors.New("damaged table")
		}, "", 0, "damaged table"},
		{"fails midway", func(w io.Writer, since uint64) (uint64, error) {
			io.WriteString(w, "part")
			return 0, errors.New("disk gone")
		}, "part", 0, "disk gone"},
		{"no backups", nil, "", 0, "makes no backups"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := index.Open("", &index.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ts := httptest.NewServer(server.New(db, &server.Options{Backup: tc.backup, Logger: slog.New(slog.DiscardHandler)}))
			defer ts.Close()
			c, err := remote.Open(t.Context(), ts.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var got bytes.Buffer
			until, err := c.Backup(context.Background(), &got, 3)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Backup err = %v, want one saying %q", err, tc.wantErr)
				}
			} else if err != nil || until != tc.until {
				t.Fatalf("Backup = %d, %v; want %d", until, err, tc.until)
			}
			if got.String() != tc.want {
				t.Errorf("client got %q, want %q", got.String(), tc.want)
			}
		})
	}
}
