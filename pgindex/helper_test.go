package pgindex

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math/bits"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/urlhash/urlhash/index"
)

// testURL returns the test server's connection string from
// URLHASH_TEST_POSTGRES (see .ci/postgres.sh). Without it the test is
// skipped, except under CI=true, where it fails: CI must not skip silently.
func testURL(t testing.TB) string {
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

// newSchema returns a schema name unique to this test run and drops the
// schema when the test ends.
func newSchema(t testing.TB) string {
	t.Helper()
	u := testURL(t)
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
		conn, err := pgx.Connect(ctx, u)
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

// openTestDB opens an index in a new schema that is dropped when the test
// ends.
func openTestDB(t testing.TB, opts *Options) *DB {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = newSchema(t)
	}
	return openSchema(t, &o)
}

// openSchema opens opts.Schema (which the caller cleans up) and closes the
// DB when the test ends.
func openSchema(t testing.TB, opts *Options) *DB {
	t.Helper()
	db, err := Open(context.Background(), testURL(t), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openBadger opens a Badger index under t.TempDir.
func openBadger(t testing.TB) *index.DB {
	t.Helper()
	db, err := index.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatalf("index.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// hasBitPrefix reports whether the leading bits of b equal those of p.
func hasBitPrefix(b, p []byte, n int) bool {
	if len(b)*8 < n {
		return false
	}
	for i := 0; n > 0; i++ {
		m := min(n, 8)
		x := (b[i] ^ p[i]) >> (8 - m)
		if bits.Len8(x) != 0 {
			return false
		}
		n -= m
	}
	return true
}
