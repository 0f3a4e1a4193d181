package safebrowsing

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

// TestSHA256Prefixes checks the FIPS 180-2 examples of the documents: the
// full SHA-256 and its truncated prefixes.
func TestSHA256Prefixes(t *testing.T) {
	var vec struct {
		Cases []struct {
			Input       string `json:"input"`
			InputRepeat *struct {
				Char  string `json:"char"`
				Count int    `json:"count"`
			} `json:"input_repeat"`
			SHA256Hex     string `json:"sha256_hex"`
			PrefixBits    int    `json:"prefix_bits"`
			WantPrefixHex string `json:"want_prefix_hex"`
		} `json:"cases"`
	}
	readJSON(t, "sha256_prefixes.json", &vec)
	if len(vec.Cases) != 3 {
		t.Fatalf("got %d cases, want 3", len(vec.Cases))
	}
	for _, tc := range vec.Cases {
		in := tc.Input
		if tc.InputRepeat != nil {
			in = strings.Repeat(tc.InputRepeat.Char, tc.InputRepeat.Count)
		}
		h := hashkey.Sum([]byte(in))
		if got := hex.EncodeToString(h[:]); got != tc.SHA256Hex {
			t.Errorf("Sum(%.10q...) = %s, want %s", in, got, tc.SHA256Hex)
		}
		p, err := Prefix(h, tc.PrefixBits/8)
		if got := hex.EncodeToString(p); err != nil || got != tc.WantPrefixHex {
			t.Errorf("Prefix(%.10q..., %d) = %s, %v; want %s", in, tc.PrefixBits/8, got, err, tc.WantPrefixHex)
		}
	}
}

func TestPrefixLengths(t *testing.T) {
	h := hashkey.Hash(sha256.Sum256([]byte("abc")))
	for n := -1; n <= 40; n++ {
		p, err := Prefix(h, n)
		if n < MinPrefixLen || n > MaxPrefixLen {
			if !errors.Is(err, ErrPrefixLength) || p != nil {
				t.Errorf("Prefix(h, %d) = %x, %v; want ErrPrefixLength", n, p, err)
			}
			continue
		}
		if err != nil || string(p) != string(h[:n]) {
			t.Errorf("Prefix(h, %d) = %x, %v; want %x", n, p, err, h[:n])
		}
		if !h.HasPrefix(p) {
			t.Errorf("h.HasPrefix(Prefix(h, %d)) = false", n)
		}
	}
}
