package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

func dedupeCommand() *command {
	return &command{
		name:      "dedupe",
		usageLine: "dedupe --db DIR [flags] [URL|HASH...]",
		short:     "print only URLs not seen before, and remember them",
		long: `The crawler frontier filter: reads URLs (or hashes with --hashes) and
prints each one whose identity the index did not hold, then stores it, so
that each identity is printed once across runs. Repeats within the input
are printed only the first time. A URL is printed only after it is durably
stored. Answers arrive as input arrives, so a crawler can feed one URL
at a time and read the answer. With -0 the output is NUL-separated too.

Crashes: each batch is written to a journal before it is stored and
cleared after its new URLs are printed. A run that is killed in between
leaves the journal, and the next run first finishes its batch: a server
(http://) is sent it again with its Idempotency-Key and answers what it
answered the first time, even while it is still applying the first
request; another index prints those of its URLs that are stored. Every
URL a run stored is printed at least once, exactly once while nothing
crashes (after a crash, URLs of the interrupted batch, at most 32,768,
may be printed again). The journal is DIR/urlhash.dedupe for an index
directory, and for a postgres:// or http:// index one file per running
dedupe in a directory of the user's cache directory (urlhash/dedupe/ID/):
any number of runs need no flags, and each finishes the batches of killed
runs it finds there. --journal FILE chooses the file, --no-journal keeps
none.

Revisiting: with --revisit-after DURATION a URL is also printed again
once it was last printed DURATION or longer ago (to the second, by the
clock of the index's owner: this process, the PostgreSQL client or the
urlhash server), and each entry records when it was first and last
printed (get shows first_seen and last_seen). The check and the record
are one atomic step: among concurrent dedupe runs, on one index, one
PostgreSQL database or one server, each due URL is printed by one of
them. An entry stored without times (by add, or by dedupe without
--revisit-after) is due at once.
`,
		example: `$ printf 'https://a.example/\nhttps://A.example/\nhttps://b.example/\n' | urlhash dedupe --db seen
https://a.example/
https://b.example/
$ urlhash dedupe --db seen --revisit-after 24h --from frontier.txt
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(dedupeOptions)
			o.db.addFlags(fs)
			o.db.addIdentity(fs)
			o.db.addCompression(fs)
			o.db.addKeyTable(fs)
			o.in.addHashes(fs, "inputs are hashes: 64 hex digits or w0-w1-w2-w3")
			fs.BoolVar(&o.storeURL, "store-url", false, "keep each URL's text in its entry")
			fs.DurationVar(&o.revisit, "revisit-after", 0, "print a URL again once it was last printed this long ago, `DURATION`, e.g. 24h (default 0: never again)")
			o.vf.addFlags(fs)
			fs.BoolVar(&o.json, "json", false, "one object per input: input, hash, new (and recovered: true for a journal's URL printed again)")
			fs.StringVar(&o.journal, "journal", "", "the crash journal `FILE` (default DIR/urlhash.dedupe for an index directory; a free one under the user's cache directory otherwise)")
			fs.BoolVar(&o.noJournal, "no-journal", false, "keep no crash journal")
			o.in.addFlags(fs)
			fs.check(func() error {
				if o.revisit < 0 {
					return usagef("--revisit-after must be 0 (never) or more, have %v", o.revisit)
				}
				if o.noJournal && o.journal != "" {
					return usagef("--journal and --no-journal exclude each other")
				}
				return nil
			})
			return o.run
		},
	}
}

type dedupeOptions struct {
	db             dbFlags
	in             inputFlags
	vf             valueFlags
	storeURL, json bool
	noJournal      bool
	revisit        time.Duration
	journal        string
}

// recoverJournal finishes the batch a killed dedupe run left in jn: it
// prints the batch's new inputs, then clears the journal. A server is
// sent the batch again with its Idempotency-Key and answers what it
// answered the first time; another index prints every input of the batch
// that is stored (when the run did not record which were new).
func recoverJournal(ctx context.Context, ix *query.Index, jn *journal, a *answers, kind query.Input, sep byte) error {
	p, err := jn.pending()
	if err != nil || p == nil {
		return err
	}
	var es []store.Entry
	if p.v1 {
		// An older run's batch: its inputs, hashed again.
		rs, err := ix.HasInputs(ctx, p.inputs, kind)
		if err != nil {
			return fmt.Errorf("journal %s: finishing the batch of a killed run: %w", jn.path, err)
		}
		es = make([]store.Entry, len(rs))
		stored := make([]bool, len(rs))
		for i, r := range rs {
			es[i] = store.FullEntry(r.Hash, store.Value{})
			stored[i] = r.Err == nil && r.OK
		}
		if p.isNew == nil {
			p.isNew = stored
		}
	} else if es, err = wire.DecodeEntries(p.body); err != nil || len(es) != len(p.inputs) {
		return fmt.Errorf("journal %s: %d entries for %d inputs: %v", jn.path, len(es), len(p.inputs), err)
	}
	isNew := p.isNew
	if isNew == nil {
		if rdb, ok := ix.Store().(*remote.DB); ok && p.key != "" {
			if p.revisit < 0 {
				isNew, err = rdb.AddBatchOnce(ctx, es, p.key)
			} else {
				isNew, err = rdb.VisitBatchOnce(ctx, es, p.revisit, p.key)
			}
		} else {
			hs := make([]hashkey.Hash, len(es))
			for i := range es {
				hs[i] = es[i].Hash
			}
			isNew, err = ix.Store().HasBatch(ctx, hs)
		}
		if err != nil {
			return fmt.Errorf("journal %s: finishing the batch of a killed run: %w", jn.path, err)
		}
	}
	recovered := true
	for i, in := range p.inputs {
		switch {
		case !isNew[i]:
		case a.json != nil:
			isNew := true
			a.json.Encode(memberOutput{Input: in, Hash: hexKey(&es[i]), New: &isNew, Recovered: &recovered})
		default:
			a.out.WriteString(in)
			a.out.WriteByte(sep)
		}
	}
	if err := a.out.Flush(); err != nil {
		return err
	}
	return jn.done()
}

// openJournals opens dedupe's crash journal: --journal FILE when given,
// none with --no-journal, DIR/urlhash.dedupe for an index directory
// (which one process owns at a time), else a free journal of the index's
// directory of journals under the user's cache directory (journalDir),
// with the journals killed runs left there (orphans), to finish.
func (o *dedupeOptions) openJournals() (jn *journal, orphans []*journal, err error) {
	path := o.journal
	switch {
	case o.noJournal:
		return nil, nil, nil
	case path == "" && !backend.IsPostgres(o.db.dir) && !remote.IsLocation(o.db.dir):
		path = filepath.Join(o.db.dir, "urlhash.dedupe")
	}
	if path != "" {
		jn, err = openJournal(path)
		if errors.Is(err, errJournalBusy) {
			err = fmt.Errorf("%w (give each its own --journal FILE)", err)
		}
		return jn, nil, err
	}
	dir, err := journalDir(o.db.journalID())
	if err != nil {
		return nil, nil, err
	}
	return claimJournal(dir)
}

func (o *dedupeOptions) run(e *env, args []string) error {
	// As processOrdered: dedupe keeps only its batches in flight, and a
	// sparser GC took about a fifth of the client's CPU off a dedupe of
	// 300k present URLs through a server (user 0.27-0.34 s with GOGC 100,
	// 0.24-0.25 s with 400). GOGC, when set, wins.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	ix, err := o.db.open(e, access{write: true, storeURL: o.storeURL})
	if err != nil {
		return err
	}
	defer ix.Close()
	jn, orphans, err := o.openJournals()
	if err != nil {
		return err
	}
	if jn != nil {
		defer jn.close()
	}
	a := newAnswers(e, o.json)
	sep := byte('\n')
	if o.in.nul {
		sep = 0
	}
	for _, oj := range append(orphans, jn) {
		if oj == nil {
			continue
		}
		if err := recoverJournal(e.ctx, ix, oj, a, o.in.kind(), sep); err != nil {
			return err
		}
	}
	for _, oj := range orphans {
		if err := oj.drop(); err != nil {
			return fmt.Errorf("journal %s: %w", oj.path, err)
		}
	}
	rdb, _ := ix.Store().(*remote.DB)
	revisitArg := time.Duration(-1)
	if o.revisit > 0 {
		revisitArg = o.revisit
	}
	// A server answers a write once it is durable, so several batches can
	// be in flight (it stores one while the next is resolved and sent),
	// each with a journal of its own: with journals in a directory (the
	// default for a server), or none.
	slots := []*journal{jn}
	if rdb != nil && o.revisit == 0 && o.journal == "" {
		if jn != nil {
			more, err := claimMore(filepath.Dir(jn.path), dedupeInFlight-1)
			if err != nil {
				return err
			}
			slots = append(slots, more...)
		} else {
			slots = make([]*journal, dedupeInFlight)
		}
	}
	size := dedupeBatch
	if len(slots) > 1 {
		size = dedupeRemoteBatch
	}
	p := newDedupePipe(len(slots), func(b *dedupeBatchState) error { return o.finish(b, a, sep) })
	n := 0
	err = streamBatches(e, &o.in, args, size, func(batch []record) error {
		b := &dedupeBatchState{rs: resolve(ix, batch, o.in.kind()), jn: slots[n%len(slots)], done: make(chan struct{})}
		n++
		if err := p.admit(b); err != nil {
			return err
		}
		entries := make([]store.Entry, 0, len(b.rs))
		var inputs []string
		for i, r := range b.rs {
			if r.err == nil && !b.skip[i] {
				entries = append(entries, r.entry)
				inputs = append(inputs, r.r.text)
			}
		}
		o.vf.apply(entries, time.Now())
		var key string
		if b.jn != nil {
			key = wire.NewKey()
			var body []byte
			for i := range entries {
				body = wire.AppendEntry(body, &entries[i])
			}
			if err := b.jn.begin(key, revisitArg, body, inputs); err != nil {
				return err
			}
		}
		write := func() ([]bool, error) {
			var added []bool
			var err error
			switch {
			case rdb != nil && o.revisit > 0:
				// A server's answer is durable: no /v1/sync after it.
				added, err = rdb.VisitBatchOnce(e.ctx, entries, o.revisit, key)
			case rdb != nil:
				added, err = rdb.AddBatchOnce(e.ctx, entries, key)
			case o.revisit > 0:
				added, err = ix.Store().VisitBatch(e.ctx, entries, o.revisit)
			default:
				added, err = ix.Store().AddBatch(e.ctx, entries)
			}
			if err != nil {
				return nil, err
			}
			// Acknowledge nothing before it is durable.
			return added, syncWrites(e.ctx, ix.Store())
		}
		if len(slots) == 1 {
			b.added, b.err = write()
			close(b.done)
		} else {
			go func() {
				defer close(b.done)
				b.added, b.err = write()
			}()
		}
		return p.send(b)
	})
	if perr := p.close(); err == nil {
		err = perr
	}
	for _, j := range slots[1:] {
		if j == nil {
			continue
		}
		// Cleared unless a batch failed: then kept for the next run.
		if err == nil {
			j.drop()
		} else {
			j.close()
		}
	}
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	return a.status(o.in.status(err))
}

// dedupeInFlight is how many batches dedupe has in flight to a server, and
// dedupeRemoteBatch their size: measured against 4,096 x 6 and 32,768 x 3
// on branch issue-23 (the server holds every batch in flight in memory),
// then against 16,384 x 3 and 8,192 x 2 or 3 on branch p23: with 4
// clients, 2 in flight kept the throughput of 3 with 40 MiB less server
// memory; 8,192 saved 30 MiB more but stalled in some runs (8 s for 6).
// On the final code (bare-key batches, pooled bodies, records packed)
// 8,192 took the server's peak from 48 to 41-43 MiB at 1.25-1.28x
// Redis's throughput (1.35x with 16,384), without a stall in its runs.
const (
	dedupeInFlight    = 2
	dedupeRemoteBatch = 1 << 13
)

// A dedupeBatchState is a batch of dedupe on its way: resolved, sent,
// answered, printed.
type dedupeBatchState struct {
	rs   []resolved
	skip []bool   // skip[i]: rs[i]'s identity is in an earlier batch in flight
	jn   *journal // its journal, or nil
	// hashes are the identities it sends (held while it is in flight),
	// set their index, and seq its number in the pipe.
	hashes []hashkey.Hash
	set    keySet
	seq    uint64
	added  []bool // per entry sent: whether it was new
	err    error
	done   chan struct{} // closed once added and err are set
}

// A dedupePipe prints the batches in flight in the order they were read,
// each once it is answered, in a goroutine of its own, so that an
// interactive producer is answered without sending more. It admits a
// batch when fewer than depth are in flight.
type dedupePipe struct {
	slots  chan struct{}
	queue  chan *dedupeBatchState
	ended  chan struct{}
	finish func(*dedupeBatchState) error

	mu sync.Mutex
	// inflight are the batches admitted and not yet printed, in order.
	// The server may store a later batch before an earlier one: an
	// identity of an earlier batch in flight is not sent again (it is not
	// new, whatever the earlier batch's answer), so that the first input
	// of an identity is the one printed, as with one batch at a time.
	// Each batch's identities are looked up in its keySet: a map of all
	// of them (an insert, a lookup and a delete a key) was most of the
	// client's CPU in a dedupe of present keys.
	inflight []*dedupeBatchState
	admitted uint64 // the seq of the last batch admitted
	err      error  // the first error of finish
}

func newDedupePipe(depth int, finish func(*dedupeBatchState) error) *dedupePipe {
	p := &dedupePipe{slots: make(chan struct{}, depth), queue: make(chan *dedupeBatchState, depth),
		ended: make(chan struct{}), finish: finish}
	go p.print()
	return p
}

// admit waits for a free slot and marks the identities of b that an
// earlier batch in flight holds.
func (p *dedupePipe) admit(b *dedupeBatchState) error {
	p.slots <- struct{}{}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		<-p.slots
		return p.err
	}
	b.skip = make([]bool, len(b.rs))
	if cap(p.slots) == 1 {
		return nil
	}
	p.admitted++
	b.seq = p.admitted
	b.hashes = make([]hashkey.Hash, 0, len(b.rs))
	for i, r := range b.rs {
		if r.err != nil {
			continue
		}
		h := &r.entry.Hash
		for _, e := range p.inflight {
			if e.set.has(h) {
				b.skip[i] = true
				break
			}
		}
		if !b.skip[i] {
			// A repeat within b is sent twice: the backend answers it
			// new at most once.
			b.hashes = append(b.hashes, *h)
		}
	}
	b.set = newKeySet(b.hashes)
	p.inflight = append(p.inflight, b)
	return nil
}

// keySet is a set of identities: a flat open-addressing table of their
// positions, indexed by their leading bytes (an identity is a hash
// already), built once and dropped whole.
type keySet struct {
	slots []int32 // 1 + a position in keys; 0: empty
	keys  []hashkey.Hash
	mask  uint64
}

func newKeySet(keys []hashkey.Hash) keySet {
	n := 1
	for n < 2*len(keys) {
		n <<= 1
	}
	s := keySet{slots: make([]int32, n), keys: keys, mask: uint64(n - 1)}
	for i := range keys {
		j := binary.LittleEndian.Uint64(keys[i][:8]) & s.mask
		for s.slots[j] != 0 {
			j = (j + 1) & s.mask
		}
		s.slots[j] = int32(i + 1)
	}
	return s
}

// has reports whether h is in the set.
func (s *keySet) has(h *hashkey.Hash) bool {
	if len(s.keys) == 0 {
		return false
	}
	for j := binary.LittleEndian.Uint64(h[:8]) & s.mask; ; j = (j + 1) & s.mask {
		v := s.slots[j]
		if v == 0 {
			return false
		}
		if s.keys[v-1] == *h {
			return true
		}
	}
}

// send queues b, admitted, for printing.
func (p *dedupePipe) send(b *dedupeBatchState) error {
	p.queue <- b
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// print prints the batches in order. After an error it still waits for
// the batches in flight (they may be stored) and prints none.
func (p *dedupePipe) print() {
	defer close(p.ended)
	for b := range p.queue {
		<-b.done
		p.mu.Lock()
		if len(p.inflight) > 0 && p.inflight[0] == b {
			p.inflight[0] = nil
			p.inflight = p.inflight[1:]
		}
		failed := p.err != nil
		p.mu.Unlock()
		err := b.err
		if err == nil && !failed {
			err = p.finish(b)
		}
		p.mu.Lock()
		if err != nil && p.err == nil {
			p.err = err
		}
		p.mu.Unlock()
		<-p.slots
	}
}

// close waits for the batches in flight and returns the first error.
func (p *dedupePipe) close() error {
	close(p.queue)
	<-p.ended
	return p.err
}

// finish records and prints the answer of a batch, then clears its
// journal.
func (o *dedupeOptions) finish(b *dedupeBatchState, a *answers, sep byte) error {
	if b.jn != nil {
		if err := b.jn.commit(b.added); err != nil {
			return err
		}
	}
	// added covers the entries sent; an input skipped (an identity of an
	// earlier batch) is not new.
	j := 0
	for i, r := range b.rs {
		if r.err != nil {
			a.fail(r.r, r.err)
			continue
		}
		isNew := false
		if !b.skip[i] {
			isNew = b.added[j]
			j++
		}
		switch {
		case a.json != nil:
			a.json.Encode(memberOutput{Input: r.r.text, Hash: hexKey(&r.entry), New: &isNew})
		case isNew:
			a.out.WriteString(r.r.text)
			a.out.WriteByte(sep)
		}
	}
	if err := a.out.Flush(); err != nil || b.jn == nil {
		return err
	}
	return b.jn.done()
}
