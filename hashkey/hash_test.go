package hashkey

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// seedVectors are the url-hash README's table, with digests and words.
type seedVectors struct {
	Cases []struct {
		Input     string    `json:"input"`
		Canonical string    `json:"canonical"`
		Rule      int       `json:"rule"`
		SHA256    string    `json:"sha256_hex"`
		Words     [4]string `json:"words_le"`
		Short     [2]string `json:"short_words_le"`
		VeryShort string    `json:"very_short"`
	} `json:"cases"`
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestSeedWordsAndForms(t *testing.T) {
	var vs seedVectors
	readJSON(t, "testdata/urlhash_seed.json", &vs)
	if len(vs.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range vs.Cases {
		t.Run(tc.Input, func(t *testing.T) {
			got := Sum([]byte(tc.Canonical))
			if got.String() != tc.SHA256 {
				t.Fatalf("Sum(%q) = %s, want %s", tc.Canonical, got, tc.SHA256)
			}
			if d := got.Decimal(); d != strings.Join(tc.Words[:], "-") {
				t.Errorf("Decimal() = %s, want %s", d, strings.Join(tc.Words[:], "-"))
			}
			if d := got.Short().Decimal(); d != strings.Join(tc.Short[:], "-") {
				t.Errorf("Short().Decimal() = %s, want %s", d, strings.Join(tc.Short[:], "-"))
			}
			if d := got.VeryShort().Decimal(); d != tc.VeryShort {
				t.Errorf("VeryShort().Decimal() = %s, want %s", d, tc.VeryShort)
			}
			if !got.StartsWith(got.Short()) || !got.StartsWithJust(got.VeryShort()) || !got.Short().StartsWith(got.VeryShort()) {
				t.Error("a hash does not start with its own short forms")
			}
			if HashFromWords(got.Words()) != got {
				t.Error("HashFromWords(Words()) does not round-trip")
			}
			for _, text := range []string{got.String(), strings.ToUpper(got.String()), got.Decimal()} {
				back, err := ParseHash(text)
				if err != nil || back != got {
					t.Errorf("ParseHash(%q) = %v, %v; want %v", text, back, err, got)
				}
			}
			s, err := ParseShort(got.Short().Decimal())
			if err != nil || s != got.Short() {
				t.Errorf("ParseShort(decimal) = %v, %v", s, err)
			}
		})
	}
}

func TestSHA256Prefixes(t *testing.T) {
	var vs struct {
		Cases []struct {
			Input       string `json:"input"`
			InputRepeat *struct {
				Char  string `json:"char"`
				Count int    `json:"count"`
			} `json:"input_repeat"`
			SHA256     string `json:"sha256_hex"`
			PrefixBits int    `json:"prefix_bits"`
			WantPrefix string `json:"want_prefix_hex"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/sha256_prefixes.json", &vs)
	for _, tc := range vs.Cases {
		in := tc.Input
		if tc.InputRepeat != nil {
			in = strings.Repeat(tc.InputRepeat.Char, tc.InputRepeat.Count)
		}
		h := Sum([]byte(in))
		if h.String() != tc.SHA256 {
			t.Errorf("Sum(%.20q) = %s, want %s", in, h, tc.SHA256)
		}
		want, _ := hex.DecodeString(tc.WantPrefix)
		if got := h[:tc.PrefixBits/8]; !bytes.Equal(got, want) || !h.HasPrefix(want) {
			t.Errorf("prefix of %d bits = %x, want %x", tc.PrefixBits, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"", "zz", strings.Repeat("g", 64), strings.Repeat("a", 63), "1-2-3", "1-2-3-4-5",
		"1--2-3", "-1-2-3", "1-2-3-", "18446744073709551616-0-0-0", "+1-2-3-4", " 1-2-3-4",
	} {
		_, err := ParseHash(in)
		var te *TextError
		if !errors.As(err, &te) || te.Input != in {
			t.Errorf("ParseHash(%q) error = %v, want a *TextError naming the input", in, err)
		}
	}
	if _, err := ParseVeryShort("1-2"); err == nil {
		t.Error("ParseVeryShort accepted two words")
	}
	var h Hash
	if err := h.UnmarshalBinary(make([]byte, 31)); err == nil {
		t.Error("UnmarshalBinary accepted 31 bytes")
	}
}

func TestTextMarshalRoundTrip(t *testing.T) {
	h := Sum([]byte("https://example.com/"))
	b, err := json.Marshal(struct{ H Hash }{h})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"H":"` + h.String() + `"}`; string(b) != want {
		t.Fatalf("json = %s, want %s", b, want)
	}
	var back struct{ H Hash }
	if err := json.Unmarshal(b, &back); err != nil || back.H != h {
		t.Fatalf("json round trip = %v, %v", back.H, err)
	}
	bin, _ := h.MarshalBinary()
	var h2 Hash
	if err := h2.UnmarshalBinary(bin); err != nil || h2 != h {
		t.Fatalf("binary round trip = %v, %v", h2, err)
	}
}

func TestDigestCompat(t *testing.T) {
	// url-hash 0.1.0 truncates SHA-384; SHA-384("abc") is cb00753f...
	got := TruncatedSHA384.Sum([]byte("abc"))
	if want := "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"; got.String() != want {
		t.Errorf("TruncatedSHA384.Sum(abc) = %s, want %s", got, want)
	}
	for _, name := range []string{"sha256", "url-hash-0.1.0"} {
		d, err := ParseDigest(name)
		if err != nil || d.String() != name {
			t.Errorf("ParseDigest(%q) = %v, %v", name, d, err)
		}
	}
	if _, err := ParseDigest("md5"); err == nil {
		t.Error("ParseDigest(md5) succeeded")
	}
}

func TestAllocations(t *testing.T) {
	h := Sum([]byte("x"))
	var buf [128]byte
	if n := testing.AllocsPerRun(100, func() {
		_ = h.AppendDecimal(buf[:0])
		_ = h.Words()
		_ = h.StartsWithJust(h.VeryShort())
	}); n != 0 {
		t.Errorf("got %v allocs, want 0", n)
	}
}

// FuzzParseHash: the text-form parsers never panic, and whatever parses
// prints back in both forms and parses to the same value.
func FuzzParseHash(f *testing.F) {
	h := Sum([]byte("https://example.com/"))
	for _, s := range []string{h.String(), h.Decimal(), h.Short().Decimal(), h.VeryShort().Decimal(), "", "1-2-3-4", "18446744073709551616-0-0-0", "--", strings.Repeat("f", 16)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if h, err := ParseHash(s); err == nil {
			for _, text := range []string{h.String(), h.Decimal()} {
				if back, err := ParseHash(text); err != nil || back != h {
					t.Fatalf("ParseHash(%q) = %v; %q parses to %v, %v", s, h, text, back, err)
				}
			}
		}
		if v, err := ParseShort(s); err == nil {
			if back, err := ParseShort(v.Decimal()); err != nil || back != v {
				t.Fatalf("ParseShort(%q) = %v; its decimal form parses to %v, %v", s, v, back, err)
			}
		}
		if v, err := ParseVeryShort(s); err == nil {
			// A 16-digit decimal word reads as hex, so only the hex form
			// must round-trip.
			if back, err := ParseVeryShort(v.String()); err != nil || back != v {
				t.Fatalf("ParseVeryShort(%q) = %v; its hex form parses to %v, %v", s, v, back, err)
			}
		}
	})
}
