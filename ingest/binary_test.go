package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBinary checks which inputs Read refuses as binary: each yields one
// error wrapping ErrBinary and naming the file, and nothing else.
func TestBinary(t *testing.T) {
	random := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{13})
	rng.Read(random)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(random)
	zw.Close()
	// A PNG: signature, IHDR chunk, then compressed (random-looking) data.
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa" +
		"\x00\x00\x04\x00IDAT" + string(random[:1024])
	utf16 := func(bom string, le bool) string {
		var b strings.Builder
		b.WriteString(bom)
		for _, c := range "http://example.com/\nhttp://example.org/\n" {
			if le {
				b.WriteByte(byte(c))
				b.WriteByte(0)
			} else {
				b.WriteByte(0)
				b.WriteByte(byte(c))
			}
		}
		return b.String()
	}
	// An RDF literal may hold any character, NUL and other control
	// characters too: to an RDF reader only invalid UTF-8 is binary, and
	// these are text (which its grammar refuses or not).
	rdfText := map[string]bool{"one NUL": true, "controls": true, "UTF-16LE": true, "PNG header": true}
	latin1 := "http://example.com/caf\xe9\nhttp://example.com/na\xefve\nhttp://example.com/se\xf1or\n"
	for _, tc := range []struct {
		name   string
		in     string
		gz     bool
		nul    bool
		binary bool
	}{
		// Binary: random bytes, gzipped or not, NUL-separated or not.
		{"random", string(random), false, false, true},
		{"random gzip", gz.String(), true, false, true},
		{"random NUL", string(random), false, true, true},
		{"random short", string(random[:5]), false, true, true},
		{"PNG", png, false, false, true},
		{"PNG NUL", png, false, true, true},
		{"PNG header", png[:33], false, false, true},
		// Binary: text in UTF-16 or UTF-32 with a byte order mark, or without
		// one (NUL bytes).
		{"UTF-16LE BOM", utf16("\xff\xfe", true), false, false, true},
		{"UTF-16BE BOM", utf16("\xfe\xff", false), false, false, true},
		{"UTF-16LE BOM NUL", utf16("\xff\xfe", true), false, true, true},
		{"UTF-16LE", utf16("", true), false, false, true},
		{"UTF-32LE BOM", "\xff\xfe\x00\x00h\x00\x00\x00", false, true, true},
		// Binary: control bytes, NUL bytes outside NUL mode.
		{"controls", "http://a/\n\x01\x02\x03\x04\x05\x06\x07\x08\n", false, false, true},
		{"one NUL", strings.Repeat("http://example.com/\n", 100) + "\x00", false, false, true},
		{"mostly Latin-1", "\xe9\xe8\xe0\xe7\xf4\n", false, false, true},
		// Text: valid UTF-8 in any script, a UTF-8 BOM, NUL-separated text.
		{"UTF-8 scripts", "https://例え.テスト/パス\nhttps://пример.рф/путь\nhttps://مثال.إختبار/\nhttps://उदाहरण.परीक्षा/\nhttps://ελληνικά.gr/😀\n", false, false, false},
		{"UTF-8 BOM", "\xef\xbb\xbfhttp://example.com/\n", false, false, false},
		{"NUL text", "http://a/\x00http://b/\x00", false, true, false},
		{"empty", "", false, false, false},
		{"tabs and form feeds", "http://a/\t\v\f\r\n", false, false, false},
		// Text: Latin-1 with a few letters with accents (invalid UTF-8).
		{"Latin-1", latin1, false, false, false},
		// Text: a character cut at the end of the examined block.
		{"cut character", strings.Repeat("a", sniffLen-1) + "é\n", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []Format{Lines, Hashes, NTriples, Sitemap, Turtle, TriG, RDFXML} {
				if tc.nul && f != Lines && f != Hashes {
					continue
				}
				binary := tc.binary && !(rdfText[tc.name] && f.IsRDF())
				rc, err := NewReader("in.dat", strings.NewReader(tc.in))
				if err != nil {
					t.Fatal(err)
				}
				var errs []error
				n := 0
				for _, err := range Read(rc, "in.dat", f, &Options{NUL: tc.nul}) {
					n++
					if err != nil && !isLineError(err) {
						errs = append(errs, err)
					}
				}
				switch {
				case binary && (n != 1 || len(errs) != 1 || !errors.Is(errs[0], ErrBinary)):
					t.Errorf("%v: %d results, errors %v; want one ErrBinary", f, n, errs)
				case binary && !strings.Contains(errs[0].Error(), "in.dat"):
					t.Errorf("%v: error %q does not name the file", f, errs[0])
				case !binary && len(errs) > 0:
					t.Errorf("%v: errors %v", f, errs)
				}
			}
		})
	}
	// Text is read as it is, Latin-1 bytes and all.
	if got := collect(t, strings.NewReader(latin1), Lines, nil); strings.Join(got, "\n")+"\n" != latin1 {
		t.Errorf("Latin-1 lines read as %q", got)
	}
}

func isLineError(err error) bool {
	var le *LineError
	return errors.As(err, &le)
}

func TestBinaryReason(t *testing.T) {
	for _, tc := range []struct {
		in       string
		nul, cut bool
		want     string
	}{
		{"", false, false, ""},
		{"\xc3", false, true, ""},
		{"\xc3", false, false, "1 of its first 1 bytes are control bytes or invalid UTF-8"},
		{"ab\xff", false, false, ""},
		{"a\xff\xfe", false, false, "2 of its first 3 bytes are control bytes or invalid UTF-8"},
		{"a\x00", false, false, "NUL byte at offset 1"},
		{"a\x00", true, false, ""},
		{"\x1b[1mbold\x1b[0m", false, false, ""},
		{"\x7f\x7f\x7fabcd", false, false, "3 of its first 7 bytes are control bytes or invalid UTF-8"},
		{"\xff\xfea", true, false, "UTF-16 byte order mark; only UTF-8 is read"},
	} {
		if got := binaryReason([]byte(tc.in), tc.nul, false, tc.cut); got != tc.want {
			t.Errorf("binaryReason(%q, %v, %v) = %q, want %q", tc.in, tc.nul, tc.cut, got, tc.want)
		}
	}
	// An RDF syntax's literal may hold any character: only invalid UTF-8
	// is odd.
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"<http://a/> <http://b/> \"\x00\x01\x02\x03\x04\x05\x06\x07\x7f\" .\n", ""},
		{"a\x00\xff\xfe", "2 of its first 4 bytes are control bytes or invalid UTF-8"},
		{"\xff\xfea", "UTF-16 byte order mark; only UTF-8 is read"},
	} {
		if got := binaryReason([]byte(tc.in), false, true, false); got != tc.want {
			t.Errorf("binaryReason(%q, rdf) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
