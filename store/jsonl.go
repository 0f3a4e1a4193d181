package store

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/urlhash/urlhash/hashkey"
)

// JSONL is the portable, lossless export format of an index: one JSON
// object per line, in key order. The first line is a header naming the
// format and the profile the index records; every other line is an entry:
//
//	{"urlhash_export":1,"profile":"urlhash+sha256"}
//	{"key":"0f115db0…e9d7","text":"https://example.com/"}
//	{"key":"26da70a9","data":"0102"}
//
// key is the hex of the entry's key: 64 digits for a full entry, 8..62 for
// a prefix entry. text is the stored text when it is valid UTF-8, else
// text_hex holds its bytes; data is the caller bytes in hex; first_seen,
// last_seen and expires are the value's times in RFC 3339 (UTC, whole
// seconds). Empty parts are left out. Exporting, importing and exporting again gives the same
// bytes, whatever the backend.
const JSONLVersion = 1

// ErrJSONL is returned, wrapped with the line number, for a line that is
// not a JSONL header or entry. Use errors.Is.
var ErrJSONL = errors.New("store: invalid jsonl")

type jsonlHeader struct {
	Version int    `json:"urlhash_export"`
	Profile string `json:"profile,omitempty"`
}

type jsonlEntry struct {
	Key     string  `json:"key"`
	Text    *string `json:"text,omitempty"`
	TextHex string  `json:"text_hex,omitempty"`
	Data    string  `json:"data,omitempty"`
	// Times in RFC 3339, UTC, to the second.
	FirstSeen string `json:"first_seen,omitempty"`
	LastSeen  string `json:"last_seen,omitempty"`
	Expires   string `json:"expires,omitempty"`
}

// AppendJSONLHeader appends the header line for an index recording
// profile.
func AppendJSONLHeader(dst []byte, profile string) []byte {
	return appendJSONLine(dst, jsonlHeader{Version: JSONLVersion, Profile: profile})
}

// AppendJSONL appends e as one JSONL entry line.
func AppendJSONL(dst []byte, e *Entry) []byte {
	je := jsonlEntry{Key: hex.EncodeToString(e.Key())}
	if t := e.Value.Text; len(t) > 0 {
		if utf8.Valid(t) {
			s := string(t)
			je.Text = &s
		} else {
			je.TextHex = hex.EncodeToString(t)
		}
	}
	if len(e.Value.Data) > 0 {
		je.Data = hex.EncodeToString(e.Value.Data)
	}
	je.FirstSeen = jsonlTime(e.Value.FirstSeen)
	je.LastSeen = jsonlTime(e.Value.LastSeen)
	je.Expires = jsonlTime(e.Value.Expires)
	return appendJSONLine(dst, je)
}

func appendJSONLine(dst []byte, v any) []byte {
	b := bytes.NewBuffer(dst)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // plain structs of strings always encode
	}
	return b.Bytes()
}

// ParseJSONLHeader reads a header line, returning the profile it names.
func ParseJSONLHeader(line []byte) (profile string, err error) {
	var h jsonlHeader
	if err := strictUnmarshal(line, &h); err != nil || h.Version == 0 {
		return "", fmt.Errorf("%w: not a urlhash export header", ErrJSONL)
	}
	if h.Version > JSONLVersion {
		return "", fmt.Errorf("%w: export version %d, this program reads up to %d", ErrFormat, h.Version, JSONLVersion)
	}
	return h.Profile, nil
}

// ParseJSONL reads one entry line.
func ParseJSONL(line []byte) (Entry, error) {
	var je jsonlEntry
	if err := strictUnmarshal(line, &je); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrJSONL, err)
	}
	var e Entry
	n := hex.DecodedLen(len(je.Key))
	if len(je.Key)%2 != 0 || n > hashkey.Size {
		return Entry{}, fmt.Errorf("%w: key %q: want 8..64 hex digits", ErrJSONL, je.Key)
	}
	if _, err := hex.Decode(e.Hash[:n], []byte(je.Key)); err != nil {
		return Entry{}, fmt.Errorf("%w: key %q: %v", ErrJSONL, je.Key, err)
	}
	e.Len = n
	if err := e.Check(); err != nil || n == 0 {
		return Entry{}, fmt.Errorf("%w: key %q: %d bytes, want %d..%d or %d", ErrJSONL, je.Key, n, MinPrefixEntryLen, MaxPrefixEntryLen, hashkey.Size)
	}
	switch {
	case je.Text != nil && je.TextHex != "":
		return Entry{}, fmt.Errorf("%w: both text and text_hex", ErrJSONL)
	case je.Text != nil:
		e.Value.Text = []byte(*je.Text)
	case je.TextHex != "":
		t, err := hex.DecodeString(je.TextHex)
		if err != nil {
			return Entry{}, fmt.Errorf("%w: text_hex: %v", ErrJSONL, err)
		}
		e.Value.Text = t
	}
	if je.Data != "" {
		d, err := hex.DecodeString(je.Data)
		if err != nil {
			return Entry{}, fmt.Errorf("%w: data: %v", ErrJSONL, err)
		}
		e.Value.Data = d
	}
	for _, f := range []struct {
		name string
		in   string
		out  *time.Time
	}{{"first_seen", je.FirstSeen, &e.Value.FirstSeen}, {"last_seen", je.LastSeen, &e.Value.LastSeen}, {"expires", je.Expires, &e.Value.Expires}} {
		if f.in == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, f.in)
		if err != nil {
			return Entry{}, fmt.Errorf("%w: %s: %v", ErrJSONL, f.name, err)
		}
		*f.out = Unix(t.Unix())
	}
	if err := e.Value.Check(); err != nil {
		return Entry{}, fmt.Errorf("%w: %w", ErrJSONL, err)
	}
	return e, nil
}

// jsonlTime formats t for JSONL ("" for the zero time).
func jsonlTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// strictUnmarshal decodes exactly one JSON object with no unknown fields,
// so that a newer export's field is an error rather than silently lost.
func strictUnmarshal(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}
