package frontier

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// A write that stores records (a put) also stores an intent: a meta entry
// listing the ids of the URLs whose records it writes, in the same index
// write as the records, so that the intent is stored wherever the records
// are and survives a crash with them. One fsync then makes the whole put
// durable, and the intent is deleted once it is. A record may survive a
// power loss that takes its URL's due or done key (they may live in
// another store of the index, the key table, with a log of its own):
// Open reads the intents left and repairs those URLs (repair), so that
// no URL is known (a put answers present) without its place in a queue.
// A due key without its record needs no repair: GetURLs deletes it.

// intent is an intent entry read at Open: its key and the URLs it names.
type intent struct {
	key hashkey.Hash
	ids []uid
}

// intentLocked returns the intent entry of the URLs us (their records
// are written with it).
func (f *Frontier) intentLocked(us []uid) store.Entry {
	f.intentSeq++
	d := make([]byte, 0, 2+binary.MaxVarintLen64+len(us)*len(uid{}))
	d = append(d, tagIntent, recordVersion)
	d = binary.AppendUvarint(d, uint64(len(us)))
	for _, u := range us {
		d = append(d, u[:]...)
	}
	return store.FullEntry(metaKey(tagIntent, "", fmt.Sprint(f.intentSeq)), store.Value{Text: []byte("intent"), Data: d})
}

// parseIntent decodes an intent entry's data.
func parseIntent(d []byte) ([]uid, error) {
	r := reader{b: d}
	if r.byte() != tagIntent || r.byte() != recordVersion {
		r.fail()
	}
	n := r.uvarint()
	if r.err != nil || n*uint64(len(uid{})) != uint64(len(r.b)) {
		return nil, fmt.Errorf("%w: frontier: an intent entry of %d bytes", store.ErrCorrupt, len(d))
	}
	us := make([]uid, n)
	for i := range us {
		copy(us[i][:], r.b[i*len(uid{}):])
	}
	return us, nil
}

// settle deletes the intent of a write that is durable. A deletion lost
// in a crash costs a repair that finds nothing to do.
func (f *Frontier) settle(ctx context.Context, e store.Entry) error {
	_, err := f.db.DeleteBatch(ctx, []store.Entry{e})
	return err
}

// repair makes the URLs that the intents left by a crash name agree with
// their records: a record whose URL has neither a done key nor the due key
// its record names gets that key back (a done key when the record says
// completed), and the queue it names exists. It then makes that durable
// and deletes the intents. It returns how many URLs it repaired.
func (f *Frontier) repair(ctx context.Context, intents []intent) (int, error) {
	if len(intents) == 0 {
		return 0, nil
	}
	var fixes, settled []store.Entry
	seen := map[uid]bool{}
	for _, in := range intents {
		settled = append(settled, store.FullEntry(in.key, store.Value{}))
		for _, u := range in.ids {
			if seen[u] {
				continue
			}
			seen[u] = true
			_, r, found, err := f.getRecord(ctx, u)
			if err != nil {
				return 0, err
			}
			if !found {
				continue // never written: the put was not acknowledged
			}
			q := f.queueLocked(r.crawl, r.key)
			done, err := f.db.Has(ctx, doneKey(q.done, u))
			if err != nil {
				return 0, err
			}
			var fix hashkey.Hash
			switch {
			case done:
				continue
			case r.state == stateCompleted:
				fix = doneKey(q.done, u)
			default:
				fix = dueKey(q.id, r.due, u)
				if ok, err := f.db.Has(ctx, fix); err != nil || ok {
					if err != nil {
						return 0, err
					}
					continue
				}
			}
			if err := f.persistLocked(ctx, q); err != nil {
				return 0, err
			}
			q.counted = false // the recount counts what it holds now
			fixes = append(fixes, store.FullEntry(fix, store.Value{}))
		}
	}
	if len(fixes) > 0 {
		if err := f.db.PutBatch(ctx, fixes); err != nil {
			return 0, err
		}
	}
	if err := f.db.Sync(ctx); err != nil {
		return 0, err
	}
	_, err := f.db.DeleteBatch(ctx, settled)
	return len(fixes), err
}
