package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/urlhash/urlhash/ingest/internal/rdflex"
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
	// MaxLineBytes is the longest line, NUL-separated record or trimmed
	// <loc> text accepted, in bytes, not counting the separator (a carriage
	// return before a newline counts). A longer one is a *LineError
	// wrapping ErrLineTooLong, and reading goes on after it. It also bounds
	// the memory a reader holds for one record. In Lines, a byte that is not
	// part of valid UTF-8 counts three (what it costs a URL parser is never
	// more than a valid line's). Zero means DefaultMaxLineBytes (1 MiB).
	MaxLineBytes int
	// Base is the absolute IRI that relative IRI references of Turtle,
	// TriG and RDF/XML resolve against until the document sets its own
	// (@base, BASE, xml:base), as RFC 3986 section 5 says. Empty means
	// none: a relative reference the document does not give a base for is
	// then a *LineError wrapping ErrRelativeIRI. A caller reading a file
	// would pass the file's own URL (FileIRI). Default "".
	Base string
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
	if o.Base != "" && !isAbsoluteIRI(o.Base) {
		return fmt.Errorf("%w: base IRI %s is not absolute", ErrInvalidOptions, quote(o.Base))
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
// or stop, except where the package documentation says that an error ends
// the sequence. An error reading r (including a decompression error),
// invalid options, or an input whose first block looks binary (ErrBinary),
// yields (Record{}, err) with err not a *LineError, and ends the sequence. Breaking out of the loop stops reading at once. Read does not
// close r, and the sequence reads r as it goes, so it can be ranged over once.
func Read(r io.Reader, name string, f Format, opts *Options) iter.Seq2[Record, error] {
	o := opts.withDefaults()
	return func(yield func(Record, error) bool) {
		if err := o.Validate(f); err != nil {
			yield(Record{}, err)
			return
		}
		br := bufio.NewReaderSize(&stickyReader{r: r}, readBufSize)
		if err := sniff(br, name, o.NUL, f.IsRDF()); err != nil {
			yield(Record{}, err)
			return
		}
		switch f {
		case Lines:
			readLines(br, name, &o, yield)
		case Hashes:
			readHashes(br, name, &o, yield)
		case NTriples:
			readNTriples(br, name, &o, yield)
		case Sitemap:
			readSitemap(br, name, &o, yield)
		case Turtle, TriG:
			readTurtle(br, name, &o, f == TriG, yield)
		case RDFXML:
			readRDFXML(br, name, &o, yield)
		}
	}
}

// readBufSize is the size of the buffer Read reads its input through.
const readBufSize = 64 << 10

// stickyReader returns its first error, io.EOF included, from every later
// Read too, so that an error met by sniff, whose bufio.Reader hands it over
// once, is met again by the format reader after the records before it.
type stickyReader struct {
	r   io.Reader
	err error
}

func (s *stickyReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	s.err = err
	return n, err
}

// Sniff applies Read's rule for binary input to a reader the caller
// splits into records itself: it returns an error wrapping ErrBinary and
// naming name when the start of br (what its first read brought, up to
// 8 KiB) looks binary for lines (NUL-separated when nul), and otherwise
// drops a leading UTF-8 byte order mark unless nul. It waits for nothing
// more than the first read.
func Sniff(br *bufio.Reader, name string, nul bool) error { return sniff(br, name, nul, false) }

// sniffLen is how many bytes at the start of an input sniff examines.
const sniffLen = 8 << 10

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sniff returns an error wrapping ErrBinary when the start of br, up to
// sniffLen bytes of what its first read brought, looks binary (see
// binaryReason), and otherwise drops a leading UTF-8 byte order mark,
// unless records are NUL-separated (taken byte for byte). The RDF syntaxes
// (rdf) allow any character in a literal, NUL and the other control
// characters included: for them only a byte order mark and invalid UTF-8
// (see binaryReason) make an input binary; their grammars refuse the rest. It waits for
// nothing more than the first read: on a pipe, a producer that writes one
// line and waits for its answer must get it. A read error is left in br
// for the format reader to meet after the records before it.
func sniff(br *bufio.Reader, name string, nul, rdf bool) error {
	br.Peek(1) // the first read
	head, _ := br.Peek(min(br.Buffered(), sniffLen))
	if why := binaryReason(head, nul, rdf, len(head) == sniffLen); why != "" {
		if name == "" {
			return fmt.Errorf("%w (%s)", ErrBinary, why)
		}
		return fmt.Errorf("%w %s (%s)", ErrBinary, name, why)
	}
	if !nul && bytes.HasPrefix(head, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	return nil
}

// binaryReason says why head, the start of an input (cut at the end of a
// full block when more follows), is not text, or returns "" when it is:
//
//   - it starts with a UTF-16 or UTF-32 byte order mark;
//   - it holds a NUL byte, unless records are NUL-separated or it is
//     read as an RDF syntax (rdf), whose literals may hold any character;
//   - more than a third of its bytes are odd: C0 control bytes other than
//     tab, LF, VT, FF, CR (and NUL when NUL-separated), DEL, and bytes that
//     are not part of valid UTF-8. This is the rule of Perl's -B file test.
//     Valid UTF-8 in any script is never odd; a Latin-1 text, whose letters
//     with accents are invalid UTF-8, passes unless it is mostly such
//     letters. Read as an RDF syntax, only invalid UTF-8 is odd: any
//     character may appear in a literal.
func binaryReason(head []byte, nul, rdf, cut bool) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x00, 0x00, 0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE, 0x00, 0x00}):
		return "UTF-32 byte order mark; only UTF-8 is read"
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return "UTF-16 byte order mark; only UTF-8 is read"
	}
	if !nul && !rdf {
		if i := bytes.IndexByte(head, 0); i >= 0 {
			return fmt.Sprintf("NUL byte at offset %d", i)
		}
	}
	odd := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if !rdf && (c < 0x20 && !isSpace(c) && !(nul && c == 0) || c == 0x7F) {
				odd++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			if cut && !utf8.FullRune(head[i:]) {
				break // a character cut at the end of the block
			}
			odd++
		}
		i += size
	}
	if odd*3 > len(head) {
		return fmt.Sprintf("%d of its first %d bytes are control bytes or invalid UTF-8", odd, len(head))
	}
	return ""
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

// The bound of a gzipped input's expansion. Text compresses well, and
// lists of similar URLs very well, but a hundred times is far beyond what
// real lists reach (deflate can reach about a thousand: a run of newlines
// or zeros); the bound keeps the work a gzipped input costs within a
// constant factor of its size.
const (
	// MaxGzipRatio is how many times its compressed size a gzipped input
	// may expand to.
	MaxGzipRatio = 100
	// MinGzipBombBytes is what a gzipped input may expand to whatever its
	// ratio (a small file of few distinct lines may compress very well).
	MinGzipBombBytes = 16 << 20
)

func newReader(name string, src io.Reader, closer io.Closer) (io.ReadCloser, error) {
	in := &countingReader{r: src}
	br := bufio.NewReaderSize(in, 64<<10)
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
		rc.r, rc.z, rc.in = zr, zr, in
	}
	return rc, nil
}

// readCloser reads an opened input, maybe through a gzip reader.
type readCloser struct {
	r   io.Reader
	z   *gzip.Reader    // nil unless gunzipping
	c   io.Closer       // nil for standard input
	in  *countingReader // the compressed bytes read, when gunzipping
	out int64           // the bytes gunzipped
	err error           // ErrGzipBomb, once met
}

func (rc *readCloser) Read(p []byte) (int, error) {
	if rc.err != nil {
		return 0, rc.err
	}
	n, err := rc.r.Read(p)
	if rc.z != nil {
		rc.out += int64(n)
		if rc.out > MinGzipBombBytes && rc.out > MaxGzipRatio*rc.in.n {
			rc.err = fmt.Errorf("%w: %d bytes from %d compressed (more than %d times): refused as a decompression bomb",
				ErrGzipBomb, rc.out, rc.in.n, MaxGzipRatio)
			return n, rc.err
		}
	}
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

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

// FileIRI returns the file: URL of the named file, made absolute: the
// default base IRI of an RDF document read from a file. Each path segment
// is percent-encoded where an IRI needs it.
func FileIRI(name string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	abs = filepath.ToSlash(abs)
	if !strings.HasPrefix(abs, "/") {
		abs = "/" + abs // a Windows drive letter
	}
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(abs); i++ {
		c := abs[i]
		if c < 0x80 && (rdflex.ForbiddenInIRI(c) || c == '%' || c == '?' || c == '#') {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}
