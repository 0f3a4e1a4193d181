package pgindex

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

// FuzzKeyRange checks the key range of a bit prefix against the
// definition (see TestKeyRangeAgreesWithBits).
func FuzzKeyRange(f *testing.F) {
	f.Add([]byte{0xab, 0xcd}, 12, []byte{0xab, 0xc1, 2, 3})
	f.Add([]byte{0xff, 0xff}, 16, []byte{0xff, 0xff, 0, 0})
	f.Add([]byte{1, 2, 3, 4, 0xff}, 40, []byte{1, 2, 3, 5})
	f.Add([]byte{}, 0, []byte{})
	f.Fuzz(func(t *testing.T, prefix []byte, bits int, key []byte) {
		if bits < 0 || bits > 256 || len(prefix)*8 < bits || len(key) > 32 {
			return
		}
		lo, hi, nbytes := keyRange(prefix, bits)
		got := len(key) >= nbytes && bytes.Compare(key, lo) >= 0 && bytes.Compare(key, hi) < 0
		if want := hasBitPrefix(key, prefix, bits); got != want {
			t.Fatalf("key %x, prefix %x/%d: in [%x, %x) = %v, bit prefix = %v", key, prefix, bits, lo, hi, got, want)
		}
	})
}

// FuzzRedact checks that a password never survives Redact, in a URL or a
// keyword/value string.
func FuzzRedact(f *testing.F) {
	f.Add("s3cret-pw")
	f.Add("p@ss:word/with?odd#chars")
	f.Add("x'y z")
	f.Fuzz(func(t *testing.T, pw string) {
		if len(pw) < 6 || strings.Contains("xxxxx", pw) {
			return
		}
		u := "postgres://" + url.UserPassword("crawler", pw).String() + "@db.example:5432/urlhash?sslmode=disable"
		if got := Redact(u); strings.Contains(got, pw) || strings.Contains(got, url.PathEscape(pw)) ||
			strings.Contains(got, url.QueryEscape(pw)) {
			t.Fatalf("Redact(%q) = %q keeps the password", u, got)
		}
		if strings.ContainsAny(pw, " '\\\t\n\r\v\f") {
			return
		}
		kv := "host=db.example password=" + pw + " dbname=urlhash"
		if got := Redact(kv); strings.Contains(got, pw) {
			t.Fatalf("Redact(%q) = %q keeps the password", kv, got)
		}
	})
}
