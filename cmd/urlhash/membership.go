package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/server"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// memberOutput is the --json object of has, get, add, delete and dedupe.
type memberOutput struct {
	Input   string  `json:"input"`
	Hash    string  `json:"hash,omitempty"`
	New     *bool   `json:"new,omitempty"`
	Present *bool   `json:"present,omitempty"`
	Text    *string `json:"text,omitempty"`
	Data    string  `json:"data,omitempty"`
	// Times in RFC 3339 (get), when the entry records them.
	FirstSeen string `json:"first_seen,omitempty"`
	LastSeen  string `json:"last_seen,omitempty"`
	Expires   string `json:"expires,omitempty"`
	Error     string `json:"error,omitempty"`
	// Recovered marks a dedupe output printed again from a crashed run's
	// journal.
	Recovered *bool `json:"recovered,omitempty"`
}

func newJSONWriter(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

func hasCommand() *command {
	return &command{
		name:    "has",
		summary: "report whether URLs (or hashes) are in an index",
		usage: `Usage: urlhash has --db DIR [flags] [URL|HASH...]

Looks each URL (or, with --hashes, each hash) up in the index and prints
one line per input, in input order: "present" or "absent", a tab, and the
input. Inputs come from the arguments or, when there are none, from
standard input, one per line. Exit status: 0 if every input is present,
1 if any is absent, 2 on an error (a bad input is reported and the others
are still answered).

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash")
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --hashes           inputs are hashes: 64 hex digits or w0-w1-w2-w3
      --json             one object per input: input, hash, present
  -q, --quiet            print nothing; only the exit status answers
` + inputUsage + `      --profile, --digest, --drop-fragment
                         the identity; default: the one the index records

Example:
  $ urlhash has --db idx https://example.com/ https://example.org/
  present	https://example.com/
  absent	https://example.org/
`,
		run: runHas,
	}
}

func runHas(e *env, args []string) error {
	fs := newFlags("has")
	var db dbFlags
	db.addFlags(fs)
	hashes := fs.Bool("hashes", false, "inputs are hashes")
	asJSON := fs.Bool("json", false, "JSON output")
	quiet := fs.BoolP("quiet", "q", false, "no output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	*hashes = *hashes || in.format == "hashes"
	ix, err := db.open(e, false, false, true)
	if err != nil {
		return err
	}
	defer ix.Close()
	// Batches are answered a core each, in input order.
	missed, err := processBatches(e, &in, fs.Args(), lookupBatch, func(batch []record, c *chunk) {
		rs, err := ix.HasInputs(texts(batch), inputKind(*hashes))
		if err != nil {
			c.err = err
			return
		}
		var enc *json.Encoder
		if *asJSON {
			enc = newJSONWriter(&c.out)
		}
		if !*quiet {
			c.out.Grow(len(batch) * (len("present\t") + 66))
		}
		for i, r := range batch {
			if err := rs[i].Err; err != nil {
				c.fail(r, err)
				switch {
				case *quiet:
				case enc != nil:
					enc.Encode(memberOutput{Input: r.text, Error: err.Error()})
				default:
					c.out.WriteString("error\t" + r.text + "\n")
				}
				continue
			}
			found := rs[i].OK
			if !found {
				c.missed++
			}
			switch {
			case *quiet:
			case enc != nil:
				enc.Encode(memberOutput{Input: r.text, Hash: hex.EncodeToString(rs[i].Hash[:]), Present: &found})
			case found:
				c.out.WriteString("present\t")
				c.out.WriteString(r.text)
				c.out.WriteByte('\n')
			default:
				c.out.WriteString("absent\t")
				c.out.WriteString(r.text)
				c.out.WriteByte('\n')
			}
		}
	})
	err = in.status(err)
	if err == nil && missed > 0 {
		return errNotFound
	}
	return err
}

func getCommand() *command {
	return &command{
		name:    "get",
		summary: "print what an index stores for URLs (or hashes)",
		usage: `Usage: urlhash get --db DIR [flags] [URL|HASH...]

Prints one line per input, tab-separated: "present", the hash and the text
stored with it (the URL, when it was added with --store-url; empty
otherwise), or "absent" and the hash. An entry that stores more adds
fields, each only when set: data=HEX (--data), first_seen= and
last_seen= (dedupe --revisit-after) and expires= (--ttl), times in RFC
3339 UTC. An expired entry is absent. Exit status: 0 if every input is
stored, 1 if any is not, 2 on an error.

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash")
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --hashes           inputs are hashes: 64 hex digits or w0-w1-w2-w3
      --json             one object per input: input, hash, present, text,
                         data (hex), first_seen, last_seen, expires
` + inputUsage + `      --profile, --digest, --drop-fragment
                         the identity; default: the one the index records

Example:
  $ urlhash add --db idx --store-url https://example.com/
  $ urlhash get --db idx HTTPS://EXAMPLE.COM https://example.org/
  present	0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7	https://example.com/
  absent	8198d1bac40a1033653a78e48800cefc9e6b974ff075c66e5548b5c1e145a2b0
`,
		run: runGet,
	}
}

func runGet(e *env, args []string) error {
	fs := newFlags("get")
	var db dbFlags
	db.addFlags(fs)
	hashes := fs.Bool("hashes", false, "inputs are hashes")
	asJSON := fs.Bool("json", false, "JSON output")
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	*hashes = *hashes || in.format == "hashes"
	ix, err := db.open(e, false, false, true)
	if err != nil {
		return err
	}
	defer ix.Close()
	a := newAnswers(e, *asJSON)
	a.perLine = true
	return a.status(in.status(streamBatches(e, &in, fs.Args(), storeBatch, func(batch []record) error {
		for _, r := range resolve(ix, batch, *hashes, false) {
			if r.err != nil {
				a.fail(r.r, r.err)
				continue
			}
			v, err := ix.Store().Get(r.entry.Hash)
			present := err == nil
			switch {
			case errors.Is(err, store.ErrNotFound):
				a.missed++
			case err != nil:
				return err
			}
			if a.json != nil {
				o := memberOutput{Input: r.r.text, Hash: hexKey(&r.entry), Present: &present}
				if present {
					text := string(v.Text)
					o.Text, o.Data = &text, hex.EncodeToString(v.Data)
					o.FirstSeen, o.LastSeen, o.Expires = timeText(v.FirstSeen), timeText(v.LastSeen), timeText(v.Expires)
				}
				a.json.Encode(o)
				continue
			}
			if present {
				a.out.WriteString("present\t" + hexKey(&r.entry) + "\t" + string(v.Text) + valueFields(&v) + "\n")
			} else {
				a.out.WriteString("absent\t" + hexKey(&r.entry) + "\n")
			}
		}
		return a.out.Flush()
	})))
}

// recoverJournal finishes the batch a killed dedupe run left in jn: it
// prints the batch's new inputs, then clears the journal. A server is
// sent the batch again with its Idempotency-Key and answers what it
// answered the first time; another index prints every input of the batch
// that is stored (when the run did not record which were new).
func recoverJournal(ix *query.Index, jn *journal, a *answers, hashes bool, sep byte) error {
	p, err := jn.pending()
	if err != nil || p == nil {
		return err
	}
	var es []store.Entry
	if p.v1 {
		// An older run's batch: its inputs, hashed again.
		rs, err := ix.HasInputs(p.inputs, inputKind(hashes))
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

func addCommand() *command {
	return &command{
		name:    "add",
		summary: "add URLs (or hashes and prefixes) to an index",
		usage: `Usage: urlhash add --db DIR [flags] [URL|HASH...]

Adds each URL's identity (or, with --hashes, each full hash or 4..31-byte
hex prefix entry) to the index, creating the index if needed. Add only
adds: an entry already stored (and not expired) keeps its text, data and
expiry, is reported present (with --json) and counted in a note on
stderr; put replaces it. Everything is durable when the command exits 0.
Prints nothing unless --json.

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash")
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --hashes           inputs are hex: 64 digits a full entry, an even
                         8..62 digits a prefix entry
      --store-url        keep each URL's text in its entry
` + valueUsage + `      --json             one object per input: input, hash, new, present
` + inputUsage + `      --profile, --digest, --drop-fragment
                         the identity of a new index (default urlhash,
                         sha256); an existing index keeps the one it records

Example:
  $ urlhash add --db idx --store-url https://example.com/ https://example.org/
  $ urlhash add --db list --profile webrisk --hashes 0a1b2c3d
  $ urlhash add --db blocked --ttl 72h https://spam.example/
`,
		run: func(e *env, args []string) error { return runAdd(e, "add", args) },
	}
}

func deleteCommand() *command {
	return &command{
		name:    "delete",
		summary: "remove URLs (or hashes and prefixes) from an index",
		usage: `Usage: urlhash delete --db DIR [flags] [URL|HASH...]

Removes each URL's identity (or, with --hashes, each full hash or prefix
entry) from the index: inputs from the arguments, --from FILE or standard
input, as every command reads them. With --prefix HEX it removes instead
every entry (full and prefix entries) whose key starts with HEX (1..64
digits; an odd count is a half byte). Durable when the command exits. The
last line on stderr is the summary "N deleted, M not stored". Exit
status: 0 if every input was stored (and is now removed), or --prefix
removed any; 1 if any input was not stored, or --prefix matched nothing;
2 on an error.

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash")
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --hashes           inputs are hex: 64 digits or an even 8..62 digits
      --prefix HEX       delete every entry whose key starts with HEX
      --json             one object per input: input, hash, present (was
                         stored); with --prefix one summary object:
                         deleted, full, prefixes
` + inputUsage + `      --profile, --digest, --drop-fragment
                         the identity; default: the one the index records

Example:
  $ urlhash delete --db idx https://example.com/
  $ urlhash delete --db idx --from gone.txt
  $ urlhash delete --db idx --prefix 0f11
  urlhash: delete: 3 deleted (3 entries, 0 prefix entries)
`,
		run: func(e *env, args []string) error { return runAdd(e, "delete", args) },
	}
}

// runAdd runs add (add if absent), put (overwrite) and delete.
func runAdd(e *env, name string, args []string) error {
	fs := newFlags(name)
	var db dbFlags
	db.addFlags(fs)
	hashes := fs.Bool("hashes", false, "inputs are hashes")
	var in inputFlags
	in.addFlags(fs)
	asJSON := fs.Bool("json", false, "JSON output")
	var prefix *string
	var keepURL bool
	var vf valueFlags
	if name == "delete" {
		prefix = fs.String("prefix", "", "delete every entry under this hex prefix")
	} else {
		fs.BoolVar(&keepURL, "store-url", false, "keep URL text")
		vf.addFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	if err := vf.check(); err != nil {
		return err
	}
	byPrefix := prefix != nil && fs.Changed("prefix")
	if byPrefix && (len(fs.Args()) > 0 || len(in.from) > 0) {
		return usagef("--prefix takes no other inputs")
	}
	*hashes = *hashes || in.format == "hashes"
	db.mustExist = name == "delete" // deleting from a misspelt --db must not create it
	ix, err := db.open(e, true, keepURL, true)
	if err != nil {
		return err
	}
	defer ix.Close()
	if byPrefix {
		err := deletePrefix(e, ix.Store(), *prefix, *asJSON)
		if cerr := ix.Close(); err == nil || errors.Is(err, errNotFound) && cerr != nil {
			err = cerr
		}
		return err
	}
	a := newAnswers(e, *asJSON)
	var deleted, kept int64
	err = streamBatches(e, &in, fs.Args(), storeBatch, func(batch []record) error {
		rs := resolve(ix, batch, *hashes, true)
		entries := make([]store.Entry, 0, len(rs))
		for _, r := range rs {
			if r.err == nil {
				entries = append(entries, r.entry)
			}
		}
		vf.apply(entries, time.Now())
		var answer []bool // add: new; delete: was stored
		var err error
		switch name {
		case "delete":
			answer = make([]bool, len(entries))
			for i, en := range entries {
				switch err := ix.Store().Delete(en); {
				case errors.Is(err, store.ErrNotFound):
					a.missed++
				case err != nil:
					return err
				default:
					answer[i] = true
					deleted++
				}
			}
		case "put":
			err = ix.Store().PutBatch(entries)
		default:
			answer, err = ix.Store().AddBatch(entries)
		}
		if err != nil {
			return err
		}
		if err := syncWrites(ix.Store()); err != nil {
			return err
		}
		j := 0
		for _, r := range rs {
			if r.err != nil {
				a.fail(r.r, r.err)
				continue
			}
			if name == "add" && !answer[j] {
				kept++
			}
			if a.json != nil {
				o := memberOutput{Input: r.r.text, Hash: hexKey(&r.entry)}
				switch name {
				case "add":
					present := !answer[j]
					o.New, o.Present = &answer[j], &present
				case "delete":
					o.Present = &answer[j]
				}
				a.json.Encode(o)
			}
			j++
		}
		return a.out.Flush()
	})
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	switch {
	case name == "delete":
		fmt.Fprintf(e.stderr, "urlhash: delete: %d deleted, %d not stored\n", deleted, a.missed)
	case kept > 0 && (keepURL || vf.isSet()):
		fmt.Fprintf(e.stderr, "urlhash: note: add: %d already stored, kept as they were (put replaces)\n", kept)
	}
	return a.status(in.status(err))
}

// dedupeJournal opens dedupe's crash journal: FILE when given, none with
// --no-journal, DIR/urlhash.dedupe for an index directory (which one
// process owns at a time), else a free journal of the index's directory
// of journals under the user's cache directory (journalDir), with the
// journals killed runs left there (orphans), to finish.
func dedupeJournal(id, path string, none bool) (jn *journal, orphans []*journal, err error) {
	location, _, _ := strings.Cut(id, "\x00")
	switch {
	case none && path != "":
		return nil, nil, usagef("--journal and --no-journal exclude each other")
	case none:
		return nil, nil, nil
	case path == "" && !backend.IsPostgres(location) && !remote.IsLocation(location):
		path = filepath.Join(location, "urlhash.dedupe")
	}
	if path != "" {
		jn, err = openJournal(path)
		if errors.Is(err, errJournalBusy) {
			err = fmt.Errorf("%w (give each its own --journal FILE)", err)
		}
		return jn, nil, err
	}
	dir, err := journalDir(id)
	if err != nil {
		return nil, nil, err
	}
	return claimJournal(dir)
}

func dedupeCommand() *command {
	return &command{
		name:    "dedupe",
		summary: "print only URLs not seen before, and remember them",
		usage: `Usage: urlhash dedupe --db DIR [flags] [URL|HASH...]

The crawler frontier filter: reads URLs (or hashes with --hashes) and
prints each one whose identity the index did not hold, then stores it, so
that each identity is printed once across runs. Repeats within the input
are printed only the first time. A URL is printed only after it is durably
stored. Answers arrive as input arrives, so a crawler can feed one URL
at a time and read the answer.

Crashes: each batch is written to a journal before it is stored and
cleared after its new URLs are printed. A run that is killed in between
leaves the journal, and the next run first finishes its batch: a server
(http://) is sent it again with its Idempotency-Key and answers what it
answered the first time, even while it is still applying the first
request; another index prints those of its URLs that are stored. Every
URL a run stored is printed at least once, exactly once while nothing
crashes (after a crash, URLs of the interrupted batch may be printed
again). The journal is DIR/urlhash.dedupe for an index directory, and
for a postgres:// or http:// index one file per running dedupe in a
directory of the user's cache directory (urlhash/dedupe/ID/): any number
of runs need no flags, and each finishes the batches of killed runs it
finds there. --journal FILE chooses the file, --no-journal keeps none.

Revisiting: with --revisit-after DURATION a URL is also printed again
once it was last printed DURATION or longer ago (to the second, by the
clock of the index's owner: this process, the PostgreSQL client or the
urlhash server), and each entry records when it was first and last
printed (get shows first_seen and last_seen). The check and the record
are one atomic step: among concurrent dedupe runs, on one index, one
PostgreSQL database or one server, each due URL is printed by one of
them. An entry stored without times (by add, or by dedupe without
--revisit-after) is due at once.

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash") (created if needed)
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --hashes           inputs are hashes: 64 hex digits or w0-w1-w2-w3
      --store-url        keep each URL's text in its entry
      --revisit-after DURATION
                         print a URL again once it was last printed this
                         long ago, e.g. 24h (default 0: never again)
` + valueUsage + `      --json             one object per input: input, hash, new (and
                         recovered: true for a journal's URL printed again)
      --journal FILE     the crash journal (default DIR/urlhash.dedupe for
                         an index directory; a free one under the user's
                         cache directory otherwise)
      --no-journal       keep no crash journal
` + inputUsage + `                         (-0 makes the output NUL-separated too)
      --profile, --digest, --drop-fragment
                         the identity of a new index; e.g. --drop-fragment
                         makes page#a and page#b one page

Example:
  $ printf 'https://a.example/\nhttps://A.example/\nhttps://b.example/\n' | urlhash dedupe --db seen
  https://a.example/
  https://b.example/
  $ urlhash dedupe --db seen --revisit-after 24h --from frontier.txt
`,
		run: runDedupe,
	}
}

func runDedupe(e *env, args []string) error {
	fs := newFlags("dedupe")
	var db dbFlags
	db.addFlags(fs)
	hashes := fs.Bool("hashes", false, "inputs are hashes")
	storeURL := fs.Bool("store-url", false, "keep URL text")
	asJSON := fs.Bool("json", false, "JSON output")
	journalPath := fs.String("journal", "", "crash journal file")
	noJournal := fs.Bool("no-journal", false, "keep no crash journal")
	revisit := fs.Duration("revisit-after", 0, "print a URL again after this long")
	var vf valueFlags
	vf.addFlags(fs)
	var in inputFlags
	in.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := in.check(); err != nil {
		return err
	}
	if err := vf.check(); err != nil {
		return err
	}
	if *revisit < 0 {
		return usagef("--revisit-after must be 0 (never) or more, have %v", *revisit)
	}
	*hashes = *hashes || in.format == "hashes"
	ix, err := db.open(e, true, *storeURL, true)
	if err != nil {
		return err
	}
	defer ix.Close()
	jn, orphans, err := dedupeJournal(db.journalID(), *journalPath, *noJournal)
	if err != nil {
		return err
	}
	if jn != nil {
		defer jn.close()
	}
	a := newAnswers(e, *asJSON)
	sep := byte('\n')
	if in.nul {
		sep = 0
	}
	for _, o := range append(orphans, jn) {
		if o == nil {
			continue
		}
		if err := recoverJournal(ix, o, a, *hashes, sep); err != nil {
			return err
		}
	}
	for _, o := range orphans {
		if err := o.drop(); err != nil {
			return fmt.Errorf("journal %s: %w", o.path, err)
		}
	}
	rdb, _ := ix.Store().(*remote.DB)
	revisitArg := time.Duration(-1)
	if *revisit > 0 {
		revisitArg = *revisit
	}
	err = streamBatches(e, &in, fs.Args(), dedupeBatch, func(batch []record) error {
		rs := resolve(ix, batch, *hashes, false)
		entries := make([]store.Entry, 0, len(rs))
		var inputs []string
		for _, r := range rs {
			if r.err == nil {
				entries = append(entries, r.entry)
				inputs = append(inputs, r.r.text)
			}
		}
		vf.apply(entries, time.Now())
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
		case rdb != nil && *revisit > 0:
			// A server's answer is durable: no /v1/sync after it.
			added, err = rdb.VisitBatchOnce(entries, *revisit, key)
		case rdb != nil:
			added, err = rdb.AddBatchOnce(entries, key)
		case *revisit > 0:
			added, err = ix.Store().VisitBatch(entries, *revisit)
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
		batchNew := make([]bool, len(rs))
		j := 0
		for i, r := range rs {
			if r.err == nil {
				batchNew[i] = added[j]
				j++
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
	return a.status(in.status(err))
}
