package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// addGolden seeds f with the golden encoding name (and, for a body of
// entries, each entry alone).
func addGolden(f *testing.F, names ...string) {
	want := readGolden(f)
	for _, n := range names {
		for name, b := range want {
			if name == n || strings.HasPrefix(name, n+"-") {
				f.Add(b)
			}
		}
	}
}

// FuzzDecodeEntries: the entry decoder never panics, and what decodes
// encodes to bytes that decode to the same entries.
func FuzzDecodeEntries(f *testing.F) {
	addGolden(f, "entries", "entry")
	f.Add([]byte{4, 1, 2, 3, 4, 0, 0})
	f.Add([]byte{4 | timesFlag, 1, 2, 3, 4, 0, 0, 2, 2, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := DecodeEntries(b)
		if err != nil {
			return
		}
		back, err := AppendEntries(nil, es)
		if err != nil {
			t.Fatalf("%x decodes to entries that do not encode: %v", b, err)
		}
		// Lengths may be written in a longer uvarint form than ours.
		again, err := DecodeEntries(back)
		if err != nil || len(again) != len(es) {
			t.Fatalf("%x decodes to %d entries, whose encoding %x decodes to %v, %v", b, len(es), back, again, err)
		}
		for i := range es {
			if !sameEntry(es[i], again[i]) {
				t.Fatalf("entry %d: %+v, after a round trip %+v", i, es[i], again[i])
			}
		}
	})
}

// FuzzParseHashes: whole hashes decode and encode back to the body.
func FuzzParseHashes(f *testing.F) {
	addGolden(f, "hashes")
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, err := ParseHashes(b)
		if err != nil {
			return
		}
		if back := AppendHashes(nil, hs); !bytes.Equal(back, b) {
			t.Fatalf("%x: round trip %x", b, back)
		}
	})
}

// FuzzParseBools: an answer decodes only when it is one 0 or 1 per
// question, and then encodes back to itself.
func FuzzParseBools(f *testing.F) {
	addGolden(f, "bools")
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, b []byte) {
		bs, err := ParseBools(b, len(b))
		if err != nil {
			if !bytes.ContainsFunc(b, func(r rune) bool { return r > 1 }) {
				t.Fatalf("%x refused: %v", b, err)
			}
			return
		}
		if back := AppendBools(nil, bs); !bytes.Equal(back, b) {
			t.Fatalf("%x: round trip %x", b, back)
		}
	})
}

// FuzzParseErrorBody: what decodes encodes to a body that decodes the
// same.
func FuzzParseErrorBody(f *testing.F) {
	addGolden(f, "error-body")
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, msg, err := ParseErrorBody(b)
		if err != nil {
			return
		}
		k2, m2, err := ParseErrorBody(AppendErrorBody(nil, kind, msg))
		if err != nil || k2 != kind || m2 != msg {
			t.Fatalf("%q: %q %q, after a round trip %q %q, %v", b, kind, msg, k2, m2, err)
		}
	})
}

// FuzzReadStream: the stream reader never panics, stops at the end
// record, and the entries it reads encode to a stream it reads the same.
func FuzzReadStream(f *testing.F) {
	addGolden(f, "stream")
	f.Add([]byte("{\"end\":true}\n"))
	f.Add([]byte("{\"key\":\"0102030405\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var es []store.Entry
		err := ReadStream(bytes.NewReader(b), func(e store.Entry) error {
			e.Value.Text, e.Value.Data = bytes.Clone(e.Value.Text), bytes.Clone(e.Value.Data)
			es = append(es, e)
			return nil
		})
		if err != nil {
			return
		}
		var back []byte
		for i := range es {
			back = store.AppendJSONL(back, &es[i])
		}
		back = AppendStreamEnd(back)
		n := 0
		err = ReadStream(bytes.NewReader(back), func(e store.Entry) error {
			if n >= len(es) || !sameEntry(e, es[n]) {
				t.Fatalf("%q: entry %d differs after a round trip", b, n)
			}
			n++
			return nil
		})
		if err != nil || n != len(es) {
			t.Fatalf("%q: round trip read %d of %d entries: %v", b, n, len(es), err)
		}
	})
}

// FuzzParseGetAnswer: the batch get's answer decoder never panics, and
// what decodes (for the golden question) encodes to an answer that
// decodes to the same values.
func FuzzParseGetAnswer(f *testing.F) {
	addGolden(f, "get-answer")
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		hs := goldenGet.hs
		vs, found, err := ParseGetAnswer(b, hs)
		if err != nil {
			return
		}
		back := AppendGetAnswer(nil, hs, vs, found)
		vs2, found2, err := ParseGetAnswer(back, hs)
		if err != nil {
			t.Fatalf("%x decodes to an answer whose encoding %x does not: %v", b, back, err)
		}
		for i := range hs {
			if found[i] != found2[i] || !sameEntry(store.FullEntry(hs[i], vs[i]), store.FullEntry(hs[i], vs2[i])) {
				t.Fatalf("%x: hash %d: %v %+v, after a round trip %v %+v", b, i, found[i], vs[i], found2[i], vs2[i])
			}
		}
	})
}
