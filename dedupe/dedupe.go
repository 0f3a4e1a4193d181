package dedupe

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// Options configures Open. A nil *Options means the defaults.
type Options struct {
	// Journal is the file of the crash journal, which one client holds
	// at a time (a second is refused with ErrJournalBusy): for an index
	// directory DIR, urlhash dedupe keeps DIR/urlhash.dedupe. Default "":
	// none, unless JournalDir.
	Journal string
	// JournalDir is a directory of journals that any number of clients of
	// one index share, one journal a batch in flight: Open takes free
	// ones and finishes the batches of killed clients it finds there. For
	// an index many processes write (a server, PostgreSQL). Default "":
	// none. At most one of Journal and JournalDir may be set; with
	// neither, nothing is journalled and a crash may lose answers.
	JournalDir string
	// RevisitAfter, when positive, makes an input new also when it was
	// last reported new RevisitAfter or longer ago, by the index's clock
	// (store.Backend.VisitBatch); the check and the update of the time are
	// one atomic step. Default 0: new means absent (add if absent).
	RevisitAfter time.Duration
	// Inputs says how Open reads the texts of a batch that urlhash
	// journalled before journals kept entries, to finish it: query.URLs
	// (the default), query.Hashes or query.Keys.
	Inputs query.Input

	// crash, when set, is called at each step of a batch (see stop):
	// true kills the client there, as a kill -9 would (tests).
	crash func(step string) bool
}

// An Input is one input of a batch: its text, which the journal keeps and
// the Handler gets back, and the entry it stands for, or the reason it
// has none.
type Input struct {
	Text  string
	Entry store.Entry // its key and the value to store when it is new
	Err   error       // when set, the input is not sent: the Handler gets it back in its place
}

// A Batch is the answer to a batch, handed to the Handler.
type Batch struct {
	// Inputs are the batch's inputs, as sent; for a recovered batch,
	// those the journal kept (valid ones).
	Inputs []Input
	// New[i] reports whether Inputs[i] was new (absent, or due for a
	// revisit) and is now stored: its first report. An input with Err,
	// or whose identity an earlier input of the client holds, is not new.
	New []bool
	// Recovered marks the batch of a killed client, finished by this one
	// (Open): its new inputs may have been reported before the kill.
	Recovered bool
}

// A Handler takes the answer to each batch, in the order the batches were
// sent, from one goroutine at a time. The batch's journal is cleared once
// it returns nil, so that the handler must have made what it needs of the
// answer durable by then (flushed an output, queued the new inputs). An
// error stops the client (Send and Close return it) and keeps the batch in
// its journal: the next client delivers its new inputs again.
type Handler func(b *Batch) error

// Client adds batches of inputs to an index and hands each batch's answer
// to its Handler once the batch is durable, exactly once while nothing
// crashes, at least once across crashes of the client and of a server
// (see the package documentation). Send is safe for concurrent use.
type Client struct {
	ix       *query.Index
	st       store.Backend
	rdb      *remote.DB // st, when it is a server's
	o        Options
	h        Handler
	identity string        // the index's (see identityOf)
	revisit  time.Duration // the write, as the journal keeps it: -1 add

	mu     sync.Mutex // serialises Send and Close
	slots  []*journal // a journal per batch in flight, used in turn; nil: none
	n      int        // batches sent
	p      *pipe
	closed bool

	killed   atomic.Bool // a test killed the client (crash)
	killOnce sync.Once
}

// Batch sizes that keep the pipeline busy, and how many batches are in
// flight to a server: measured against 4,096 x 6 and 32,768 x 3 on branch
// issue-23 (the server holds every batch in flight in memory), then
// against 16,384 x 3 and 8,192 x 2 or 3 on branch p23: with 4 clients, 2
// in flight kept the throughput of 3 with 40 MiB less server memory;
// 8,192 saved 30 MiB more but stalled in some runs (8 s for 6). On the
// final code (bare-key batches, pooled bodies, records packed) 8,192 took
// the server's peak from 48 to 41-43 MiB at 1.25-1.28x Redis's throughput
// (1.35x with 16,384), without a stall in its runs. One batch at a time
// (another index, or a journal file) costs a few fsyncs: 32,768.
const (
	inFlight    = 2
	remoteBatch = 1 << 13
	localBatch  = 1 << 15
)

// errKilled is what a client a test killed (Options.crash) returns.
var errKilled = errors.New("dedupe: killed (test)")

// errClosed is returned by Send after Close.
var errClosed = errors.New("dedupe: client closed")

// identified is a backend that keeps an identity (index.DB,
// pgindex.DB, remote.DB).
type identified interface{ Identity() string }

// Open returns a client that adds to ix and hands the answers to h. It
// first finishes the batches that killed clients left in its journals:
// their answers reach h, marked Recovered, before Open returns. A journal
// written against another index than ix is refused with an *IndexError
// (ErrOtherIndex), and left as it is. The client does not own ix: close
// the client first, then ix.
func Open(ctx context.Context, ix *query.Index, opts *Options, h Handler) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Journal != "" && o.JournalDir != "":
		return nil, fmt.Errorf("%w: Journal and JournalDir together", ErrInvalidOptions)
	case o.RevisitAfter < 0:
		return nil, fmt.Errorf("%w: RevisitAfter %v", ErrInvalidOptions, o.RevisitAfter)
	case h == nil:
		return nil, fmt.Errorf("%w: no Handler", ErrInvalidOptions)
	}
	c := &Client{ix: ix, st: ix.Store(), o: o, h: h, revisit: -1}
	c.rdb, _ = c.st.(*remote.DB)
	if id, ok := c.st.(identified); ok {
		c.identity = id.Identity()
	}
	if o.RevisitAfter > 0 {
		c.revisit = o.RevisitAfter
	}
	var mine *journal
	var orphans []*journal
	var err error
	switch {
	case o.Journal != "":
		mine, err = openJournal(o.Journal)
	case o.JournalDir != "":
		mine, orphans, err = claimJournal(o.JournalDir)
	}
	if err != nil {
		return nil, err
	}
	held := append(orphans, mine)
	releaseAll := func() {
		for _, j := range held {
			if j != nil {
				j.release()
			}
		}
	}
	for _, j := range held {
		if j == nil {
			continue
		}
		if err := c.finish(ctx, j); err != nil {
			releaseAll()
			return nil, err
		}
	}
	for _, j := range orphans {
		if err := j.release(); err != nil {
			releaseAll()
			return nil, err
		}
	}
	// A server answers a write once it is durable, so several batches can
	// be in flight (it stores one while the next is resolved and sent),
	// each with a journal of its own: with journals in a directory, or
	// none.
	c.slots = []*journal{mine}
	if c.rdb != nil && o.RevisitAfter == 0 && o.Journal == "" {
		if mine != nil {
			more, err := claimMore(filepath.Dir(mine.path), inFlight-1)
			if err != nil {
				mine.release()
				return nil, err
			}
			c.slots = append(c.slots, more...)
		} else {
			c.slots = make([]*journal, inFlight)
		}
	}
	c.p = newPipe(len(c.slots), c.deliver)
	return c, nil
}

// BatchSize returns the size of the batches Send is measured best with:
// 8,192 inputs with batches in flight to a server, else 32,768.
func (c *Client) BatchSize() int {
	if len(c.slots) > 1 {
		return remoteBatch
	}
	return localBatch
}

// Send adds a batch of inputs: it journals the batch, sends it, and
// returns once the batch is on its way (or answered, with one batch in
// flight); its answer reaches the Handler once it is durable, after the
// answers to the batches sent before it. The client owns inputs from
// then on: the Handler gets them back. An error of an earlier batch, or
// of the Handler, is returned here and the batch is not sent.
func (c *Client) Send(ctx context.Context, inputs []Input) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	b := &batch{inputs: inputs, jn: c.slots[c.n%len(c.slots)], done: make(chan struct{})}
	c.n++
	if err := c.p.admit(b); err != nil {
		return err
	}
	n := 0
	for i := range inputs {
		if inputs[i].Err == nil && !b.skip[i] {
			n++
		}
	}
	entries := make([]store.Entry, 0, n)
	texts := make([]string, 0, n)
	for i := range inputs {
		if inputs[i].Err == nil && !b.skip[i] {
			entries = append(entries, inputs[i].Entry)
			texts = append(texts, inputs[i].Text)
		}
	}
	if len(entries) == 0 {
		// Nothing to store: the answer is known, and nothing to journal.
		b.jn = nil
		close(b.done)
		return c.p.send(b)
	}
	var key string
	if b.jn != nil {
		key = wire.NewKey()
		body, err := wire.AppendEntries(nil, entries)
		if err == nil {
			err = b.jn.begin(c.identity, key, c.revisit, body, texts)
		}
		if err == nil {
			err = c.stop("begin")
		}
		if err != nil {
			b.err = err
			close(b.done)
			c.p.send(b)
			return err
		}
	}
	write := func() {
		b.added, b.err = c.write(ctx, entries, key)
		if b.err == nil {
			b.err = c.stop("write")
		}
	}
	if len(c.slots) == 1 {
		write()
		close(b.done)
	} else {
		go func() {
			defer close(b.done)
			write()
		}()
	}
	return c.p.send(b)
}

// Flush waits until the answers to every batch sent before it have
// reached the Handler, and returns the first error of a batch or of the
// Handler: for a caller that needs the answers before it goes on (the
// next round of a crawl). Batches sent meanwhile are not waited for.
func (c *Client) Flush() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	b := &batch{done: make(chan struct{}), flushed: make(chan struct{})}
	close(b.done)
	if err := c.p.admit(b); err != nil {
		c.mu.Unlock()
		return err
	}
	c.p.send(b)
	c.mu.Unlock()
	<-b.flushed
	return c.p.error()
}

// SendURLs is Send of URLs, each hashed with the index's profile; a URL
// that has no identity (the URL Standard rejects it) is handed back with
// its error.
func (c *Client) SendURLs(ctx context.Context, urls []string) error {
	inputs := make([]Input, len(urls))
	for i, r := range c.ix.Resolve(urls, query.URLs) {
		inputs[i] = Input{Text: urls[i], Entry: r.Entry, Err: r.Err}
	}
	return c.Send(ctx, inputs)
}

// write stores entries and returns which were new, once they are
// durable: a server's answer is (its writes are synced before it
// answers); another backend is synced.
func (c *Client) write(ctx context.Context, es []store.Entry, key string) ([]bool, error) {
	var added []bool
	var err error
	switch {
	case c.rdb != nil && c.revisit > 0:
		return c.rdb.VisitBatchOnce(ctx, es, c.revisit, key)
	case c.rdb != nil:
		return c.rdb.AddBatchOnce(ctx, es, key)
	case c.revisit > 0:
		added, err = c.st.VisitBatch(ctx, es, c.revisit)
	default:
		added, err = c.st.AddBatch(ctx, es)
	}
	if err != nil {
		return nil, err
	}
	// Acknowledge nothing before it is durable; an interrupt does not
	// cancel the sync: what was stored must become durable.
	return added, c.st.Sync(context.WithoutCancel(ctx))
}

// deliver writes the answer of b to its journal, hands it to the
// Handler, then clears the journal.
func (c *Client) deliver(b *batch) error {
	if b.jn != nil {
		if err := b.jn.commit(b.added); err != nil {
			return err
		}
		if err := c.stop("commit"); err != nil {
			return err
		}
	}
	// added covers the entries sent; an input skipped (an identity of an
	// earlier batch in flight) is not new.
	isNew := make([]bool, len(b.inputs))
	j := 0
	for i := range b.inputs {
		if b.inputs[i].Err != nil || b.skip[i] {
			continue
		}
		isNew[i] = b.added[j]
		j++
	}
	if err := c.h(&Batch{Inputs: b.inputs, New: isNew}); err != nil {
		return err
	}
	if b.jn == nil {
		return nil
	}
	if err := c.stop("deliver"); err != nil {
		return err
	}
	return b.jn.done()
}

// Close waits for the batches in flight and their answers, then gives up
// the client's journals: removed when they hold nothing, kept with the
// batch of a failed write or Handler for the next client. It returns the
// first error of a batch or of the Handler.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.p.close()
	if c.killed.Load() {
		return errKilled
	}
	for _, j := range c.slots {
		if j == nil {
			continue
		}
		if rerr := j.release(); err == nil {
			err = rerr
		}
	}
	return err
}

// stop returns errKilled once a test killed the client at a step of a
// batch (Options.crash): its journals are closed as they are, as a kill
// leaves them, and nothing more is written.
func (c *Client) stop(step string) error {
	if !c.killed.Load() && (c.o.crash == nil || !c.o.crash(step)) {
		return nil
	}
	c.killed.Store(true)
	c.killOnce.Do(func() {
		for _, j := range c.slots {
			if j != nil {
				j.f.Close()
			}
		}
	})
	return errKilled
}
