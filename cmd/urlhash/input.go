package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/urlhash/urlhash/ingest"
)

// maxLine bounds one input (line, NUL-separated item or argument), for
// every input path alike: ingest's limit, which files are read under, is
// the CLI's everywhere.
const maxLine = ingest.DefaultMaxLineBytes

// input is one input (an argument, a line, a NUL-separated item or what
// an --input-format reader yields) with where it came from, for error
// messages.
type input struct {
	text string
	src  string // the file it was read from; "" for standard input
	line int    // 1-based line (or NUL-separated item) number; 0 for an argument
	seq  int    // 0-based position among all the command's inputs
	// err, when set, is why the input was refused as it was read (a line
	// too long, a bad line of a hashes file): the command answers it as
	// a failed input, in its place (text is then "").
	err error
}

// inputError is the reason an input was refused as read, worded as
// ingest words it in a LineError (without "ingest: "): the diagnostic puts
// the input and line before it.
type inputError struct{ err error }

func (e inputError) Error() string { return strings.TrimPrefix(e.err.Error(), "ingest: ") }
func (e inputError) Unwrap() error { return e.err }

// diagnostic formats the error of a failed input: "urlhash: error:",
// then "FILE:LINE: " ("stdin:LINE: ") for an input read from a file or
// standard input, then err.
func (r input) diagnostic(err error) string {
	if r.line == 0 {
		return fmt.Sprintf("urlhash: error: %v\n", err)
	}
	src := r.src
	if src == "" {
		src = "stdin"
	}
	return fmt.Sprintf("urlhash: error: %s:%d: %v\n", src, r.line, err)
}

// readInputs calls fn with batches of at most batchSize inputs taken
// from args or, when args is empty, from r: one per line with a trailing CR
// dropped (blank and comment lines skipped, see ingest.IsSkipped), or
// NUL-separated byte for byte when nul is set (empty ones skipped). A
// final separator does not start an empty input. fn owns each batch it is
// given.
//
// Unless fill is set, inputs are handed over as soon as a read returns
// them, so a producer that writes one line and waits for the answer is not
// kept waiting; with fill (r is a regular file: nobody waits) only full
// batches are, and the last, so that no batch is built from pieces and
// copied again. The texts of one read share one string, so a fast producer
// costs one allocation per read rather than one per input.
//
// An input over the line limit (maxLine; see ingest.CheckLine) is handed
// over in its place with err set and no text, from arguments as from
// standard input; reading one holds at most twice the limit.
func readInputs(args []string, r io.Reader, nul, fill bool, batchSize int, fn func([]input) error) error {
	if len(args) > 0 {
		batch := make([]input, len(args))
		for i, a := range args {
			batch[i] = input{text: a, seq: i}
			if err := ingest.CheckLine([]byte(a), maxLine); err != nil {
				batch[i] = input{seq: i, err: fmt.Errorf("argument %d: %w", i+1, inputError{err})}
			}
		}
		return fn(batch)
	}
	sep := byte('\n')
	if nul {
		sep = 0
	}
	line := 0
	var batch []input
	// add appends an input to the batch, handing the batch over when full.
	add := func(in input) error {
		batch = append(batch, in)
		if len(batch) == batchSize {
			full := batch
			batch = make([]input, 0, batchSize)
			return fn(full)
		}
		return nil
	}
	// split hands fn the inputs of text, whose last byte is a separator
	// unless atEOF.
	split := func(text string, atEOF bool) error {
		if batch == nil && len(text) > 0 {
			n := batchSize
			if !fill {
				n = min(batchSize, 1+strings.Count(text, string(sep)))
			}
			batch = make([]input, 0, n)
		}
		for len(text) > 0 {
			i := strings.IndexByte(text, sep)
			rec := text
			if i >= 0 {
				rec, text = text[:i], text[i+1:]
			} else {
				text = ""
			}
			if !nul && len(rec) > 0 && rec[len(rec)-1] == '\r' {
				rec = rec[:len(rec)-1]
			}
			line++
			r := input{text: rec, line: line}
			var err error
			if len(rec) > maxLine/3 { // no shorter line can be over
				err = ingest.CheckLine([]byte(rec), maxLine)
			}
			switch {
			case err != nil:
				// Before the skip rule, as ingest refuses a long comment
				// line in a file.
				r = input{line: line, err: inputError{err}}
			case nul && rec == "" || !nul && ingest.IsSkipped(rec):
				continue
			}
			if err := add(r); err != nil {
				return err
			}
		}
		if len(batch) > 0 && (!fill || atEOF) {
			full := batch
			batch = nil
			return fn(full)
		}
		return nil
	}
	// skipping is set while the bytes read belong to a line already over
	// the limit: they are dropped up to its separator, and the line is
	// handed over as too long.
	skipping := false
	buf := make([]byte, 0, 256<<10)
	tooLong := func() error {
		line++
		// As ingest.CheckLine words it (TestLineLimitEveryPath).
		err := inputError{fmt.Errorf("%w (more than %d bytes)", ingest.ErrLineTooLong, maxLine)}
		if err := add(input{line: line, err: err}); err != nil {
			return err
		}
		if !fill && bytes.IndexByte(buf, sep) < 0 && len(batch) > 0 {
			// No input follows in what was read: answer it now.
			full := batch
			batch = nil
			return fn(full)
		}
		return nil
	}
	for {
		if len(buf) == cap(buf) {
			if len(buf) > maxLine {
				// No separator in more than a line's worth of bytes.
				skipping, buf = true, buf[:0]
			} else {
				buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
			}
		}
		// What was kept holds no separator: only the bytes read now are
		// searched (a line read a byte at a time costs no quadratic scan).
		scanned := len(buf)
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if skipping {
			i := bytes.IndexByte(buf, sep)
			switch {
			case i >= 0:
				skipping = false
				buf, scanned = buf[:copy(buf, buf[i+1:])], 0
				if terr := tooLong(); terr != nil {
					return terr
				}
			case errors.Is(err, io.EOF):
				skipping, buf = false, buf[:0]
				if terr := tooLong(); terr != nil {
					return terr
				}
			default:
				buf = buf[:0]
			}
		}
		if last := bytes.LastIndexByte(buf[scanned:], sep); last >= 0 {
			last += scanned
			if serr := split(string(buf[:last+1]), false); serr != nil {
				return serr
			}
			buf = buf[:copy(buf, buf[last+1:])]
		}
		if errors.Is(err, io.EOF) {
			// Also when buf is empty: a filled batch may wait.
			return split(string(buf), true)
		}
		if err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
	}
}

// chunk is a batch's results: what goes to stdout and stderr, in order.
type chunk struct {
	out, errs bytes.Buffer
	failed    int
	missed    int    // inputs answered "no" (absent, no match)
	err       error  // what stopped the batch (the index failed): ends the run
	scratch   []byte // a work buffer reused across the chunk's inputs
}

// fail counts a failed input and queues its diagnostic.
func (c *chunk) fail(r input, err error) {
	c.failed++
	c.errs.WriteString(r.diagnostic(err))
}

// processOrdered runs work over every input that streamBatches reads, on
// all cores, and writes the results in input order. work appends a
// input's output to c.out, or its failure to c.fail. The error
// is errReported when an input failed (its diagnostic already written),
// else what stopped reading or writing.
func processOrdered(e *env, in *inputFlags, args []string, work func(r input, c *chunk)) error {
	// These commands keep nothing between batches: a sparser GC costs a few
	// MiB and saves a third of the wall time on large inputs (measured with
	// "go run ./bench -only hash"). GOGC, when set, wins.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	_, err := processBatches(e, in, args, 8192, func(batch []input, c *chunk) {
		c.out.Grow(80 * len(batch))
		for _, r := range batch {
			work(r, c)
		}
	})
	return err
}

// processBatches runs work over the batches (of at most batchSize inputs)
// that streamBatches reads, a batch per core at a time, and writes their
// chunks in input order. It returns the sum of the chunks' missed counts,
// and the error as processOrdered does; a chunk's err stops the run with
// that error, after the chunks before it are written.
func processBatches(e *env, in *inputFlags, args []string, batchSize int, work func(batch []input, c *chunk)) (missed int, _ error) {
	workers := runtime.GOMAXPROCS(0)
	if in.onlyArgs(args) || workers < 2 {
		var c chunk
		err := streamBatches(e, in, args, batchSize, func(batch []input) error {
			work(batch, &c)
			if c.err != nil {
				return c.err
			}
			return flush(e, &c)
		})
		return c.missed, outcome(c.failed, err)
	}

	type job struct {
		inputs []input
		done   chan *chunk
	}
	// One batch waits while each core works on one: batches can be large.
	jobs := make(chan job, 1)
	order := make(chan chan *chunk, 3*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				c := new(chunk)
				work(j.inputs, c)
				j.done <- c
			}
		})
	}
	// The writer owns failed, missed and writeErr until writerDone; the
	// reader only polls writeFailed to stop early.
	var failed int
	var writeErr error
	var writeFailed atomic.Bool
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for done := range order {
			c := <-done
			failed += c.failed
			missed += c.missed
			if writeErr == nil {
				if writeErr = c.err; writeErr == nil {
					writeErr = flush(e, c)
				}
				if writeErr != nil {
					writeFailed.Store(true)
				}
			}
		}
	}()
	readErr := streamBatches(e, in, args, batchSize, func(batch []input) error {
		if writeFailed.Load() {
			return errWriteFailed
		}
		j := job{inputs: batch, done: make(chan *chunk, 1)}
		order <- j.done
		jobs <- j
		return nil
	})
	close(jobs)
	close(order)
	wg.Wait()
	<-writerDone
	if writeErr != nil {
		return missed, writeErr
	}
	return missed, outcome(failed, readErr)
}

// outcome is the result of a run that failed on err, or had failed
// records.
func outcome(failed int, err error) error {
	if err == nil && failed > 0 {
		return errReported
	}
	return err
}

// errWriteFailed stops reading once output can no longer be written; the
// write error itself is reported.
var errWriteFailed = errors.New("output failed")

func flush(e *env, c *chunk) error {
	if c.errs.Len() > 0 {
		e.stderr.Write(c.errs.Bytes())
		c.errs.Reset()
	}
	_, err := e.stdout.Write(c.out.Bytes())
	c.out.Reset()
	return err
}
