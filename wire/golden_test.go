package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/internal/golden"
	"github.com/urlhash/urlhash/store"
)

// goldenEntries are the entries of the golden encodings, one per shape of
// the entry encoding.
var goldenEntries = []store.Entry{
	// A full key, no value.
	store.FullEntry(hashkey.Sum([]byte("x")), store.Value{}),
	// A full key with text and data.
	store.FullEntry(hashkey.Sum([]byte("y")), store.Value{Text: []byte("https://example.com/"), Data: []byte{0, 1}}),
	// A 4-byte prefix.
	{Hash: hashkey.Hash{1, 2, 3, 4}, Len: 4},
	// Times: first and last seen (timesFlag).
	store.FullEntry(hashkey.Sum([]byte("z")), store.Value{Data: []byte{1}, FirstSeen: store.Unix(1893456000), LastSeen: store.Unix(1893459600)}),
	// Expires alone sets timesFlag too.
	{Hash: hashkey.Hash{1, 2, 3, 4, 5}, Len: 5, Value: store.Value{Expires: store.Unix(1893456000)}},
	// A text of 200 bytes: a two-byte uvarint length.
	store.FullEntry(hashkey.Sum([]byte("long")), store.Value{Text: bytes.Repeat([]byte("a"), 200)}),
}

// goldenGet is the batch get of the golden "get-answer": two full golden
// entries found, around a hash that is not.
var goldenGet = struct {
	hs    []hashkey.Hash
	vs    []store.Value
	found []bool
}{
	hs:    []hashkey.Hash{goldenEntries[1].Hash, hashkey.Sum([]byte("absent")), goldenEntries[3].Hash},
	vs:    []store.Value{goldenEntries[1].Value, {}, goldenEntries[3].Value},
	found: []bool{true, false, true},
}

// goldenCases name each encoding pinned by testdata/golden.txt.
func goldenCases(t testing.TB) []struct {
	name string
	got  []byte
} {
	entries, err := AppendEntries(nil, goldenEntries)
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	for i := range goldenEntries[:3] {
		stream = store.AppendJSONL(stream, &goldenEntries[i])
	}
	cases := []struct {
		name string
		got  []byte
	}{
		{"entries", entries},
		{"hashes", AppendHashes(nil, []hashkey.Hash{hashkey.Sum([]byte("x")), {0xff}})},
		{"bools", AppendBools(nil, []bool{true, false, false, true})},
		{"get-answer", AppendGetAnswer(nil, goldenGet.hs, goldenGet.vs, goldenGet.found)},
		{"error-body", AppendErrorBody(nil, "bad_request", `server: bad request: "<a&b>" é`)},
		{"stream", AppendStreamEnd(stream)},
		{"stream-error", AppendStreamError(nil, "index: corrupt: \"x\"\n")},
		{"url-lines", must(AppendLines(nil, []string{"https://example.com/", "http://a.b/c?d"}))},
		{"url-answers", AppendAnswer(AppendAnswer(nil, New, ""), Invalid, "bad\tline")},
		{"stats", AppendStats(nil, new(statsSample()))},
	}
	for i := range goldenEntries {
		cases = append(cases, struct {
			name string
			got  []byte
		}{fmt.Sprintf("entry-%d", i), AppendEntry(nil, &goldenEntries[i])})
	}
	return cases
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// tableLines returns the lines of testdata/name with their numbers, less
// comments (#) and blank lines: the tables of the tests.
func tableLines(t testing.TB, name string) iter.Seq2[int, string] {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return func(yield func(int, string) bool) {
		for n, line := range strings.Split(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if !yield(n+1, line) {
				return
			}
		}
	}
}

// readGolden reads testdata/golden.txt: "NAME HEX" lines.
func readGolden(t testing.TB) map[string][]byte {
	want := map[string][]byte{}
	for n, line := range tableLines(t, "golden.txt") {
		name, h, ok := strings.Cut(line, " ")
		b, err := hex.DecodeString(h)
		if !ok || err != nil {
			t.Fatalf("golden.txt:%d: want NAME HEX: %q", n, line)
		}
		want[name] = b
	}
	return want
}

// TestGolden pins every encoding byte for byte: a change of one byte in
// any of them fails here (rewrite with -update only for a new protocol
// version).
func TestGolden(t *testing.T) {
	cases := goldenCases(t)
	if golden.Update() {
		var b strings.Builder
		b.WriteString("# The wire encodings, byte for byte (go test ./wire -update rewrites this).\n")
		for _, c := range cases {
			fmt.Fprintf(&b, "%s %x\n", c.name, c.got)
		}
		if err := os.WriteFile("testdata/golden.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readGolden(t)
	if len(want) != len(cases) {
		t.Errorf("golden.txt has %d encodings, the test makes %d", len(want), len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, ok := want[c.name]
			if !ok {
				t.Fatalf("not in golden.txt")
			}
			if !bytes.Equal(c.got, w) {
				t.Errorf("encoding\n got %x\nwant %x", c.got, w)
			}
		})
	}
}

// TestGoldenDecode: the golden bytes decode to the values they encode.
func TestGoldenDecode(t *testing.T) {
	want := readGolden(t)
	es, err := DecodeEntries(want["entries"])
	if err != nil || len(es) != len(goldenEntries) {
		t.Fatalf("DecodeEntries(golden) = %d entries, %v", len(es), err)
	}
	for i := range es {
		if !sameEntry(es[i], goldenEntries[i]) {
			t.Errorf("entry %d: %+v, want %+v", i, es[i], goldenEntries[i])
		}
		e, rest, err := DecodeEntry(want[fmt.Sprintf("entry-%d", i)])
		if err != nil || len(rest) != 0 || !sameEntry(e, goldenEntries[i]) {
			t.Errorf("DecodeEntry(entry-%d) = %+v, rest %x, %v", i, e, rest, err)
		}
	}
	hs, err := ParseHashes(want["hashes"])
	if err != nil || !slices.Equal(hs, []hashkey.Hash{hashkey.Sum([]byte("x")), {0xff}}) {
		t.Errorf("ParseHashes(golden) = %v, %v", hs, err)
	}
	bs, err := ParseBools(want["bools"], 4)
	if err != nil || !slices.Equal(bs, []bool{true, false, false, true}) {
		t.Errorf("ParseBools(golden) = %v, %v", bs, err)
	}
	kind, msg, err := ParseErrorBody(want["error-body"])
	if err != nil || kind != "bad_request" || msg != `server: bad request: "<a&b>" é` {
		t.Errorf("ParseErrorBody(golden) = %q, %q, %v", kind, msg, err)
	}
	var got []store.Entry
	err = ReadStream(bytes.NewReader(want["stream"]), func(e store.Entry) error {
		e.Value.Text, e.Value.Data = bytes.Clone(e.Value.Text), bytes.Clone(e.Value.Data)
		got = append(got, e)
		return nil
	})
	if err != nil || len(got) != 3 {
		t.Fatalf("ReadStream(golden) = %d entries, %v", len(got), err)
	}
	for i := range got {
		if !sameEntry(got[i], goldenEntries[i]) {
			t.Errorf("stream entry %d: %+v, want %+v", i, got[i], goldenEntries[i])
		}
	}
	var se *StreamError
	err = ReadStream(bytes.NewReader(want["stream-error"]), func(store.Entry) error { return nil })
	if !errors.As(err, &se) || se.Msg != "index: corrupt: \"x\"\n" {
		t.Errorf("ReadStream(stream-error) = %v, want the StreamError", err)
	}
}

func sameEntry(a, b store.Entry) bool {
	return a.Len == b.Len && bytes.Equal(a.Key(), b.Key()) &&
		bytes.Equal(a.Value.Text, b.Value.Text) && bytes.Equal(a.Value.Data, b.Value.Data) &&
		a.Value.FirstSeen.Equal(b.Value.FirstSeen) && a.Value.LastSeen.Equal(b.Value.LastSeen) &&
		a.Value.Expires.Equal(b.Value.Expires)
}
