package iri

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

type iriCase struct {
	Rule   string `json:"rule"`
	IRI    string `json:"iri"`
	Valid  bool   `json:"valid"`
	Reason string `json:"reason"`
}

func readCases(t testing.TB) []iriCase {
	t.Helper()
	b, err := os.ReadFile("testdata/iri.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []iriCase }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) == 0 {
		t.Fatal("no cases")
	}
	return doc.Cases
}

func TestCheck(t *testing.T) {
	for _, tc := range readCases(t) {
		t.Run(tc.Rule+"/"+tc.IRI, func(t *testing.T) {
			err := Check(tc.IRI)
			if tc.Valid {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want valid", tc.IRI, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Check(%q) = %v, want an *Error", tc.IRI, err)
			}
			if tc.Reason != "" && e.Err.Error() != tc.Reason {
				t.Fatalf("Check(%q) = %v, want reason %q", tc.IRI, err, tc.Reason)
			}
			if e.At < 0 || e.At > len(tc.IRI) {
				t.Fatalf("Check(%q): position %d outside the input", tc.IRI, e.At)
			}
		})
	}
}

func TestHashIsOfTheTextAsWritten(t *testing.T) {
	a, err := IRI.Hash("HTTP://EXAMPLE.ORG:80/~bob/")
	if err != nil {
		t.Fatal(err)
	}
	b, err := IRI.Hash("http://example.org/~bob/")
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two IRIs that differ in case and port have one identity")
	}
	if want := hashkey.Sum([]byte("http://example.org/~bob/")); b != want {
		t.Fatalf("Hash = %v, want SHA-256 of the text %v", b, want)
	}
	_, err = IRI.Hash("not an iri")
	var ue *hashkey.URLError
	if !errors.As(err, &ue) || ue.Profile != "iri" || ue.Input != "not an iri" {
		t.Fatalf("Hash(invalid) error = %v, want a *hashkey.URLError naming the profile and input", err)
	}
	dst := []byte("x")
	if out, err := IRI.AppendHashed(dst, "bad iri"); err == nil || string(out) != "x" {
		t.Fatalf("AppendHashed on error = %q, %v", out, err)
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, s := range []string{"http://a/\xff", "http://a\xc3/", "http://a/?\xed\xa0\x80"} {
		if err := Check(s); !errors.Is(err, ErrUTF8) {
			t.Errorf("Check(%q) = %v, want ErrUTF8", s, err)
		}
	}
}

// longIRIs are the parts of IRIs long in one component: prefix, then a
// unit repeated, then suffix.
var longIRIs = []struct{ name, prefix, unit, suffix string }{
	{"userinfo", "http://", "u:é%41", "@a/"},
	{"host", "http://", "hé%41.", ":80/"},
	{"path", "http://a/", "é/%41", ""},
	{"query", "http://a/?", "q=\ue000/?", ""},
	{"fragment", "http://a/#", "f/?é", ""},
}

// longIRI returns the IRI of tc about size bytes long, and the offset
// where its repeated run ends.
func longIRI(prefix, unit, suffix string, size int) (iri string, end int) {
	run := strings.Repeat(unit, size/len(unit))
	return prefix + run + suffix, len(prefix) + len(run)
}

// TestLongIRIs: a long IRI is checked in one pass without allocating, and
// a fault after a long run of valid characters is reported at its byte
// offset. (That the time is linear in the length is shown by
// BenchmarkCheckLong, whose MB/s stays flat from 16 KiB to 4 MiB.)
func TestLongIRIs(t *testing.T) {
	for _, tc := range longIRIs {
		t.Run(tc.name, func(t *testing.T) {
			iri, end := longIRI(tc.prefix, tc.unit, tc.suffix, 1<<20)
			if err := Check(iri); err != nil {
				t.Fatalf("Check(%d bytes) = %v", len(iri), err)
			}
			if n := testing.AllocsPerRun(3, func() { Check(iri) }); n != 0 {
				t.Errorf("Check(%d bytes) allocates %v times, want 0", len(iri), n)
			}
			// A space after the run: refused at that byte.
			bad := iri[:end] + " " + iri[end:]
			var e *Error
			if err := Check(bad); !errors.As(err, &e) || e.At != end || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check(space at byte %d of %d) = %v, want ErrInvalid at byte %d", end, len(bad), err, end)
			}
		})
	}
}

// BenchmarkCheckLong checks IRIs long in each component at sizes a
// factor of 16 apart: a linear checker shows the same MB/s at each.
func BenchmarkCheckLong(b *testing.B) {
	for _, tc := range longIRIs {
		for _, size := range []int{16 << 10, 256 << 10, 4 << 20} {
			iri, _ := longIRI(tc.prefix, tc.unit, tc.suffix, size)
			b.Run(fmt.Sprintf("%s/%dKiB", tc.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(iri)))
				b.ReportAllocs()
				for b.Loop() {
					if err := Check(iri); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkHash(b *testing.B) {
	cases := readCases(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = IRI.Hash(cases[i%len(cases)].IRI)
	}
}

// FuzzCheck: Check never panics, reports a position inside the input, and
// accepts only valid UTF-8 with a scheme.
func FuzzCheck(f *testing.F) {
	for _, tc := range readCases(f) {
		f.Add(tc.IRI)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Check(s)
		if err == nil {
			if !strings.Contains(s, ":") || !utf8Valid(s) {
				t.Fatalf("Check(%q) accepted a string without a scheme or with invalid UTF-8", s)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.At < 0 || e.At > len(s) {
			t.Fatalf("Check(%q) = %v", s, err)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\ufffd") == s }
