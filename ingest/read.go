package ingest

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
)

// DefaultMaxLineBytes is the default of Options.MaxLineBytes: 1 MiB.
const DefaultMaxLineBytes = 1 << 20

// Record is one URL, IRI or hash read from an input.
type Record struct {
	// Text is the record: a line as is (lines), a decoded IRI (ntriples),
	// the entity-decoded, trimmed <loc> text (sitemap) or lowercase hex
	// (hashes).
	Text string
	// Line is the 1-based line the record came from: for sitemaps the line
	// of the <loc> start tag, for NUL-separated input the record number.
	Line int
}

// Options tunes Read. A nil *Options means the defaults.
type Options struct {
	// NUL separates records by NUL bytes instead of newlines, taken byte for
	// byte (no carriage return is dropped). Lines and Hashes only; default
	// false.
	NUL bool
	// MaxLineBytes is the longest line, NUL-separated record or <loc> text
	// accepted, in bytes, not counting the separator (a carriage return
	// before a newline counts). A longer one is a
	// *LineError wrapping ErrLineTooLong, and reading goes on after it.
	// Zero means DefaultMaxLineBytes (1 MiB).
	MaxLineBytes int
}

// Validate reports whether the options are usable with format f.
func (o *Options) Validate(f Format) error {
	if !f.isValid() {
		return fmt.Errorf("%w %v", ErrUnknownFormat, f)
	}
	if o.MaxLineBytes < 0 {
		return fmt.Errorf("%w: negative MaxLineBytes %d", ErrInvalidOptions, o.MaxLineBytes)
	}
	if o.NUL && f != Lines && f != Hashes {
		return fmt.Errorf("%w: NUL separation applies to lines and hashes, not %v", ErrInvalidOptions, f)
	}
	return nil
}

// withDefaults returns a copy of o with defaults filled in.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.MaxLineBytes == 0 {
		c.MaxLineBytes = DefaultMaxLineBytes
	}
	return c
}

// Read returns the records of r, read as format f. name is the file name used
// in errors (it may be empty).
//
// A bad record yields (Record{Line: n}, err) with err a *LineError, and
// reading continues with the next record: the caller decides whether to skip
// or stop. An error reading r (including a decompression error), or invalid
// options, yields (Record{}, err) with err not a *LineError, and ends the
// sequence. Breaking out of the loop stops reading at once. Read does not
// close r, and the sequence reads r as it goes, so it can be ranged over once.
func Read(r io.Reader, name string, f Format, opts *Options) iter.Seq2[Record, error] {
	o := opts.withDefaults()
	return func(yield func(Record, error) bool) {
		if err := o.Validate(f); err != nil {
			yield(Record{}, err)
			return
		}
		switch f {
		case Lines:
			readLines(r, name, &o, yield)
		case Hashes:
			readHashes(r, name, &o, yield)
		case NTriples:
			readNTriples(r, name, &o, yield)
		case Sitemap:
			readSitemap(r, name, &o, yield)
		}
	}
}

// ioError wraps an error of the underlying reader with the file name.
func ioError(name string, err error) error {
	if name == "" {
		return fmt.Errorf("ingest: read: %w", err)
	}
	return fmt.Errorf("ingest: read %s: %w", name, err)
}

// Open opens the named file for reading, "-" meaning standard input, and
// gunzips it transparently when it starts with the gzip magic bytes
// (whatever its name). It is OpenFile(path, os.Stdin).
func Open(path string) (io.ReadCloser, error) {
	return OpenFile(path, os.Stdin)
}

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = [2]byte{0x1f, 0x8b}

// OpenFile is Open with stdin as the reader for the path "-". Closing the
// result closes the file it opened; it never closes stdin.
func OpenFile(path string, stdin io.Reader) (io.ReadCloser, error) {
	var src io.Reader
	var closer io.Closer
	if path == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("%w: no standard input for \"-\"", ErrInvalidOptions)
		}
		src = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		src, closer = f, f
	}
	return newReader(path, src, closer)
}

// NewReader returns r, gunzipped when it starts with the gzip magic bytes.
// name names r in errors. Closing the result does not close r. Use it for
// inputs that are not files, or files the caller opened itself (to count
// progress, say).
func NewReader(name string, r io.Reader) (io.ReadCloser, error) {
	return newReader(name, r, nil)
}

func newReader(name string, src io.Reader, closer io.Closer) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(src, 64<<10)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		if closer != nil {
			closer.Close()
		}
		return nil, ioError(name, err)
	}
	rc := &readCloser{r: br, c: closer}
	if len(head) == len(gzipMagic) && [2]byte(head) == gzipMagic {
		zr, err := gzip.NewReader(br)
		if err != nil {
			if closer != nil {
				closer.Close()
			}
			return nil, fmt.Errorf("ingest: gunzip %s: %w", name, err)
		}
		rc.r, rc.z = zr, zr
	}
	return rc, nil
}

// readCloser reads an opened input, maybe through a gzip reader.
type readCloser struct {
	r io.Reader
	z *gzip.Reader // nil unless gunzipping
	c io.Closer    // nil for standard input
}

func (rc *readCloser) Read(p []byte) (int, error) { return rc.r.Read(p) }

// Close closes the gzip reader and the file.
func (rc *readCloser) Close() error {
	var err error
	if rc.z != nil {
		err = rc.z.Close()
	}
	if rc.c != nil {
		if cerr := rc.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
