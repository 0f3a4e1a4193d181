package dedupe

import (
	"context"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// finish finishes the batch a killed client left in j, if any: it hands
// the batch's answer to the Handler (Recovered), then clears the journal.
// A batch whose answer was committed is answered from the journal. Else a
// server is sent the batch again with its Idempotency-Key and answers what
// it answered the first time; another index reports every input of the
// batch that is stored. A batch written to another index than the client's
// is an *IndexError: it is left in j.
func (c *Client) finish(ctx context.Context, j *journal) error {
	p, err := j.pending()
	if err != nil || p == nil {
		return err
	}
	// A journal of an index without identity (or of an older
	// urlhash) cannot be checked: it is finished as before identities.
	if p.index != "" && p.index != c.identity {
		return &IndexError{Journal: j.path, Inputs: len(p.inputs), Want: p.index, Have: c.identity, Path: c.st.Path()}
	}
	inputs := make([]Input, len(p.inputs))
	if p.version == 1 {
		// An older urlhash's batch: its inputs, resolved again.
		rs, err := c.ix.HasInputs(ctx, p.inputs, c.o.Inputs)
		if err != nil {
			return fmt.Errorf("dedupe: journal %s: finishing the batch of a killed client: %w", j.path, err)
		}
		stored := make([]bool, len(rs))
		for i, r := range rs {
			inputs[i] = Input{Text: p.inputs[i], Entry: store.FullEntry(r.Hash, store.Value{}), Err: r.Err}
			stored[i] = r.Err == nil && r.OK
		}
		if p.isNew == nil {
			p.isNew = stored
		}
	} else {
		es, err := wire.DecodeEntries(p.body)
		if err != nil || len(es) != len(p.inputs) {
			return fmt.Errorf("dedupe: journal %s: %d entries for %d inputs: %v", j.path, len(es), len(p.inputs), err)
		}
		for i := range es {
			inputs[i] = Input{Text: p.inputs[i], Entry: es[i]}
		}
	}
	isNew := p.isNew
	if isNew == nil {
		es := make([]store.Entry, len(inputs))
		for i := range inputs {
			es[i] = inputs[i].Entry
		}
		switch {
		case c.rdb != nil && p.key != "" && p.revisit < 0:
			isNew, err = c.rdb.AddBatchOnce(ctx, es, p.key)
		case c.rdb != nil && p.key != "":
			isNew, err = c.rdb.VisitBatchOnce(ctx, es, p.revisit, p.key)
		default:
			hs := make([]hashkey.Hash, len(es))
			for i := range es {
				hs[i] = es[i].Hash
			}
			isNew, err = c.st.HasBatch(ctx, hs)
		}
		if err != nil {
			return fmt.Errorf("dedupe: journal %s: finishing the batch of a killed client: %w", j.path, err)
		}
	}
	if err := c.h(&Batch{Inputs: inputs, New: isNew, Recovered: true}); err != nil {
		return err
	}
	return j.done()
}
