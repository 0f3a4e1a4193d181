// Package pgtest is the PostgreSQL set-up of the tests that need a
// server (pgindex, backend): the server's connection string and a schema
// of a test's own, dropped when the test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// URL returns the test server's connection string from
// URLHASH_TEST_POSTGRES (see .ci/postgres.sh). Without it the test is
// skipped, except under CI=true, where it fails: CI must not skip silently.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("URLHASH_TEST_POSTGRES")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("URLHASH_TEST_POSTGRES is unset under CI=true: start a server with .ci/postgres.sh")
		}
		t.Skip("URLHASH_TEST_POSTGRES unset: no PostgreSQL server to test against (see .ci/postgres.sh)")
	}
	return u
}

// Schema returns a schema name unique to this test run, made from the
// test's name, and drops the schema on url's server when the test ends.
func Schema(t testing.TB, url string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r
		case 'A' <= r && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, t.Name())
	name = "t_" + name[:min(len(name), 40)] + "_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{name}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return name
}
