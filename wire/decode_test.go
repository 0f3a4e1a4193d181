package wire

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// decoders are the decoders of testdata/bad.txt, by name.
var decoders = map[string]func([]byte) error{
	"entries": func(b []byte) error { _, err := DecodeEntries(b); return err },
	"hashes":  func(b []byte) error { _, err := ParseHashes(b); return err },
	"bools":   func(b []byte) error { _, err := ParseBools(b, 2); return err },
	"get-answer": func(b []byte) error {
		_, _, err := ParseGetAnswer(b, []hashkey.Hash{{1}, {2}})
		return err
	},
	"error-body": func(b []byte) error {
		_, _, err := ParseErrorBody(b)
		return err
	},
	"stream": func(b []byte) error {
		return ReadStream(bytes.NewReader(b), func(store.Entry) error { return nil })
	},
}

// TestBadInputs: every malformed input of testdata/bad.txt is an error.
func TestBadInputs(t *testing.T) {
	for n, line := range tableLines(t, "bad.txt") {
		name, text, _ := strings.Cut(line, " ")
		decode, ok := decoders[name]
		if !ok {
			t.Fatalf("bad.txt:%d: no decoder %q", n, name)
		}
		var in []byte
		var err error
		if strings.HasPrefix(text, `"`) {
			var s string
			if s, err = strconv.Unquote(text); err != nil {
				t.Fatalf("bad.txt:%d: %v", n, err)
			}
			in = []byte(s)
		} else if in, err = hex.DecodeString(strings.ReplaceAll(text, " ", "")); err != nil {
			t.Fatalf("bad.txt:%d: %v", n, err)
		}
		if err := decode(in); err == nil {
			t.Errorf("bad.txt:%d: %s %q decodes", n, name, in)
		}
	}
}
