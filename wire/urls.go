package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Limits of a URL batch. A server refuses a body beyond them whole, so
// that a hostile client costs bounded memory and time.
const (
	// MaxLineLen is the longest line of a URL batch, in bytes, CR and LF
	// excluded.
	MaxLineLen = 64 << 10
	// MaxLines is the most lines one URL batch holds.
	MaxLines = 1 << 20
)

// MaxGetBatch is the most hashes one /v1/get-batch asks for: its answer
// holds their values, which a server builds in memory, so a server
// refuses more (a client sends larger batches in parts).
const MaxGetBatch = 1 << 16

// MaxFrontierLines is the most lines one request to the frontier's
// /v1/frontier/ endpoints holds; a server refuses more with 400.
const MaxFrontierLines = 1 << 16

// ContentTypeText is the Content-Type of URL batches and their answers.
const ContentTypeText = "text/plain; charset=utf-8"

// ErrBatch is returned, wrapped, for a URL batch or answer that breaks the
// format or its limits.
var ErrBatch = errors.New("wire: bad url batch")

// SplitLines returns the lines of a URL batch body: split at LF, one
// trailing CR dropped from each; a body ending in LF has no empty last
// line, and an empty body has no lines. The lines alias body. A line longer
// than MaxLineLen or more than MaxLines lines is an error wrapping ErrBatch
// that names the line.
func SplitLines(body []byte) ([][]byte, error) {
	n := bytes.Count(body, []byte{'\n'})
	if len(body) > 0 && body[len(body)-1] != '\n' {
		n++
	}
	if n > MaxLines {
		return nil, fmt.Errorf("%w: %d lines, at most %d", ErrBatch, n, MaxLines)
	}
	lines := make([][]byte, 0, n)
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) > MaxLineLen {
			return nil, fmt.Errorf("%w: line %d is %d bytes, at most %d", ErrBatch, len(lines)+1, len(line), MaxLineLen)
		}
		lines = append(lines, line)
	}
	return lines, nil
}

// AppendLines appends urls as a URL batch body. A URL holding LF or CR
// cannot be sent as one line: it is an error wrapping ErrBatch naming it.
func AppendLines(dst []byte, urls []string) ([]byte, error) {
	for i, u := range urls {
		if strings.ContainsAny(u, "\r\n") {
			return nil, fmt.Errorf("%w: url %d %q holds a line break", ErrBatch, i+1, u)
		}
		dst = append(append(dst, u...), '\n')
	}
	return dst, nil
}

// Answer is the answer to one line of a URL batch.
type Answer uint8

// Answers, as their lines spell them.
const (
	// Invalid: the line is no URL the index's profile hashes; the answer
	// line carries the reason.
	Invalid Answer = iota
	// New: /v1/urls/add stored the URL's identity.
	New
	// Present: the identity was stored already.
	Present
	// Absent: /v1/urls/has did not find the identity.
	Absent
)

var answerWords = [...]string{Invalid: "invalid", New: "new", Present: "present", Absent: "absent"}

// String returns the answer's word.
func (a Answer) String() string {
	if int(a) < len(answerWords) {
		return answerWords[a]
	}
	return fmt.Sprintf("Answer(%d)", a)
}

// AppendAnswer appends one answer line. reason is used for Invalid only;
// its tabs, CRs and LFs become spaces.
func AppendAnswer(dst []byte, a Answer, reason string) []byte {
	dst = append(dst, a.String()...)
	if a == Invalid {
		dst = append(dst, '\t')
		for i := 0; i < len(reason); i++ {
			c := reason[i]
			if c == '\t' || c == '\r' || c == '\n' {
				c = ' '
			}
			dst = append(dst, c)
		}
	}
	return append(dst, '\n')
}

// LineAnswer is one parsed answer line.
type LineAnswer struct {
	Answer Answer
	// Reason is why the line is invalid (Invalid only).
	Reason string
}

// ParseAnswers parses an answer body of want lines. An answer of another
// line count, or a line that is no answer, is an error wrapping ErrBatch
// that names the line.
func ParseAnswers(body []byte, want int) ([]LineAnswer, error) {
	lines, err := SplitLines(body)
	if err != nil {
		return nil, err
	}
	if len(lines) != want {
		return nil, fmt.Errorf("%w: %d answers for %d lines", ErrBatch, len(lines), want)
	}
	out := make([]LineAnswer, len(lines))
	for i, l := range lines {
		word, reason, tab := bytes.Cut(l, []byte{'\t'})
		switch string(word) {
		case "new":
			out[i].Answer = New
		case "present":
			out[i].Answer = Present
		case "absent":
			out[i].Answer = Absent
		case "invalid":
			out[i] = LineAnswer{Answer: Invalid, Reason: string(reason)}
			continue
		default:
			return nil, fmt.Errorf("%w: answer line %d %q", ErrBatch, i+1, l)
		}
		if tab {
			return nil, fmt.Errorf("%w: answer line %d %q", ErrBatch, i+1, l)
		}
	}
	return out, nil
}
