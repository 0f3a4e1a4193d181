package remote

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/urlhash/urlhash/store"
)

// VisitBatch implements store.Backend: the server's clock decides which
// entries are due; durable on return.
func (db *DB) VisitBatch(ctx context.Context, es []store.Entry, revisitAfter time.Duration) ([]bool, error) {
	return db.answered(ctx, visitPath(revisitAfter), es, "")
}

// visitPath is the path of a VisitBatch.
func visitPath(revisitAfter time.Duration) string {
	return "/v1/visit?after=" + url.QueryEscape(revisitAfter.String())
}

// DeletePrefix implements store.Backend; durable on return.
func (db *DB) DeletePrefix(ctx context.Context, prefix []byte, bits int) (full, prefixes int64, err error) {
	if db.o.ReadOnly {
		return 0, 0, store.ErrReadOnly
	}
	if err := store.CheckPrefix(prefix, bits); err != nil {
		return 0, 0, err
	}
	var c struct{ Full, Prefixes int64 }
	path := fmt.Sprintf("/v1/delete-prefix?prefix=%x&bits=%d", prefix, bits)
	if bits == 0 {
		path += "&all=true" // the caller asked for everything; the server wants it said
	}
	err = db.call(ctx, "POST", path, nil, &c)
	return c.Full, c.Prefixes, err
}
