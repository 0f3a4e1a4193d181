package urlhash

import (
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

// FuzzCanonical checks, for any input: no panic; the canonical form
// reparses to itself (idempotence); the fast path, when it accepts the
// input, agrees with the full parser; and the hash's text forms
// round-trip. FuzzAgainstReference compares with whatwg-url.
func FuzzCanonical(f *testing.F) {
	for _, c := range loadWPTURLCases(f) {
		f.Add(c.Input)
	}
	lines := readCorpus(f)
	for i := 0; i < len(lines); i += 500 {
		f.Add(lines[i])
	}
	for _, p := range mutationPieces {
		f.Add("http://" + p + "/")
		f.Add("https://example.com/" + p + "?" + p + "#" + p)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := appendWHATWG(nil, in, false)
		checkFastAgrees(t, in)
		if err == nil {
			again, err2 := appendWHATWG(nil, string(got), false)
			if err2 != nil || string(again) != string(got) {
				t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, got, again, err2)
			}
			h, err := Default.Hash(in)
			if err != nil {
				t.Fatalf("Hash(%q): %v", in, err)
			}
			if h != hashkey.Sum(got) {
				t.Fatalf("Hash(%q) = %v, want Sum(%q)", in, h, got)
			}
			for _, text := range []string{h.String(), h.Decimal()} {
				if h2, err := hashkey.ParseHash(text); err != nil || h2 != h {
					t.Fatalf("ParseHash(%q) = %v, %v, want %v", text, h2, err, h)
				}
			}
		}
	})
}

// FuzzFastPath holds the fast path to the full parser on inputs near the
// common case (seeded from the derived corpus).
func FuzzFastPath(f *testing.F) {
	for _, s := range derivedCorpus(readCorpus(f), 300) {
		f.Add(s, false)
	}
	f.Add("http://a.b:0080/%2e%2E/x?'#`", true)
	f.Add("https://xn--a.b/", false)
	f.Add("http://a.1./", false)
	f.Fuzz(func(t *testing.T, in string, drop bool) {
		fast, ok := appendFast(nil, in, drop)
		full, err := appendFull(nil, in, drop)
		if ok && (err != nil || string(fast) != string(full)) {
			t.Fatalf("fast %q (drop %v) = %q, full = %q, %v", in, drop, fast, full, err)
		}
		if !ok && len(fast) != 0 {
			t.Fatalf("fast path declined %q but wrote %q", in, fast)
		}
		if got, gerr := appendWHATWG(nil, in, drop); (gerr == nil) != (err == nil) || string(got) != string(full) {
			t.Fatalf("appendWHATWG(%q) = %q, %v; full = %q, %v", in, got, gerr, full, err)
		}
	})
}
