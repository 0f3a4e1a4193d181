package remote

import (
	"context"
	"net/url"
	"time"

	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// VisitBatch implements store.Backend: the server's clock decides which
// entries are due; durable on return.
func (db *DB) VisitBatch(ctx context.Context, es []store.Entry, revisitAfter time.Duration) ([]bool, error) {
	return db.answered(ctx, db.visitPath(revisitAfter), es, "")
}

// visitPath is the path of a VisitBatch: revisit_after, or after, its
// old name, for a server that names no index (one before both; it reads
// only after).
func (db *DB) visitPath(revisitAfter time.Duration) string {
	name := wire.ParamRevisitAfter
	if db.identity == "" {
		name = wire.ParamRevisitAfterAlias
	}
	return wire.PathVisit + "?" + name + "=" + url.QueryEscape(revisitAfter.String())
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
	q := prefixQuery(prefix, bits)
	if bits == 0 {
		q += "&" + wire.ParamAll + "=true" // the caller asked for everything; the server wants it said
	}
	err = db.call(ctx, "POST", wire.PathDeletePrefix+"?"+q, nil, &c)
	return c.Full, c.Prefixes, err
}
