package main

import (
	"time"

	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
)

// writeFlags are the flags of the commands that write or delete the
// entries of their inputs one batch at a time: add, put and delete.
type writeFlags struct {
	db   dbFlags
	in   inputFlags
	json bool
}

// addFlags declares them, --hashes described by hashesUsage and --json by
// jsonUsage.
func (o *writeFlags) addFlags(fs *flagSet, hashesUsage, jsonUsage string) {
	o.db.addFlags(fs)
	o.db.addIdentity(fs)
	o.in.addHashes(fs, hashesUsage)
	fs.BoolVar(&o.json, "json", false, jsonUsage)
	o.in.addFlags(fs)
}

// writeEach resolves the inputs a batch at a time (a hex input is a full
// entry or a prefix entry), hands the batch's entries to write, makes the
// batch durable and only then answers its inputs in order: a failed one
// on stderr (and as a JSON object), each written one through answer with
// what write said of it (add: new; delete: was stored; put says nothing:
// false).
func writeEach(e *env, ix *query.Index, w *writeFlags, args []string, a *answers,
	write func(entries []store.Entry) ([]bool, error), answer func(r input, en *store.Entry, yes bool)) error {
	return streamBatches(e, &w.in, args, storeBatch, func(batch []input) error {
		rs := resolve(ix, batch, w.in.keysKind())
		entries := make([]store.Entry, 0, len(rs))
		for _, r := range rs {
			if r.err == nil {
				entries = append(entries, r.entry)
			}
		}
		said, err := write(entries)
		if err != nil {
			return err
		}
		if err := syncWrites(e.ctx, ix.Store()); err != nil {
			return err
		}
		j := 0
		for _, r := range rs {
			if r.err != nil {
				a.fail(r.r, r.err)
				continue
			}
			answer(r.r, &entries[j], j < len(said) && said[j])
			j++
		}
		return a.out.Flush()
	})
}

// storeFlags are the flags of add and put, which store their inputs'
// entries with the value the flags give.
type storeFlags struct {
	writeFlags
	storeURL bool
	vf       valueFlags
}

// addFlags declares them, --json described by jsonUsage.
func (o *storeFlags) addFlags(fs *flagSet, jsonUsage string) {
	o.writeFlags.addFlags(fs, "inputs are hex: 64 digits a full entry, an even 8..62 digits a prefix entry", jsonUsage)
	o.db.addCompression(fs)
	o.db.addKeyTable(fs)
	fs.BoolVar(&o.storeURL, "store-url", false, "keep each URL's text in its entry")
	o.vf.addFlags(fs)
}

// storeEach opens the index and stores the inputs (writeEach), each batch's
// entries given the flags' value and then handed to write (add: AddBatch,
// put: PutBatch).
func (o *storeFlags) storeEach(e *env, args []string, a *answers,
	write func(st store.Backend, entries []store.Entry) ([]bool, error), answer func(r input, en *store.Entry, isNew bool)) error {
	ix, err := o.db.open(e, access{write: true, storeURL: o.storeURL})
	if err != nil {
		return err
	}
	defer ix.Close()
	err = writeEach(e, ix, &o.writeFlags, args, a, func(entries []store.Entry) ([]bool, error) {
		o.vf.apply(entries, time.Now())
		return write(ix.Store(), entries)
	}, answer)
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	return err
}
