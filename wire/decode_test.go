package wire

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// decoders are the decoders of testdata/bad.txt, by name.
var decoders = map[string]func([]byte) error{
	"entries": func(b []byte) error { _, err := DecodeEntries(b); return err },
	"hashes":  func(b []byte) error { _, err := ParseHashes(b); return err },
	"bools":   func(b []byte) error { _, err := ParseBools(b, 2); return err },
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
	f, err := os.Open("testdata/bad.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, text, _ := strings.Cut(line, " ")
		decode, ok := decoders[name]
		if !ok {
			t.Fatalf("bad.txt:%d: no decoder %q", n, name)
		}
		var in []byte
		if strings.HasPrefix(text, `"`) {
			s, err := strconv.Unquote(text)
			if err != nil {
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
