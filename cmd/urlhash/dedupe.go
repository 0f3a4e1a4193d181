package main

import (
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
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
leaves the journal, and the next run first prints those of its URLs that
are stored: every URL a run stored is printed at least once, exactly once
while nothing crashes (after a crash, URLs of the interrupted batch, at
most 32,768, may be printed again). The journal is DIR/urlhash.dedupe for
an index directory; give a postgres:// or http:// index one with
--journal FILE, one per concurrent dedupe.

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
			o.db.addIdentity(fs, indexProfiles)
			o.db.addCompression(fs)
			o.in.addHashes(fs, "inputs are hashes: 64 hex digits or w0-w1-w2-w3")
			fs.BoolVar(&o.storeURL, "store-url", false, "keep each URL's text in its entry")
			fs.DurationVar(&o.revisit, "revisit-after", 0, "print a URL again once it was last printed this long ago, `DURATION`, e.g. 24h (default 0: never again)")
			o.vf.addFlags(fs)
			fs.BoolVar(&o.json, "json", false, "one object per input: input, hash, new (and recovered: true for a journal's URL printed again)")
			fs.StringVar(&o.journal, "journal", "", "the crash journal `FILE` (default DIR/urlhash.dedupe for an index directory; none otherwise)")
			o.in.addFlags(fs)
			fs.check(func() error {
				if o.revisit < 0 {
					return usagef("--revisit-after must be 0 (never) or more, have %v", o.revisit)
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
	revisit        time.Duration
	journal        string
}

// recoverJournal prints the inputs a killed dedupe run journaled and
// stored, then clears the journal.
func recoverJournal(ix *query.Index, jn *journal, a *answers, kind query.Input, sep byte) error {
	if jn == nil {
		return nil
	}
	pending, isNew, err := jn.pending()
	if err != nil || len(pending) == 0 {
		return err
	}
	// Their hashes, and which are stored: when which were new is unknown,
	// every stored one is printed.
	rs, err := ix.HasInputs(pending, kind)
	if err != nil {
		return err
	}
	recovered := true
	for i, r := range rs {
		printed := r.OK
		if isNew != nil {
			printed = isNew[i]
		}
		switch {
		case r.Err != nil || !printed:
		case a.json != nil:
			isNew := true
			a.json.Encode(memberOutput{Input: pending[i], Hash: hex.EncodeToString(r.Hash[:]), New: &isNew, Recovered: &recovered})
		default:
			a.out.WriteString(pending[i])
			a.out.WriteByte(sep)
		}
	}
	if err := a.out.Flush(); err != nil {
		return err
	}
	return jn.done()
}

func (o *dedupeOptions) run(e *env, args []string) error {
	ix, err := o.db.open(e, access{write: true, storeURL: o.storeURL})
	if err != nil {
		return err
	}
	defer ix.Close()
	if o.journal == "" && !backend.IsPostgres(o.db.dir) && !remote.IsLocation(o.db.dir) {
		o.journal = filepath.Join(o.db.dir, "urlhash.dedupe")
	}
	var jn *journal
	if o.journal != "" {
		if jn, err = openJournal(o.journal); err != nil {
			return err
		}
		defer jn.close()
	}
	a := newAnswers(e, o.json)
	sep := byte('\n')
	if o.in.nul {
		sep = 0
	}
	if err := recoverJournal(ix, jn, a, o.in.kind(), sep); err != nil {
		return err
	}
	err = streamBatches(e, &o.in, args, dedupeBatch, func(batch []record) error {
		if jn != nil {
			if err := jn.begin(batch); err != nil {
				return err
			}
		}
		rs := resolve(ix, batch, o.in.kind())
		entries := make([]store.Entry, 0, len(rs))
		for _, r := range rs {
			if r.err == nil {
				entries = append(entries, r.entry)
			}
		}
		o.vf.apply(entries, time.Now())
		var added []bool
		var err error
		if o.revisit > 0 {
			added, err = ix.Store().VisitBatch(entries, o.revisit)
		} else {
			added, err = ix.Store().AddBatch(entries)
		}
		if err != nil {
			return err
		}
		// Acknowledge nothing before it is durable.
		if err := ix.Sync(); err != nil {
			return err
		}
		batchNew := make([]bool, len(rs))
		j := 0
		for i, r := range rs {
			if r.err == nil {
				batchNew[i] = added[j]
				j++
			}
		}
		if jn != nil {
			if err := jn.commit(batchNew); err != nil {
				return err
			}
		}
		for i, r := range rs {
			if r.err != nil {
				a.fail(r.r, r.err)
				continue
			}
			isNew := batchNew[i]
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
