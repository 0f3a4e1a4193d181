package index

import (
	"bytes"
	"slices"

	"github.com/urlhash/urlhash/store"
)

// DeleteBatch removes every stored entry among entries (full or prefix) and
// returns how many it removed; an entry that is not stored is skipped. A
// bad prefix length is an error (store.ErrPrefixLength) before anything is
// removed. Each deletion is atomic; the batch as a whole is not (a crash may
// keep a part of it), as with PutBatch. Threat-list updates remove
// thousands of entries at once with it, in one Badger write batch.
func (db *DB) DeleteBatch(entries []store.Entry) (n int, err error) {
	for i := range entries {
		if err := entries[i].Check(); err != nil {
			return 0, err
		}
	}
	if len(entries) == 0 {
		return 0, nil
	}
	defer db.catch(&err)
	if err := db.beginWrite(); err != nil {
		return 0, err
	}
	defer db.mu.RUnlock()
	if err := db.roomFor(writeCost(entries)); err != nil {
		return 0, err
	}
	if err := db.prepareWrite(); err != nil {
		return 0, err
	}
	unlock := db.lockFor(entries)
	defer unlock()
	keys := make([][]byte, len(entries))
	idx := make([]int, len(entries))
	for i := range entries {
		keys[i] = dbKey(&entries[i])
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	idx = slices.CompactFunc(idx, func(a, b int) bool { return bytes.Equal(keys[a], keys[b]) })
	existed, oldExp, err := db.existSorted(entries, idx)
	if err != nil {
		return 0, err
	}
	wb := db.bdb.NewWriteBatch()
	defer wb.Cancel()
	var full, prefixes int64
	var t tally
	for j, i := range idx {
		if !existed[j] {
			continue
		}
		if err := wb.Delete(keys[i]); err != nil {
			return 0, translate(err)
		}
		if entries[i].IsPrefix() {
			prefixes++
		} else {
			full++
		}
		t.change(entries[i].IsPrefix(), true, oldExp[j], false, 0)
	}
	if err := wb.Flush(); err != nil {
		return 0, translate(err)
	}
	// The filter keeps the deleted keys' bits ("maybe"); a rebuild drops
	// them.
	db.apply(&t)
	return int(full + prefixes), nil
}
