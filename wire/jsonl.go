package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/urlhash/urlhash/store"
)

// MaxJSONLLine is the longest line of a JSONL body or stream, in bytes.
const MaxJSONLLine = 4 << 20

// ErrStreamCut is returned, wrapped, for a JSONL stream that ends without
// its end line: what came may be only part of the answer.
var ErrStreamCut = errors.New("wire: stream cut short (no end line)")

// StreamError is the error line that ends a JSONL stream the server
// could not finish (after its status was sent).
type StreamError struct {
	Msg string // the server's error text
}

func (e *StreamError) Error() string { return "stream ended by an error: " + e.Msg }

// NewLineScanner returns a scanner of the lines of a JSONL body (the
// entries of /v1/load, store.AppendJSONL), each bounded by MaxJSONLLine.
func NewLineScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, MaxJSONLLine)
	return sc
}

// A JSONL stream (/v1/scan) is entry lines (store.AppendJSONL) ended by
// one line that says how it ended: the end line, or an error line.
var (
	endLine     = []byte(`{"end":true}` + "\n")
	endPrefix   = []byte(`{"end":`)
	errorPrefix = []byte(`{"error":`)
)

// AppendStreamEnd appends the end line of a complete stream.
func AppendStreamEnd(dst []byte) []byte { return append(dst, endLine...) }

// AppendStreamError appends the error line that ends a stream cut by
// an error: {"error":"MSG"}, MSG a JSON string (not a Go-quoted one,
// whose \a and \x00 escapes JSON does not have).
func AppendStreamError(dst []byte, msg string) []byte {
	q, _ := json.Marshal(msg) // a string always marshals
	dst = append(dst, errorPrefix...)
	dst = append(dst, q...)
	return append(dst, "}\n"...)
}

// ReadStream reads a JSONL stream from r and calls fn with each entry, in
// order, stopping at fn's first error, which it returns. The entry's
// value aliases a buffer that the next line overwrites. A stream ended by
// an error line is a *StreamError, one without its end line an error
// wrapping ErrStreamCut, a line that is no entry an error naming it.
func ReadStream(r io.Reader, fn func(store.Entry) error) error {
	sc := NewLineScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, endPrefix):
			return nil
		case bytes.HasPrefix(line, errorPrefix):
			var e struct{ Error string }
			if err := json.Unmarshal(line, &e); err != nil {
				return fmt.Errorf("%w: line %d: error line: %v", ErrBadAnswer, n, err)
			}
			return &StreamError{Msg: e.Error}
		}
		e, err := store.ParseJSONL(line)
		if err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrBadAnswer, n, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return ErrStreamCut
}
