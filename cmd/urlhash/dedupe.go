package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/dedupe"
	"github.com/urlhash/urlhash/remote"
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
runs it finds there; a finished run leaves no file. A journal names the
identity of the index its batch was written to, and is finished only
into that index: a run of another index (served at the same address
since) stops with an error naming both and the journal, and leaves it.
--journal FILE chooses the file, --no-journal keeps none.

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

// journalOptions returns where dedupe journals (dedupe.Options): --journal
// FILE when given, none with --no-journal, DIR/urlhash.dedupe for an index
// directory (which one process owns at a time), else a directory of
// journals for the index under the user's cache directory (journalDir),
// which any number of runs share.
func (o *dedupeOptions) journalOptions() (*dedupe.Options, error) {
	do := &dedupe.Options{RevisitAfter: o.revisit, Inputs: o.in.kind()}
	switch {
	case o.noJournal:
	case o.journal != "":
		do.Journal = o.journal
	case !backend.IsPostgres(o.db.dir) && !remote.IsLocation(o.db.dir):
		do.Journal = filepath.Join(o.db.dir, "urlhash.dedupe")
	default:
		dir, err := journalDir(o.db.journalID())
		if err != nil {
			return nil, err
		}
		do.JournalDir = dir
	}
	return do, nil
}

// journalDir is the default directory of the journals of dedupe runs on
// a shared index (PostgreSQL, a server): one per index, under the user's
// cache directory, named by a digest of id (the location, which may hold a
// password, and a PostgreSQL schema).
func journalDir(id string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("journal: %w (choose one with --journal FILE, or --no-journal)", err)
	}
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(cache, "urlhash", "dedupe", hex.EncodeToString(sum[:8])), nil
}

// journalError adds what to do to an error of dedupe's journals.
func journalError(err error) error {
	var ie *dedupe.IndexError
	switch {
	case errors.As(err, &ie):
		return fmt.Errorf("%w\nurlhash: hint: a dedupe of index %s at %s finishes the batch (serve it there again); to give the batch up, move %s away (its inputs may be stored in %s without having been printed)", err, ie.Want, ie.Path, ie.Journal, ie.Want)
	case errors.Is(err, dedupe.ErrJournalBusy):
		return fmt.Errorf("%w (give each its own --journal FILE)", err)
	}
	return err
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
	do, err := o.journalOptions()
	if err != nil {
		return err
	}
	a := newAnswers(e, o.json)
	sep := byte('\n')
	if o.in.nul {
		sep = 0
	}
	// The inputs of the batches sent and not yet answered, in order: the
	// client answers them in that order.
	var sentMu sync.Mutex
	var sent [][]input
	c, err := dedupe.Open(e.ctx, ix, do, func(b *dedupe.Batch) error {
		if b.Recovered {
			return o.printRecovered(a, b, sep)
		}
		sentMu.Lock()
		ins := sent[0]
		sent = sent[1:]
		sentMu.Unlock()
		return o.print(a, b, ins, sep)
	})
	if err != nil {
		return journalError(err)
	}
	err = streamBatches(e, &o.in, args, c.BatchSize(), func(batch []input) error {
		inputs := make([]dedupe.Input, len(batch))
		for i, r := range resolve(ix, batch, o.in.kind()) {
			inputs[i] = dedupe.Input{Text: r.r.text, Entry: r.entry, Err: r.err}
		}
		set := o.vf.setter(time.Now())
		for i := range inputs {
			if inputs[i].Err == nil {
				set(&inputs[i].Entry)
			}
		}
		sentMu.Lock()
		sent = append(sent, batch)
		sentMu.Unlock()
		return c.Send(e.ctx, inputs)
	})
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	return a.status(o.in.status(err))
}

// print prints the answer to a batch of inputs: the new inputs (all of
// them with --json), and the failed ones as failures.
func (o *dedupeOptions) print(a *answers, b *dedupe.Batch, ins []input, sep byte) error {
	for i, in := range b.Inputs {
		if in.Err != nil {
			a.fail(ins[i], in.Err)
			continue
		}
		switch isNew := b.New[i]; {
		case a.json != nil:
			a.json.Encode(memberOutput{Input: in.Text, Hash: hexKey(&in.Entry), New: &isNew})
		case isNew:
			a.out.WriteString(in.Text)
			a.out.WriteByte(sep)
		}
	}
	return a.out.Flush()
}

// printRecovered prints the new inputs of a killed run's batch, which this
// run finished (marked recovered with --json).
func (o *dedupeOptions) printRecovered(a *answers, b *dedupe.Batch, sep byte) error {
	recovered, isNew := true, true
	for i, in := range b.Inputs {
		switch {
		case !b.New[i]:
		case a.json != nil:
			a.json.Encode(memberOutput{Input: in.Text, Hash: hexKey(&in.Entry), New: &isNew, Recovered: &recovered})
		default:
			a.out.WriteString(in.Text)
			a.out.WriteByte(sep)
		}
	}
	return a.out.Flush()
}
