package pgindex

import (
	"context"
	"math/bits"
	"testing"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/pgtest"
)

// testURL returns the test server's connection string (see pgtest.URL).
func testURL(t testing.TB) string { return pgtest.URL(t) }

// newSchema returns a schema name unique to this test run and drops the
// schema when the test ends.
func newSchema(t testing.TB) string { return pgtest.Schema(t, pgtest.URL(t)) }

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
