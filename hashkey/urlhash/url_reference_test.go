package urlhash

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/urlhash/urlhash/hashkey/internal/uts46"
)

// The differential reference is whatwg-url, the URL Standard's reference
// implementation (the version in testdata/whatwg-url/README.md), run once
// over referenceInputs with -update-reference; its answers are committed
// so that the tests need no Node. Only the accepted inputs are stored
// (input TAB href, gzipped); any other input of the set is one it rejects.

var updateReference = flag.Bool("update-reference", false, "regenerate testdata/whatwg-url/answers.txt.gz with node and whatwg-url")

const referenceFile = "testdata/whatwg-url/answers.txt.gz"

// referenceInputs is the fixed input set: the bundled corpus, seeded
// mutations of it, every code point inside a host label, the inputs of the
// WPT files, and the fuzz seeds; valid UTF-8 only (JavaScript strings
// cannot hold anything else), each once.
func referenceInputs(t testing.TB) []string {
	t.Helper()
	var in []string
	lines := readCorpus(t)
	in = append(in, lines...)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		in = append(in, mutate(r, lines[r.IntN(len(lines))]))
	}
	for c := rune(0x80); c <= 0x10FFFF; c++ {
		if c < 0xD800 || c > 0xDFFF {
			in = append(in, "http://a"+string(c)+"b.example/")
		}
	}
	for _, c := range loadWPTURLCases(t) {
		in = append(in, c.Input)
	}
	var current struct {
		Cases []struct {
			Input string `json:"input"`
		} `json:"cases"`
	}
	readJSON(t, "testdata/wpt/urltestdata-current.json", &current)
	for _, c := range current.Cases {
		in = append(in, c.Input)
	}
	for _, file := range wptHostFiles {
		for _, c := range loadWPTHostCases(t, file) {
			in = append(in, "https://"+c.Input+"/x")
		}
	}
	seeds, err := filepath.Glob("testdata/fuzz/*/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range seeds {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "string("); ok {
				var s string
				if err := json.Unmarshal([]byte(strings.TrimSuffix(v, ")")), &s); err == nil {
					in = append(in, s)
				}
			}
		}
	}
	out := in[:0]
	seen := make(map[string]bool, len(in))
	for _, s := range in {
		if utf8.ValidString(s) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// loadReference returns the reference's hrefs by input (accepted inputs
// only).
func loadReference(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open(referenceFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	ref := make(map[string]string)
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var pair [2]string
		if err := json.Unmarshal(sc.Bytes(), &pair); err != nil {
			t.Fatal(err)
		}
		ref[pair[0]] = pair[1]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ref
}

func writeReference(t testing.TB, inputs []string) {
	t.Helper()
	js, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "answer.js")
	cmd.Dir = "testdata/whatwg-url"
	cmd.Stdin = bytes.NewReader(js)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node answer.js (npm install whatwg-url there first): %v", err)
	}
	var answers []*string
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(inputs) {
		t.Fatalf("answers: %v (%d for %d inputs)", err, len(answers), len(inputs))
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	for i, a := range answers {
		if a != nil {
			line, _ := json.Marshal([2]string{inputs[i], *a})
			zw.Write(append(line, '\n'))
		}
	}
	zw.Close()
	if err := os.WriteFile(referenceFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAgainstReference: on every input of the set, our canonical form is
// the reference's href, and we reject what it rejects.
func TestAgainstReference(t *testing.T) {
	inputs := referenceInputs(t)
	if *updateReference {
		writeReference(t, inputs)
	}
	ref := loadReference(t)
	var accepted, rejected, bad int
	explained := map[string]int{}
	for _, s := range inputs {
		want, ok := ref[s]
		got, err := appendWHATWG(nil, s, false)
		switch {
		case ok && err == nil && string(got) == want:
			accepted++
		case !ok && err != nil:
			rejected++
		case ok && err != nil && overLabelCap(want):
			explained["IDN label over 1024 code points (our cap)"]++
		default:
			bad++
			if bad <= 20 {
				t.Errorf("%q: ours %q (%v); reference %q (accepted %v)", s, got, err, want, ok)
			}
		}
	}
	t.Logf("whatwg-url reference: %d inputs, %d equal, %d rejected by both, %d explained %v, %d unexplained", len(inputs), accepted, rejected, len(explained), explained, bad)
	inSet := 0
	for _, s := range inputs {
		if _, ok := ref[s]; ok {
			inSet++
		}
	}
	if inSet != len(ref) {
		t.Errorf("%d reference answers are for inputs no longer in the set: run with -update-reference", len(ref)-inSet)
	}
}

// overLabelCap reports whether the host of href has a label whose Unicode
// form is longer than uts46.MaxLabelLength code points: the cap this
// package keeps (a documented decision) and the URL Standard does not.
func overLabelCap(href string) bool {
	rest, ok := strings.CutPrefix(href[strings.Index(href, ":")+1:], "//")
	if !ok {
		return false
	}
	host := rest[:strings.IndexAny(rest+"/", "/:")]
	_, err := uts46.Lookup.ToASCII(host)
	return errors.Is(err, uts46.ErrLabelTooLong)
}
