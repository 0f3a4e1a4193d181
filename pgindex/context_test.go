package pgindex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/urlhash/urlhash/hashkey"
)

// TestCancelBlocked: a statement blocked behind another transaction's lock
// ends when its context is cancelled, promptly, with context.Canceled.
func TestCancelBlocked(t *testing.T) {
	db := openTestDB(t, nil)
	bg := context.Background()
	conn, err := pgx.Connect(bg, testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(bg)
	tx, err := conn.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(bg)
	if _, err := tx.Exec(bg, `LOCK TABLE `+db.full+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err = db.HasBatch(ctx, []hashkey.Hash{hashkey.Sum([]byte("x"))})
	if took := time.Since(start); !errors.Is(err, context.Canceled) || took > 5*time.Second {
		t.Fatalf("HasBatch blocked by a lock, cancelled after 200ms: %v after %v; want context.Canceled at once", err, took)
	}
}

// TestRetryEndsWithContext: a context cancelled while retrying a
// serialization failure ends the retries with the context's error, not
// the database's (no database needed: retry only runs fn).
func TestRetryEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	attempts := 0
	err := (&DB{}).retry(ctx, func() error {
		attempts++
		cancel()
		return &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
	})
	if !errors.Is(err, context.Canceled) || attempts != 1 {
		t.Fatalf("after %d attempts: %v; want context.Canceled after 1", attempts, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		t.Errorf("%v: still a database error (a caller would retry it)", err)
	}
}
