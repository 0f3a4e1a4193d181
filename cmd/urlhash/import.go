package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urlhash/urlhash/ingest"
	"github.com/urlhash/urlhash/query"
	"github.com/urlhash/urlhash/store"
)

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "bulk-load URLs or hashes from files into an index",
		usage: `Usage: urlhash import --db DIR [flags] FILE...|-

Bulk-loads every URL (or hash) of the files into the index, creating it if
needed: the fastest way to fill an index. Gzipped files are read
transparently; "-" is standard input. A bad line is reported on stderr as
FILE:LINE: reason and skipped; --strict stops at the first one instead,
--max-errors N after N, keeping what was stored before. An RDF document
(ntriples, nquads, turtle, trig, rdfxml) that breaks its grammar is refused
whole, as is a file that looks binary or cannot be read: the error names
FILE:LINE and the import stores nothing at all (all or nothing per run;
over a remote index, what the server received before may be stored). The
last line on stderr is the summary "N stored, M duplicates, K skipped".
Everything stored is durable when the command exits.

Exit status: 0 every record stored or already present; 1 some records
skipped (each reported); 2 an error, a refused file, a stop (--strict,
--max-errors), or nothing stored because every record was rejected.

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash")
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --format FORMAT    (or --input-format) lines (one URL a line,
                         default), ntriples, nquads, turtle, trig or rdfxml
                         (every IRI of an RDF document: N-Triples, N-Quads,
                         Turtle, TriG, RDF/XML), sitemap (the <loc> URLs of
                         a sitemaps.org urlset or sitemapindex), hashes
                         (hex: 64 digits a full entry, an even 8..62 digits
                         a 4..31-byte prefix), or jsonl ("urlhash export
                         --format jsonl": keys, texts and data as exported;
                         a new index records the export's profile). Unset,
                         a file named *.nt, *.nq, *.ttl, *.trig, *.rdf or
                         *.owl (.gz too) is read in the RDF syntax its
                         extension names
      --base IRI         the base of relative IRIs in Turtle, TriG and
                         RDF/XML files (default: each file's file: URL;
                         standard input has none, and refuses a relative
                         IRI)
      --store-url        keep each URL's text in its entry
      --compression C    codec of the tables written: none (fast lookups,
                         about 53 bytes an entry on disk), snappy (42) or
                         zstd (about 40); default: the index's, none for
                         a new index
` + valueUsage + `                         (a jsonl entry's own data and expires win)
      --strict           stop at the first bad line (--max-errors 1)
      --max-errors N     stop after N bad records (default 0: never)
      --memory MIB       the memory the import aims to stay within, in MiB
                         (default 1024): a quarter of it gathers and sorts
                         the input, in chunks written as sorted runs to
                         temporary files in the index directory when the
                         input outgrows it; the rest is the filter and
                         Badger's tables and caches
      --json             print the summary as one JSON object on stdout
  -0, --null             lines and hashes are NUL-separated
      --profile, --digest, --drop-fragment
                         the identity of a new index (default urlhash,
                         sha256); an existing index keeps the one it records

Example:
  $ urlhash import --db idx testdata/debian-package-urls.txt
  urlhash: import: 30022 stored, 66 duplicates, 0 skipped
  $ urlhash import --db idx --format ntriples data.nt
  $ urlhash import --db idx --profile iri foaf.ttl dcterms.rdf
`,
		run: runImport,
	}
}

// importFormats lists the formats import reads, for its messages.
const importFormats = "lines, hashes, ntriples, nquads, turtle, trig, rdfxml, sitemap or jsonl"

// importSummary is the --json summary of import.
type importSummary struct {
	Stored     int64 `json:"stored"`
	Duplicates int64 `json:"duplicates"`
	Skipped    int64 `json:"skipped"`
}

func runImport(e *env, args []string) error {
	fs := newFlags("import")
	var db dbFlags
	db.addFlags(fs)
	formatName := fs.String("format", "lines", importFormats)
	fs.StringVar(formatName, "input-format", "lines", importFormats)
	base := fs.String("base", "", "base IRI of relative IRIs in RDF files")
	storeURL := fs.Bool("store-url", false, "keep URL text")
	strict := fs.Bool("strict", false, "stop at the first bad line")
	maxErrors := fs.Int64("max-errors", 0, "stop after N bad records (0: never)")
	asJSON := fs.Bool("json", false, "JSON summary")
	memory := fs.Int64("memory", 1024, "memory target in MiB")
	nul := fs.BoolP("null", "0", false, "NUL-separated input")
	var vf valueFlags
	vf.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := vf.check(); err != nil {
		return err
	}
	// jsonl is urlhash's own export format: lines, each decoded here.
	jsonl := *formatName == "jsonl"
	format := ingest.Lines
	if !jsonl {
		var err error
		if format, err = ingest.ParseFormat(*formatName); err != nil {
			return usagef("%w %q (want %s)", ingest.ErrUnknownFormat, *formatName, importFormats)
		}
	}
	files := fs.Args()
	if len(files) == 0 {
		return usagef("no input files (use - for standard input)")
	}
	givenFormat := fs.Changed("format") || fs.Changed("input-format") || *nul
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
	ropts := &ingest.Options{NUL: *nul, Base: *base}
	if err := ropts.Validate(format); err != nil {
		return usageError{err}
	}
	if jsonl && !db.id.changed() {
		// A new index records the profile of the export it is made from.
		name, err := jsonlProfile(e, files[0])
		if err != nil {
			return err
		}
		if name != "" {
			if db.profile, err = query.ParseProfile(name); err != nil {
				return err
			}
		}
	}
	if *memory < 16 {
		return usagef("--memory must be at least 16 (MiB)")
	}
	db.loadMemory = *memory << 20 / 4
	if os.Getenv("GOMEMLIMIT") == "" {
		// Collect garbage before the heap outgrows the target rather than
		// at twice the live heap (Go's default): the sort's chunks, the
		// filter and Badger's table builders are most of it.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(*memory << 20 * 3 / 4))
	}
	ix, err := db.open(e, true, *storeURL, true)
	if err != nil {
		return err
	}
	defer ix.Close()

	if *maxErrors < 0 {
		return usagef("--max-errors must be 0 (no limit) or more")
	}
	if *strict {
		*maxErrors = 1
	}
	var skipped int64
	var stopErr error // what ended the input early: a read error, or too many bad records
	// refused is set when a file was refused whole (a grammar, read or
	// binary error): then nothing of the run may be stored.
	var refused bool
	bad := func(err error) bool {
		skipped++
		e.warnf("%v", err)
		if *maxErrors > 0 && skipped >= *maxErrors {
			stopErr = errReported
			return false
		}
		return true
	}
	entries := func(yield func(store.Entry) bool) {
		if vf.isSet() {
			set, inner := vf.setter(time.Now()), yield
			yield = func(en store.Entry) bool {
				set(&en)
				return inner(en)
			}
		}
		for _, name := range files {
			o := *ropts
			b, err := inputBase(*base, name)
			ok := err == nil
			if ok {
				o.Base = b
				ok = importFile(e, ix, name, formatOf(name), jsonl, &o, bad, yield, &stopErr)
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
	res, err := ix.Store().Load(entries)
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
	sum := importSummary{Stored: res.Added, Duplicates: res.Present, Skipped: skipped}
	if *asJSON {
		out := bufio.NewWriter(e.stdout)
		newJSONWriter(out).Encode(sum)
		out.Flush()
	}
	// The summary is the last line on stderr, after any error that ended
	// the input early.
	if stopErr != nil && !errors.Is(stopErr, errReported) {
		e.warnf("%v", stopErr)
	}
	if refused {
		e.warnf("import: nothing stored: a file was refused")
	}
	fmt.Fprintf(e.stderr, "urlhash: import: %d stored, %d duplicates, %d skipped\n", sum.Stored, sum.Duplicates, sum.Skipped)
	switch {
	case stopErr != nil:
		return errReported
	case skipped > 0 && sum.Stored+sum.Duplicates == 0:
		e.warnf("import: nothing stored: every record was rejected")
		return errReported
	case skipped > 0:
		return errNotFound // exit 1: some records skipped, each reported
	}
	return nil
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
	f, err := ingest.NewReader(display, src)
	if err != nil {
		closeSrc()
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
	for it := range items {
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
			if !errors.Is(err, ingest.ErrBinary) && !errors.As(err, &le) { // those name the file already
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
	recs []ingest.Record
	err  error
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
			if record := query.ProfileRecord(ix.Profile()); err == nil && name != "" && name != record {
				err = fmt.Errorf("%w: the export was made with %s, the index records %s", store.ErrProfileMismatch, name, record)
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
