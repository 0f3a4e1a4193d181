package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/ingest"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
)

func importCommand() *command {
	return &command{
		name:      "import",
		usageLine: "import --db DIR [flags] FILE...|-",
		short:     "bulk-load URLs or hashes from files into an index",
		long: `Bulk-loads every URL (or hash) of the files into the index, creating it if
needed: the fastest way to fill an index. Gzipped files are read
transparently; "-" is standard input. Every file is checked before the
index is opened or created. A bad line is reported on stderr as
FILE:LINE: reason and skipped; --strict stops at the first one instead,
--max-errors N after N, keeping what was stored before. An RDF document
(ntriples, nquads, turtle, trig, rdfxml) that breaks its grammar is refused
whole, as is a file that looks binary or cannot be read: the error names
FILE:LINE and the import stores nothing at all (all or nothing per run;
over a remote index, what the server received before may be stored).
Interrupted (Ctrl-C) before it stored anything, it stores nothing, says
"interrupted: nothing stored" and removes an index it created; once the
entries are being written it finishes writing them and says so. The last
line on stderr is the summary "N stored, M duplicates, K skipped".
Everything stored is durable when the command exits.

Exit status: 0 every record stored or already present; 1 some records
skipped (each reported); 2 an error, a refused file, a stop (--strict,
--max-errors, an interrupt), or nothing stored because every record was
rejected.
`,
		example: `$ urlhash import --db idx testdata/debian-package-urls.txt
urlhash: import: 30022 stored, 66 duplicates, 0 skipped
$ urlhash import --db idx --input-format ntriples data.nt
$ urlhash import --db idx --profile iri foaf.ttl dcterms.rdf
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(importOptions)
			o.db.addFlags(fs)
			o.db.addIdentity(fs)
			fs.StringVar(&o.format, "input-format", "lines", "`FORMAT` of the files: lines (one URL a line, default), ntriples, nquads, turtle, trig or rdfxml (every IRI of an RDF document), sitemap (the <loc> URLs of a sitemaps.org urlset or sitemapindex), hashes (hex: 64 digits a full entry, an even 8..62 digits a 4..31-byte prefix), or jsonl (\"urlhash export --format jsonl\": keys, texts and data as exported; a new index records the export's profile). Unset, a file named *.nt, *.nq, *.ttl, *.trig, *.rdf or *.owl (.gz too) is read in the RDF syntax its extension names")
			fs.enum("input-format", append(inputFormats[:len(inputFormats):len(inputFormats)], "jsonl")...)
			// The name import had before every command took --input-format.
			fs.StringVar(&o.format, "format", "lines", "the old name of --input-format")
			fs.MarkHidden("format")
			fs.StringVar(&o.base, "base", "", "the base `IRI` of relative IRIs in Turtle, TriG and RDF/XML files (default: each file's file: URL; standard input has none, and refuses a relative IRI)")
			fs.BoolVarP(&o.nul, "null", "0", false, "lines and hashes are NUL-separated; an empty record is skipped, as a blank line is")
			fs.BoolVar(&o.storeURL, "store-url", false, "keep each URL's text in its entry")
			o.db.addCompression(fs)
			o.db.addKeyTable(fs)
			o.vf.addFlags(fs)
			fs.BoolVar(&o.strict, "strict", false, "stop at the first bad line (--max-errors 1)")
			fs.Int64Var(&o.maxErrors, "max-errors", 0, "stop after `N` bad records (default 0: never)")
			fs.Int64Var(&o.memory, "memory", 1024, "the memory the import aims to stay within, in `MIB` (default 1024): a quarter of it gathers and sorts the input, in chunks written as sorted runs to temporary files in the index directory when the input outgrows it; the rest is the filter and Badger's tables and caches")
			fs.BoolVar(&o.json, "json", false, "print the summary as one JSON object on stdout")
			o.fs = fs
			return o.run
		},
	}
}

type importOptions struct {
	db                    dbFlags
	vf                    valueFlags
	format, base          string
	nul, storeURL, strict bool
	json                  bool
	maxErrors, memory     int64
	fs                    *flagSet
}

// importFormats lists the formats import reads, for its messages.
const importFormats = "lines, hashes, ntriples, nquads, turtle, trig, rdfxml, sitemap or jsonl"

// importSummary is the --json summary of import.
type importSummary struct {
	Stored     int64 `json:"stored"`
	Duplicates int64 `json:"duplicates"`
	Skipped    int64 `json:"skipped"`
}

func (o *importOptions) run(e *env, files []string) error {
	// jsonl is urlhash's own export format: lines, each decoded here.
	jsonl := o.format == "jsonl"
	format := ingest.Lines
	if !jsonl {
		var err error
		if format, err = ingest.ParseFormat(o.format); err != nil {
			return usagef("%w %q (want %s)", ingest.ErrUnknownFormat, o.format, importFormats)
		}
	}
	if len(files) == 0 {
		return usagef("no input files (use - for standard input)")
	}
	givenFormat := o.fs.Changed("format") || o.fs.Changed("input-format") || o.nul
	// formatOf is the format of one file: the given one, or the RDF syntax
	// its extension names.
	formatOf := func(name string) ingest.Format {
		if !givenFormat && name != "-" {
			if f, ok := ingest.FormatOf(name); ok {
				return f
			}
		}
		return format
	}
	ropts := &ingest.Options{NUL: o.nul, Base: o.base}
	if err := ropts.Validate(format); err != nil {
		return usageError{err}
	}
	if o.memory < 16 {
		return usagef("--memory must be at least 16 (MiB)")
	}
	if o.maxErrors < 0 {
		return usagef("--max-errors must be 0 (no limit) or more")
	}
	// Every file must be there, and a regular file readable, before the
	// index is opened, or created. (Opening a named pipe would wait for
	// its writer.)
	for _, name := range files {
		if name == "-" {
			continue
		}
		fi, err := os.Stat(name)
		if err == nil && fi.Mode().IsRegular() {
			var f *os.File
			if f, err = os.Open(name); err == nil {
				f.Close()
			}
		}
		if err != nil {
			return err
		}
	}
	if jsonl && !o.db.id.changed() {
		// A new index records the profile of the export it is made from.
		name, err := jsonlProfile(e, files[0])
		if err != nil {
			return err
		}
		if name != "" {
			if o.db.profile, err = query.ParseProfile(name); err != nil {
				return err
			}
		}
	}
	o.db.loadMemory = o.memory << 20 / 4
	if os.Getenv("GOMEMLIMIT") == "" {
		// Collect garbage before the heap outgrows the target rather than
		// at twice the live heap (Go's default): the sort's chunks, the
		// filter and Badger's table builders are most of it.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.memory << 20 * 3 / 4))
	}
	created := isNewDir(o.db.dir)
	ix, err := o.db.open(e, access{write: true, storeURL: o.storeURL})
	if err != nil {
		// An open this run began (an interrupt while it created the
		// index, say) leaves no index behind: nothing was stored in it.
		if created {
			if rmErr := os.RemoveAll(o.db.dir); rmErr != nil {
				e.warnf("import: removing the empty index %s: %v", o.db.dir, rmErr)
			}
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		e.warnf("interrupted: nothing stored")
		fmt.Fprintf(e.stderr, "urlhash: import: 0 stored, 0 duplicates, 0 skipped\n")
		return errReported
	}
	defer ix.Close()

	maxErrors := o.maxErrors
	if o.strict {
		maxErrors = 1
	}
	var skipped int64
	var stopErr error // what ended the input early: a read error, an interrupt, or too many bad records
	// refused is set when a file was refused whole (a grammar, read or
	// binary error) or the import was interrupted: then nothing of the
	// run may be stored.
	var refused bool
	bad := func(err error) bool {
		skipped++
		e.warnf("%v", err)
		if maxErrors > 0 && skipped >= maxErrors {
			stopErr = errReported
			return false
		}
		return true
	}
	entries := func(yield func(store.Entry) bool) {
		if o.vf.isSet() {
			set, inner := o.vf.setter(time.Now()), yield
			yield = func(en store.Entry) bool {
				set(&en)
				return inner(en)
			}
		}
		for _, name := range files {
			ro := *ropts
			b, err := inputBase(o.base, name)
			ok := err == nil
			if ok {
				ro.Base = b
				ok = importFile(e, ix, name, formatOf(name), jsonl, &ro, bad, yield, &stopErr)
			} else {
				stopErr = err
			}
			if ok {
				continue
			}
			// A file that could not be read whole, unlike a stop for bad
			// records (--strict, --max-errors) or the consumer's, is refused.
			if refused = stopErr != nil && !errors.Is(stopErr, errReported); refused {
				// An entry every backend's Load refuses before it writes
				// anything (store.Entry.Check): the run stores nothing.
				yield(store.Entry{Len: -1})
			}
			return
		}
	}
	// Once the input is read, an interrupt lets the load finish (see
	// below): its context keeps e.ctx's values, not its cancellation.
	res, err := ix.Store().Load(context.WithoutCancel(e.ctx), entries)
	if refused {
		// Load refused the poisoned input, as intended: nothing stored.
		res, err = store.LoadResult{}, nil
	}
	if err != nil {
		return err
	}
	if err := ix.Close(); err != nil {
		return err
	}
	interrupted := errors.Is(stopErr, context.Canceled)
	if refused && created {
		// Nothing was stored into the index this run created: leave no
		// empty index behind.
		if err := os.RemoveAll(o.db.dir); err != nil {
			e.warnf("import: removing the empty index %s: %v", o.db.dir, err)
		}
	}
	sum := importSummary{Stored: res.Added, Duplicates: res.Present, Skipped: skipped}
	var outErr error // the --json summary could not be written
	if o.json {
		out := bufio.NewWriter(e.stdout)
		if outErr = newJSONWriter(out).Encode(sum); outErr == nil {
			outErr = out.Flush()
		}
	}
	// The summary is the last line on stderr, after any error that ended
	// the input early.
	switch {
	case interrupted:
		e.warnf("interrupted: nothing stored")
	case stopErr != nil && !errors.Is(stopErr, errReported):
		e.warnf("%v", stopErr)
	}
	if outErr != nil {
		e.warnf("%v", outErr)
	}
	if refused && !interrupted {
		e.warnf("import: nothing stored: a file was refused")
	}
	if !refused && e.ctx.Err() != nil {
		// The interrupt came while the entries were being written: Load
		// finished, and everything read is stored.
		fmt.Fprintln(e.stderr, "urlhash: note: import: interrupted while writing; it finished: everything read is stored")
	}
	fmt.Fprintf(e.stderr, "urlhash: import: %d stored, %d duplicates, %d skipped\n", sum.Stored, sum.Duplicates, sum.Skipped)
	switch {
	case stopErr != nil || outErr != nil:
		return errReported
	case skipped > 0 && sum.Stored+sum.Duplicates == 0:
		e.warnf("import: nothing stored: every record was rejected")
		return errReported
	case skipped > 0:
		return errNotFound // exit 1: some records skipped, each reported
	}
	return nil
}

// isNewDir reports whether location is an index directory that does not
// exist yet (a command that writes creates it).
func isNewDir(location string) bool {
	if backend.IsPostgres(location) || remote.IsLocation(location) {
		return false
	}
	_, err := os.Stat(location)
	return errors.Is(err, fs.ErrNotExist)
}

// importFile yields the entries of one file. It returns false when the
// import must stop: the consumer stopped, a bad line under --strict, or a
// read error or a grammar error of an RDF document (left in *stopErr).
func importFile(e *env, ix *query.Index, name string, format ingest.Format, jsonl bool, ropts *ingest.Options,
	bad func(error) bool, yield func(store.Entry) bool, stopErr *error) bool {
	display := name
	if name == "-" {
		display = "stdin"
	}
	src, closeSrc, err := openInput(e, name)
	if err != nil {
		*stopErr = err
		return false
	}
	// Reading and parsing run ahead on a goroutine of their own, so that
	// they overlap hashing and the index's sorting (the import was one
	// serial pipeline). It owns the reader and closes it: when the import
	// stops early it may still be blocked in a read of a pipe.
	items := make(chan readAhead, 4)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(items)
		defer closeSrc()
		// Here, not before: it waits for the first bytes of a pipe, and
		// an interrupt must not wait with it.
		f, err := ingest.NewReader(display, src)
		if err != nil {
			select {
			case items <- readAhead{err: err, named: true}:
			case <-stop:
			}
			return
		}
		defer f.Close()
		const batchSize = 8192
		batch := make([]ingest.Record, 0, batchSize)
		send := func(it readAhead) bool {
			select {
			case items <- it:
				batch = make([]ingest.Record, 0, batchSize)
				return true
			case <-stop:
				return false
			}
		}
		for rec, err := range ingest.Read(f, display, format, ropts) {
			if err != nil {
				var le *ingest.LineError
				if !send(readAhead{recs: batch, err: err}) || !errors.As(err, &le) {
					return
				}
				continue
			}
			batch = append(batch, rec)
			if len(batch) == batchSize && !send(readAhead{recs: batch}) {
				return
			}
		}
		if len(batch) > 0 {
			send(readAhead{recs: batch})
		}
	}()
	flushBatch := func(batch []ingest.Record) bool {
		if jsonl {
			return emitJSONL(ix, display, batch, bad, yield)
		}
		return emit(ix, display, format, batch, bad, yield)
	}
	for {
		var it readAhead
		var more bool
		select {
		case it, more = <-items:
		case <-e.ctx.Done():
			// The reader may be blocked in a read of a pipe that only
			// more input ends: do not wait for it.
			*stopErr = e.ctx.Err()
			return false
		}
		if !more {
			break
		}
		if !flushBatch(it.recs) {
			return false
		}
		if err := it.err; err != nil {
			var le *ingest.LineError
			if errors.As(err, &le) && !format.IsRDF() {
				if !bad(err) {
					return false
				}
				continue
			}
			if !it.named && !errors.Is(err, ingest.ErrBinary) && !errors.As(err, &le) { // those name the file already
				err = fmt.Errorf("%s: %w", display, err)
			}
			*stopErr = err
			return false
		}
		if e.ctx.Err() != nil {
			*stopErr = e.ctx.Err()
			return false
		}
	}
	return true
}

// readAhead is what importFile's reader hands on: records, then the error
// that followed them (a bad line, or what ended the file), if any.
type readAhead struct {
	recs  []ingest.Record
	err   error
	named bool // err names the file already
}

// emit turns a batch of records into entries (hashing URLs on every core)
// and yields them in order, reporting bad ones.
func emit(ix *query.Index, file string, format ingest.Format, batch []ingest.Record,
	bad func(error) bool, yield func(store.Entry) bool) bool {
	in := query.URLs
	if format == ingest.Hashes {
		in = query.Keys
	}
	texts := make([]string, len(batch))
	for i, r := range batch {
		texts[i] = r.Text
	}
	for i, res := range ix.Resolve(texts, in) {
		if res.Err != nil {
			if !bad(&ingest.LineError{File: file, Line: batch[i].Line, Err: res.Err}) {
				return false
			}
			continue
		}
		if !yield(res.Entry) {
			return false
		}
	}
	return true
}

// emitJSONL decodes a batch of JSONL lines (see store.JSONL) and yields
// their entries as exported: key, text and data. A header line must name
// the index's profile.
func emitJSONL(ix *query.Index, file string, batch []ingest.Record, bad func(error) bool, yield func(store.Entry) bool) bool {
	for _, r := range batch {
		line := []byte(r.Text)
		if bytes.HasPrefix(line, []byte(`{"urlhash_export"`)) {
			name, err := store.ParseJSONLHeader(line)
			if want := query.ProfileRecord(ix.Profile()); err == nil && name != "" && name != want {
				err = fmt.Errorf("%w: the export was made with %s, the index records %s", store.ErrProfileMismatch, name, want)
			}
			if err != nil && !bad(&ingest.LineError{File: file, Line: r.Line, Err: err}) {
				return false
			}
			continue
		}
		en, err := store.ParseJSONL(line)
		if err != nil {
			if !bad(&ingest.LineError{File: file, Line: r.Line, Err: err}) {
				return false
			}
			continue
		}
		if !yield(en) {
			return false
		}
	}
	return true
}

// jsonlProfile returns the profile named by the header of a JSONL export
// ("" when it names none). Standard input is peeked, not consumed.
func jsonlProfile(e *env, name string) (string, error) {
	var src io.Reader
	if name == "-" {
		br := bufio.NewReaderSize(e.stdin, 64<<10)
		e.stdin = br
		first, _ := br.Peek(br.Size())
		if i := bytes.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
		return store.ParseJSONLHeader(bytes.TrimSpace(first))
	}
	f, err := ingest.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	src = f
	line, err := bufio.NewReaderSize(src, 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	p, err := store.ParseJSONLHeader(bytes.TrimSpace(line))
	if err != nil {
		return "", fmt.Errorf("%s:1: %w", name, err)
	}
	return p, nil
}

// openInput opens a named input ("-" is stdin) and, when stderr is a
// terminal, reports its progress there: bytes read, rate and time left
// (for a gzipped file, of the compressed bytes). Piped, it stays quiet.
func openInput(e *env, name string) (io.Reader, func(), error) {
	var src io.Reader = e.stdin
	size := int64(-1)
	closeSrc := func() {}
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
		src, closeSrc = f, func() { f.Close() }
	}
	if !isTerminal(e.stderr) {
		return src, closeSrc, nil
	}
	bar := progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	r := progressbar.NewReader(src, bar)
	return &r, func() { bar.Finish(); closeSrc() }, nil
}
