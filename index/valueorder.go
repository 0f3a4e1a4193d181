package index

import (
	"errors"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// Badger keeps a value shorter than its value threshold in the tree (the
// memtable, its log, then a table) and a longer one in the value log, the
// entry pointing at it. Without SyncWrites it syncs the value log only in
// DB.Sync, and then only its newest file: a memtable flush writes and
// syncs a table without syncing the value log first. A power loss could
// then keep a table whose entry points at value-log bytes the disk never
// got: an entry that cannot be read, and, when it replaced an
// acknowledged value (a compaction dropping the older version), that value
// lost. LazyFS showed such an entry: a frontier index would not open
// after a power loss (likely one that a crash during its creation had
// left without a key table, every entry in Badger: see readMeta).
//
// The index keeps values in the tree up to Badger's largest threshold
// (see Options.badgerOptions), and orders the rare write of a longer one:
// it runs alone (valueOrder held exclusively, every other Badger write
// holds it shared), one transaction at a time, and the value logs are
// synced after each commit, before any other write can fill the memtable
// that holds the entry and so have it flushed.

// valueOrder is the ordering of Badger writes against value-log writes.
type valueOrder struct {
	mu sync.RWMutex
	// threshold is Badger's value threshold on disk: a value this long
	// goes to the value log. 0 in memory (no value log).
	threshold int64
}

// large reports whether a value of n bytes goes to the value log.
func (o *valueOrder) large(n int) bool {
	return o.threshold > 0 && int64(n) >= o.threshold
}

// update is Badger's Update for a write of values that stay in the tree.
func (st *stores) update(fn func(txn *badger.Txn) error) error {
	st.order.mu.RLock()
	defer st.order.mu.RUnlock()
	return st.bdb.Update(fn)
}

// batch runs fn, which writes to Badger values that stay in the tree
// (deletions, a write batch of small values), ordered against value-log
// writes.
func (st *stores) batch(fn func() error) error {
	st.order.mu.RLock()
	defer st.order.mu.RUnlock()
	return fn()
}

// writeEntries writes es to Badger in their order: in one write batch, or,
// when a value goes to the value log, in ordered transactions (see
// writeOrdered).
func (st *stores) writeEntries(es []*badger.Entry) error {
	for _, e := range es {
		if st.order.large(len(e.Value)) {
			return st.writeOrdered(es)
		}
	}
	return st.batch(func() error {
		if len(es) == 1 {
			return translate(st.bdb.Update(func(txn *badger.Txn) error { return txn.SetEntry(es[0]) }))
		}
		wb := st.bdb.NewWriteBatch()
		defer wb.Cancel()
		for _, e := range es {
			if err := wb.SetEntry(e); err != nil {
				return translate(err)
			}
		}
		return translate(wb.Flush())
	})
}

// writeOrdered writes es in their order, alone, in transactions as large
// as Badger takes, each committed and its value-log bytes synced before
// the next Badger write starts.
func (st *stores) writeOrdered(es []*badger.Entry) error {
	st.order.mu.Lock()
	defer st.order.mu.Unlock()
	txn := st.bdb.NewTransaction(true)
	defer func() { txn.Discard() }()
	held := 0 // entries in txn
	for i := 0; i < len(es); {
		err := txn.SetEntry(es[i])
		if errors.Is(err, badger.ErrTxnTooBig) && held > 0 {
			if err := st.commitSynced(txn); err != nil {
				return err
			}
			txn, held = st.bdb.NewTransaction(true), 0
			continue
		}
		if err != nil {
			return translate(err)
		}
		i, held = i+1, held+1
	}
	return st.commitSynced(txn)
}

// commitSynced commits txn and syncs the value logs, even after a failed
// commit (part of it may be written).
func (st *stores) commitSynced(txn *badger.Txn) error {
	err := translate(txn.Commit())
	if serr := st.syncValueLogs(); err == nil {
		err = serr
	}
	return err
}

// syncValueLogs fsyncs every value-log file: Badger's Sync covers only
// the newest, and a write may have filled one and gone on in the next.
// In memory there is none.
func (st *stores) syncValueLogs() error {
	if st.dir == "" {
		return nil
	}
	return st.syncFiles("*.vlog")
}
