package index

import "github.com/urlhash/urlhash/index/internal/filter"

// snapshotUsed reports whether Open used the persisted filter snapshot,
// once its background load (if any) is over.
func (db *DB) snapshotUsed() bool {
	db.waitFilter()
	return db.loadedSnapshot.Load()
}

// filterNow returns the filter, once it is in.
func (db *DB) filterNow() *filter.Filter {
	db.waitFilter()
	db.fmu.RLock()
	defer db.fmu.RUnlock()
	return db.f
}
