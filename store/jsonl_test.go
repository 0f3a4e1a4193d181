package store

import (
	"bytes"
	"errors"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

func TestJSONLRoundTrip(t *testing.T) {
	full := hashkey.Sum([]byte("https://example.com/"))
	for _, e := range []Entry{
		FullEntry(full, Value{}),
		FullEntry(full, Value{Text: []byte("https://example.com/")}),
		FullEntry(full, Value{Text: []byte("http://a/\xff\xfe"), Data: []byte{0, 1, 2}}), // text not UTF-8
		FullEntry(full, Value{Text: []byte("<a & b>\t\"q\"\n")}),                         // escapes, no HTML escaping
		{Hash: hashkey.Hash{0x26, 0xda, 0x70, 0xa9}, Len: 4, Value: Value{Data: []byte("x")}},
		{Hash: full, Len: 31},
		// times: seen, expiring, both
		FullEntry(full, Value{FirstSeen: Unix(1893456000), LastSeen: Unix(1893459600)}),
		{Hash: full, Len: 8, Value: Value{Expires: Unix(1893456000)}},
		FullEntry(full, Value{Text: []byte("u"), FirstSeen: Unix(1893456000), LastSeen: Unix(1893456000), Expires: Unix(1893459600)}),
	} {
		line := AppendJSONL(nil, &e)
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("AppendJSONL = %q: want one line", line)
		}
		got, err := ParseJSONL(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			t.Fatalf("ParseJSONL(%q): %v", line, err)
		}
		want := e
		if !want.IsPrefix() {
			want.Len = hashkey.Size
		} else {
			clear(want.Hash[want.Len:])
		}
		if got.Hash != want.Hash || got.Len != want.Len || !bytes.Equal(got.Value.Text, want.Value.Text) || !bytes.Equal(got.Value.Data, want.Value.Data) || !sameTimes(got.Value, want.Value) {
			t.Fatalf("round trip of %+v = %+v (line %q)", want, got, line)
		}
		if again := AppendJSONL(nil, &got); !bytes.Equal(again, line) {
			t.Fatalf("second encoding %q differs from %q", again, line)
		}
	}
}

func TestJSONLErrors(t *testing.T) {
	for _, line := range []string{
		``, `{}`, `[1]`, `{"key":"zz"}`, `{"key":"0102"}`, `{"key":"` + string(bytes.Repeat([]byte("a"), 66)) + `"}`,
		`{"key":"01020304","expires":5}`, `{"key":"01020304","text":"a","text_hex":"61"}`,
		`{"key":"01020304","data":"x"}`, `{"key":"01020304"} {"key":"01020304"}`,
		`{"key":"01020304","expires":"2030-01-01"}`, `{"key":"01020304","last_seen":"yesterday"}`,
	} {
		if _, err := ParseJSONL([]byte(line)); !errors.Is(err, ErrJSONL) {
			t.Errorf("ParseJSONL(%q) = %v, want ErrJSONL", line, err)
		}
	}
	h := AppendJSONLHeader(nil, "urlhash+sha256")
	if p, err := ParseJSONLHeader(bytes.TrimSpace(h)); err != nil || p != "urlhash+sha256" {
		t.Errorf("header round trip = %q, %v", p, err)
	}
	if _, err := ParseJSONLHeader([]byte(`{"urlhash_export":99}`)); !errors.Is(err, ErrFormat) {
		t.Errorf("newer header: %v, want ErrFormat", err)
	}
	if _, err := ParseJSONLHeader([]byte(`{"key":"01020304"}`)); !errors.Is(err, ErrJSONL) {
		t.Errorf("entry as header: %v, want ErrJSONL", err)
	}
}

// FuzzParseJSONL: never panics; what parses encodes and parses back to
// itself.
func FuzzParseJSONL(f *testing.F) {
	for _, s := range []string{`{"key":"26da70a9","data":"0102"}`, `{"key":"` + hashkey.Sum(nil).String() + `","text":"x"}`, `{"key":"01020304","text_hex":"ff"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"key":"01020304","first_seen":"2030-01-01T00:00:00Z","last_seen":"2030-01-01T01:00:00+01:00","expires":"1970-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseJSONL(line)
		if err != nil {
			return
		}
		enc := AppendJSONL(nil, &e)
		back, err := ParseJSONL(bytes.TrimSuffix(enc, []byte("\n")))
		if err != nil || back.Hash != e.Hash || back.Len != e.Len || !bytes.Equal(back.Value.Text, e.Value.Text) || !bytes.Equal(back.Value.Data, e.Value.Data) || !sameTimes(back.Value, e.Value) {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", line, e, enc, back, err)
		}
	})
}

func sameTimes(a, b Value) bool {
	return a.FirstSeen.Equal(b.FirstSeen) && a.LastSeen.Equal(b.LastSeen) && a.Expires.Equal(b.Expires)
}
