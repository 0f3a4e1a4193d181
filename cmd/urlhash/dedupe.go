package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
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
func recoverJournal(ix *query.Index, jn *journal, a *answers, kind query.Input, sep byte) error {
	p, err := jn.pending()
	if err != nil || p == nil {
		return err
	}
	var es []store.Entry
	if p.v1 {
		// An older run's batch: its inputs, hashed again.
		rs, err := ix.HasInputs(p.inputs, kind)
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
	} else if es, err = server.DecodeEntries(p.body); err != nil || len(es) != len(p.inputs) {
		return fmt.Errorf("journal %s: %d entries for %d inputs: %v", jn.path, len(es), len(p.inputs), err)
	}
	isNew := p.isNew
	if isNew == nil {
		if rdb, ok := ix.Store().(*remote.DB); ok && p.key != "" {
			if p.revisit < 0 {
				isNew, err = rdb.AddBatchOnce(es, p.key)
			} else {
				isNew, err = rdb.VisitBatchOnce(es, p.revisit, p.key)
			}
		} else {
			hs := make([]hashkey.Hash, len(es))
			for i := range es {
				hs[i] = es[i].Hash
			}
			isNew, err = ix.Store().HasBatch(hs)
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
		if err := recoverJournal(ix, oj, a, o.in.kind(), sep); err != nil {
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
	err = streamBatches(e, &o.in, args, dedupeBatch, func(batch []record) error {
		rs := resolve(ix, batch, o.in.kind())
		entries := make([]store.Entry, 0, len(rs))
		var inputs []string
		for _, r := range rs {
			if r.err == nil {
				entries = append(entries, r.entry)
				inputs = append(inputs, r.r.text)
			}
		}
		o.vf.apply(entries, time.Now())
		var key string
		if jn != nil {
			key = wire.NewKey()
			var body []byte
			for i := range entries {
				body = server.AppendEntry(body, &entries[i])
			}
			if err := jn.begin(key, revisitArg, body, inputs); err != nil {
				return err
			}
		}
		var added []bool
		var err error
		switch {
		case rdb != nil && o.revisit > 0:
			// A server's answer is durable: no /v1/sync after it.
			added, err = rdb.VisitBatchOnce(entries, o.revisit, key)
		case rdb != nil:
			added, err = rdb.AddBatchOnce(entries, key)
		case o.revisit > 0:
			added, err = ix.Store().VisitBatch(entries, o.revisit)
		default:
			added, err = ix.Store().AddBatch(entries)
		}
		if err != nil {
			return err
		}
		// Acknowledge nothing before it is durable.
		if err := syncWrites(ix.Store()); err != nil {
			return err
		}
		if jn != nil {
			if err := jn.commit(added); err != nil {
				return err
			}
		}
		j := 0 // the entry of r, which has one
		for _, r := range rs {
			if r.err != nil {
				a.fail(r.r, r.err)
				continue
			}
			isNew := added[j]
			j++
			switch {
			case a.json != nil:
				a.json.Encode(memberOutput{Input: r.r.text, Hash: hexKey(&r.entry), New: &isNew})
			case isNew:
				a.out.WriteString(r.r.text)
				a.out.WriteByte(sep)
			}
		}
		if err := a.out.Flush(); err != nil || jn == nil {
			return err
		}
		return jn.done()
	})
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	return a.status(o.in.status(err))
}
