package urlhash

import (
	"bufio"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// readCorpus returns the lines of the module's testdata/debian-package-urls.txt.
func readCorpus(t testing.TB) []string {
	t.Helper()
	f, err := os.Open("../../testdata/debian-package-urls.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// checkFastAgrees fails t when the fast path accepts s but disagrees with
// the full parser.
func checkFastAgrees(t testing.TB, s string) {
	t.Helper()
	for _, drop := range []bool{false, true} {
		fast, ok := appendFast(nil, s, drop)
		if !ok {
			return
		}
		full, err := appendFull(nil, s, drop)
		if err != nil || string(fast) != string(full) {
			t.Errorf("fast path %q (drop %v) = %q, full = %q, %v", s, drop, fast, full, err)
		}
	}
}

// mutationPieces are fragments spliced into corpus URLs to reach the
// parser's unusual states: delimiters, encodings, dot segments, IP forms,
// credentials, non-ASCII and mapped code points, controls and invalid UTF-8.
var mutationPieces = []string{
	"/", "\\", "//", "\\\\", ".", "..", "/./", "/../", "%2e", "%2E%2e", ".%2E",
	"?", "#", "@", ":", ":8080", ":80", ":443", ":0", ":65536", ":", "[", "]",
	"[::1]", "[1:2::3]", "[::ffff:1.2.3.4]", "0x7f.1", "127.1", "0300.0250.1.1", "1.2.3.4.", "4294967295", "4294967296",
	"user:pass@", "a@b@", ":@", "%", "%41", "%zz", "%00", "%c3%bc", "%ef%bc%89",
	" ", "\t", "\n", "\x00", "\x1f", "\x7f", "\"", "'", "<", ">", "`", "{", "}", "^", "|",
	"ü", "ß", "Ⅻ", "ＡＢ", "\uff09", "\u3002", "\u200d", "\u00ad", "\ufeff", "é", "\u05d0", "١", "😀",
	"xn--", "xn--zca", "XN--ZCA", "-", "_", "*", "localhost", "C:", "c|", "file:", "FILE:///", "sc:", "HTTP://",
	"\xff", "\xe2\x82", "\xed\xa0\x80",
}

// mutate returns s changed by one to three random edits: splicing a piece
// at a random byte offset, deleting a byte run, or changing the case of a
// run.
func mutate(r *rand.Rand, s string) string {
	for k := 1 + r.IntN(3); k > 0; k-- {
		i := 0
		if len(s) > 0 {
			i = r.IntN(len(s) + 1)
		}
		switch r.IntN(4) {
		case 0, 1:
			s = s[:i] + mutationPieces[r.IntN(len(mutationPieces))] + s[i:]
		case 2:
			j := min(len(s), i+1+r.IntN(4))
			s = s[:i] + s[j:]
		case 3:
			j := min(len(s), i+1+r.IntN(8))
			s = s[:i] + strings.ToUpper(s[i:j]) + s[j:]
		}
	}
	return s
}
