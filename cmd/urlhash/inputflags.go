package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"

	"github.com/spf13/pflag"
	"github.com/urlhash/urlhash/ingest"
	"github.com/urlhash/urlhash/query"
)

// inputFlags are the input flags every command that reads URLs or hashes
// shares, and where its inputs come from: the arguments in order (an
// argument "-" is standard input), then each --from file; with neither,
// standard input. Files and standard input are read in --input-format,
// gzip detected by content and binary input refused alike; blank and
// comment lines are skipped everywhere (ingest.IsSkipped).
type inputFlags struct {
	nul    bool
	from   []string
	format string
	base   string // --base: the base IRI of relative references in RDF inputs
	// hashesFlag is --hashes, of the commands that read keys as well as
	// URLs (see addHashes).
	hashesFlag bool
	fs         *pflag.FlagSet // to tell a given --input-format from the default
	// bad counts the inputs a file reader rejected (malformed N-Triples,
	// say): each was reported, and the command exits 2.
	bad atomic.Int64
}

// inputFormats are the values of --input-format.
var inputFormats = []string{"lines", "hashes", "ntriples", "nquads", "turtle", "trig", "rdfxml", "sitemap"}

func (o *inputFlags) addFlags(fs *flagSet) {
	fs.StringArrayVar(&o.from, "from", nil, "read inputs from `FILE` too (repeatable; \"-\" is standard input; gzip is detected by content)")
	fs.StringVar(&o.format, "input-format", "lines", "`FORMAT` of files and standard input: lines (default), hashes, ntriples, nquads, turtle, trig, rdfxml (every IRI) or sitemap (every <loc>); unset, a file named *.nt, *.nq, *.ttl, *.trig, *.rdf or *.owl (.gz too) is read in the RDF syntax its extension names")
	fs.enum("input-format", inputFormats...)
	fs.StringVar(&o.base, "base", "", "the base `IRI` of relative IRIs in Turtle, TriG and RDF/XML inputs (default: each file's file: URL; standard input has none)")
	fs.BoolVarP(&o.nul, "null", "0", false, "inputs are NUL-separated, byte for byte; an empty record is skipped, as a blank line is (xargs -0 would pass it on)")
	o.fs = fs.FlagSet
	fs.check(o.check)
}

// addHashes declares --hashes: inputs are hex keys rather than URLs.
func (o *inputFlags) addHashes(fs *flagSet, usage string) {
	fs.BoolVar(&o.hashesFlag, "hashes", false, usage)
}

// hashes reports whether the inputs are keys: --hashes or --input-format
// hashes.
func (o *inputFlags) hashes() bool { return o.hashesFlag || o.format == "hashes" }

// kind is how the index reads the inputs: URLs, or full hashes.
func (o *inputFlags) kind() query.Input {
	if o.hashes() {
		return query.Hashes
	}
	return query.URLs
}

// keysKind is kind for a command that writes or deletes prefix entries
// too: URLs, or keys (full hashes and hex prefixes).
func (o *inputFlags) keysKind() query.Input {
	if o.hashes() {
		return query.Keys
	}
	return query.URLs
}

// onlyArgs reports whether the inputs are the arguments alone.
func (o *inputFlags) onlyArgs(args []string) bool {
	if len(args) == 0 || len(o.from) > 0 {
		return false
	}
	for _, a := range args {
		if a == "-" {
			return false
		}
	}
	return true
}

// fromFiles reports whether every source is a regular file (standard
// input included, when it is read): then all input is there to read, and
// nobody waits for an answer to one line before writing the next.
func (o *inputFlags) fromFiles(e *env, args []string) bool {
	for _, name := range o.from {
		if !isRegular(e, name) {
			return false
		}
	}
	stdin := len(args) == 0 && len(o.from) == 0 || slices.Contains(args, "-")
	return !stdin || isRegular(e, "-")
}

// isRegular reports whether the input name ("-": standard input) is a
// regular file: all there to read, not a pipe or a terminal.
func isRegular(e *env, name string) bool {
	var fi os.FileInfo
	var err error
	if name == "-" {
		f, ok := e.stdin.(*os.File)
		if !ok {
			return false
		}
		fi, err = f.Stat()
	} else {
		fi, err = os.Stat(name)
	}
	return err == nil && fi.Mode().IsRegular()
}

// check validates the flags; call it after parsing.
func (o *inputFlags) check() error {
	f, err := ingest.ParseFormat(o.format)
	if err != nil {
		return usageError{err}
	}
	if err := (&ingest.Options{NUL: o.nul, Base: o.base}).Validate(f); err != nil {
		return usageError{err}
	}
	return nil
}

// formatOf returns the format to read the named input in: --input-format
// when given, else the RDF syntax the file's extension names, else lines.
func (o *inputFlags) formatOf(name string) ingest.Format {
	given, _ := ingest.ParseFormat(o.format)
	if o.fs != nil && o.fs.Changed("input-format") || name == "-" || o.nul {
		return given
	}
	if f, ok := ingest.FormatOf(name); ok {
		return f
	}
	return given
}

// inputBase returns the base IRI of the named input: --base, or the
// file's own file: URL ("" for standard input: a relative IRI there is an
// error).
func inputBase(base, name string) (string, error) {
	if base != "" || name == "-" {
		return base, nil
	}
	return ingest.FileIRI(name)
}

// status is err, or errReported when a file reader rejected inputs.
func (o *inputFlags) status(err error) error {
	if err == nil && o.bad.Load() > 0 {
		return errReported
	}
	return err
}

// read calls fn with batches of at most max inputs from the sources, in
// order.
func (o *inputFlags) read(e *env, args []string, max int, handOver func([]input) error) error {
	// Inputs are numbered across every source (input.seq).
	seq := 0
	fn := func(batch []input) error {
		for i := range batch {
			batch[i].seq = seq
			seq++
		}
		return handOver(batch)
	}
	var lits []string
	flushArgs := func() error {
		if len(lits) == 0 {
			return nil
		}
		err := readInputs(lits, nil, false, false, max, fn)
		lits = nil
		return err
	}
	source := func(name string) error {
		format := o.formatOf(name)
		if name == "-" && format == ingest.Lines {
			// The fast path, under the rule of every other input: gzip
			// detected, binary refused.
			r, err := ingest.NewReader("stdin", e.stdin)
			if err != nil {
				return err
			}
			defer r.Close()
			br := bufio.NewReaderSize(r, 64<<10)
			if err := ingest.Sniff(br, "stdin", o.nul); err != nil {
				return err
			}
			return readInputs(nil, br, o.nul, isRegular(e, "-"), max, fn)
		}
		return o.readFile(e, name, format, max, fn)
	}
	for _, a := range args {
		if a != "-" {
			lits = append(lits, a)
			continue
		}
		if err := flushArgs(); err != nil {
			return err
		}
		if err := source("-"); err != nil {
			return err
		}
	}
	if err := flushArgs(); err != nil {
		return err
	}
	for _, name := range o.from {
		if err := source(name); err != nil {
			return err
		}
	}
	if len(args) == 0 && len(o.from) == 0 {
		return source("-")
	}
	return nil
}

// readFile reads one file (or standard input in another format) with
// package ingest.
func (o *inputFlags) readFile(e *env, name string, format ingest.Format, max int, fn func([]input) error) error {
	display := name
	var f interface {
		Read([]byte) (int, error)
		Close() error
	}
	var err error
	if name == "-" {
		display = "stdin"
		f, err = ingest.NewReader(display, e.stdin)
	} else {
		f, err = ingest.Open(name)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if !isRegular(e, name) {
		// A pipe: whoever writes it may wait for each answer, so each
		// input is handed over as soon as it is read (streamBatches
		// gathers what has arrived).
		max = 1
	}
	base, err := inputBase(o.base, name)
	if err != nil {
		return err
	}
	src := name
	if name == "-" {
		src = ""
	}
	batch := make([]input, 0, max)
	for rec, err := range ingest.Read(f, display, format, &ingest.Options{NUL: o.nul, Base: base}) {
		var le *ingest.LineError
		switch {
		case errors.As(err, &le) && (format == ingest.Lines || format == ingest.Hashes):
			// A line is an input: the command answers it in its place,
			// as a failed one (one output line per input).
			rec = ingest.Record{Line: le.Line}
			err = inputError{le.Err}
		case errors.As(err, &le):
			// An RDF or sitemap error is no input of its own.
			o.bad.Add(1)
			e.warnf("%v", err)
			continue
		case err != nil:
			if errors.Is(err, ingest.ErrBinary) {
				return err // it names the file
			}
			return fmt.Errorf("%s: %w", display, err)
		}
		batch = append(batch, input{text: rec.Text, src: src, line: rec.Line, err: err})
		if len(batch) == max {
			if err := fn(batch); err != nil {
				return err
			}
			batch = make([]input, 0, max)
		}
	}
	if len(batch) > 0 {
		return fn(batch)
	}
	return nil
}
