package index

import (
	"context"

	"github.com/urlhash/urlhash/store"
)

// DeleteBatch removes every stored entry among entries (full or prefix) and
// returns how many it removed; an entry that is not stored is skipped. A
// bad prefix length is an error (store.ErrPrefixLength) before anything is
// removed. Each deletion is atomic; the batch as a whole is not (a crash may
// keep a part of it), as with PutBatch. Threat-list updates remove
// thousands of entries at once with it, in one Badger write batch.
func (db *DB) DeleteBatch(ctx context.Context, entries []store.Entry) (n int, err error) {
	for i := range entries {
		if err := entries[i].Check(); err != nil {
			return 0, err
		}
	}
	if len(entries) == 0 {
		return 0, nil
	}
	return db.remove(ctx, entries)
}
