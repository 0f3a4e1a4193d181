package wire

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

// TestDecodeKeys: DecodeKeys decodes the bodies of bare keys of
// testdata/bare.txt to the keys DecodeEntries decodes, and declines the
// others, keeping dst as it was.
func TestDecodeKeys(t *testing.T) {
	for n, line := range tableLines(t, "bare.txt") {
		want, text, _ := strings.Cut(line, " ")
		b, err := hex.DecodeString(strings.ReplaceAll(text, " ", ""))
		if err != nil || (want != "keys" && want != "entries") {
			t.Fatalf("bare.txt:%d: want keys|entries HEX: %q", n, line)
		}
		dst := []hashkey.Hash{{0xaa}}
		got, ok := DecodeKeys(dst, b)
		if ok != (want == "keys") {
			t.Errorf("bare.txt:%d: DecodeKeys(%x) ok = %v, want %v", n, b, ok, !ok)
			continue
		}
		if !ok {
			if !slices.Equal(got, dst) {
				t.Errorf("bare.txt:%d: declined, but dst became %x", n, got)
			}
			continue
		}
		es, err := DecodeEntries(b)
		if err != nil {
			t.Fatalf("bare.txt:%d: DecodeEntries: %v", n, err)
		}
		if len(got) != 1+len(es) || got[0] != dst[0] {
			t.Fatalf("bare.txt:%d: %d keys after dst's one, want %d", n, len(got)-1, len(es))
		}
		for i := range es {
			if got[1+i] != es[i].Hash || es[i].IsPrefix() || es[i].Value.HasTimes() || es[i].Value.Text != nil || es[i].Value.Data != nil {
				t.Errorf("bare.txt:%d: key %d is %x, DecodeEntries %+v", n, i, got[1+i], es[i])
			}
		}
	}
}

// TestDecodeKeysBad: DecodeKeys declines every malformed body of entries
// of testdata/bad.txt (it never accepts what DecodeEntries refuses).
func TestDecodeKeysBad(t *testing.T) {
	for n, line := range tableLines(t, "bad.txt") {
		text, ok := strings.CutPrefix(line, "entries ")
		if !ok {
			continue
		}
		b, err := hex.DecodeString(strings.ReplaceAll(text, " ", ""))
		if err != nil {
			t.Fatalf("bad.txt:%d: %v", n, err)
		}
		if _, ok := DecodeKeys(nil, b); ok {
			t.Errorf("bad.txt:%d: DecodeKeys takes %x", n, b)
		}
	}
}

// TestDecodeKeysAllocs: a batch decoded into a slice with room allocates
// nothing.
func TestDecodeKeysAllocs(t *testing.T) {
	body, _ := AppendEntries(nil, bareBatch(1000))
	dst := make([]hashkey.Hash, 0, 1000)
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := DecodeKeys(dst[:0], body); !ok {
			t.Fatal("declined")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a batch, want 0", allocs)
	}
}

// FuzzDecodeKeys: what DecodeKeys decodes, DecodeEntries decodes to the
// same keys without values.
func FuzzDecodeKeys(f *testing.F) {
	for _, line := range tableLines(f, "bare.txt") {
		_, text, _ := strings.Cut(line, " ")
		b, _ := hex.DecodeString(strings.ReplaceAll(text, " ", ""))
		f.Add(b)
	}
	addGolden(f, "entries", "entry")
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, ok := DecodeKeys(nil, b)
		if !ok {
			return
		}
		es, err := DecodeEntries(b)
		if err != nil || len(es) != len(keys) {
			t.Fatalf("%x: %d keys, but DecodeEntries: %d entries, %v", b, len(keys), len(es), err)
		}
		for i := range es {
			if es[i].Hash != keys[i] || es[i].IsPrefix() || es[i].Value.Text != nil || es[i].Value.Data != nil || es[i].Value.HasTimes() {
				t.Fatalf("%x: key %d %x, entry %+v", b, i, keys[i], es[i])
			}
		}
	})
}
