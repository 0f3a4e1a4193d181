package remote

import (
	"context"
	"time"

	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// AddBatchOnce is AddBatch sent with the Idempotency-Key key: the server
// keeps its answer with the write (24 hours at least), so that the batch
// resent with the same key, after either side crashed, gets the first
// answer, also while the first is still being applied. A key names one
// batch: sending another batch with it is an error wrapping
// wire.ErrKeyReused. wire.NewKey makes keys.
func (db *DB) AddBatchOnce(ctx context.Context, es []store.Entry, key string) ([]bool, error) {
	return db.answered(ctx, wire.PathAdd, es, key)
}

// VisitBatchOnce is VisitBatch sent with the Idempotency-Key key, as
// AddBatchOnce.
func (db *DB) VisitBatchOnce(ctx context.Context, es []store.Entry, revisitAfter time.Duration, key string) ([]bool, error) {
	return db.answered(ctx, db.visitPath(revisitAfter), es, key)
}

// answered posts es to path (with key, when not empty) and reads one
// answer byte per entry.
func (db *DB) answered(ctx context.Context, path string, es []store.Entry, key string) ([]bool, error) {
	if db.o.ReadOnly {
		return nil, store.ErrReadOnly
	}
	if key != "" {
		// Check the header value sent, as the server will read it (the
		// key itself is no header value: a key `"` is taken, quoted).
		if _, err := wire.ParseKey(wire.FormatKey(key)); err != nil {
			return nil, err
		}
	}
	b, err := wire.AppendEntries(nil, es)
	if err != nil {
		return nil, err
	}
	var out []byte
	if err := db.callKey(ctx, "POST", path, b, key, &out); err != nil {
		return nil, err
	}
	return db.bools(out, len(es))
}
