package uts46

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The cross-checks below compare the package, code point by code point
// over 0..0x10FFFF, with two other implementations of UTS #46 for Unicode
// 17.0.0. They need tools the ordinary test run does not: they skip
// unless their inputs are there, and under -short.

// TestCrossCheckTR46 compares Lookup.ToASCII with the npm package
// tr46@6.0.0 (Unicode 17.0.0) run by node, whose String.prototype.normalize
// must be Unicode 17.0.0 too (node 20.20 ships ICU 78.2). Set UTS46_NPM to
// a node_modules directory holding tr46@6.0.0 (see gen.go).
func TestCrossCheckTR46(t *testing.T) {
	npm := os.Getenv("UTS46_NPM")
	if testing.Short() || npm == "" {
		t.Skip("set UTS46_NPM to run (and drop -short)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip(err)
	}
	// Every code point alone, after "a", and between two Hebrew letters,
	// so that mapping, statuses, normalization, leading marks, joiners
	// and both Bidi directions all come into play.
	const script = `
const tr46 = require(process.env.UTS46_NPM + '/tr46');
const uv = process.versions.unicode;
if (uv !== '17.0') { console.error('node has Unicode ' + uv); process.exit(2); }
const opts = {checkBidi: true, checkJoiners: true, checkHyphens: false, useSTD3ASCIIRules: false, verifyDNSLength: false, transitionalProcessing: false, ignoreInvalidPunycode: false};
const out = [];
for (let cp = 0; cp <= 0x10FFFF; cp++) {
  if (cp >= 0xD800 && cp <= 0xDFFF) continue;
  const c = String.fromCodePoint(cp);
  for (const s of [c, 'a' + c, '\u05D0' + c + '\u05D1']) {
    const r = tr46.toASCII(s, opts);
    out.push(r === null ? '!' : JSON.stringify(r));
  }
  if (out.length >= 30000) { process.stdout.write(out.join('\n') + '\n'); out.length = 0; }
}
process.stdout.write(out.join('\n') + '\n');
`
	cmd := exec.Command("node", "-e", script)
	cmd.Env = append(os.Environ(), "UTS46_NPM="+npm)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var diffs []string
	for cp := rune(0); cp <= utf8.MaxRune; cp++ {
		if cp >= 0xD800 && cp <= 0xDFFF {
			continue
		}
		c := string(cp)
		for _, s := range []string{c, "a" + c, "\u05D0" + c + "\u05D1"} {
			if !sc.Scan() {
				t.Fatalf("node output ends at U+%04X", cp)
			}
			want := sc.Text()
			if want != "!" {
				var err error
				if want, err = strconv.Unquote(want); err != nil {
					t.Fatalf("U+%04X: %v", cp, err)
				}
			}
			got, err := Lookup.ToASCII(s)
			if err != nil {
				got = "!"
			}
			if got != want && !explainedTR46(s, got, want) {
				diffs = append(diffs, fmt.Sprintf("%+q: got %+q, tr46 %+q", s, got, want))
			}
		}
	}
	reportDiffs(t, diffs, 20)
}

// TestCrossCheckTR46Random compares Lookup.ToASCII with tr46@6.0.0 on
// random domains built from code points that exercise every rule: ASCII,
// dots of all kinds, mapped, ignored and disallowed code points, combining
// marks in and out of canonical order, Hangul jamo, joiners, viramas,
// Arabic joining types, right-to-left letters and digits, and "xn--"
// labels, valid and not. Same requirements as TestCrossCheckTR46.
func TestCrossCheckTR46Random(t *testing.T) {
	npm := os.Getenv("UTS46_NPM")
	if testing.Short() || npm == "" {
		t.Skip("set UTS46_NPM to run (and drop -short)")
	}
	const script = `
const tr46 = require(process.env.UTS46_NPM + '/tr46');
const opts = {checkBidi: true, checkJoiners: true};
const lines = require('fs').readFileSync(0, 'utf8').split('\n');
const out = [];
for (const l of lines) {
  if (l === '') continue;
  const r = tr46.toASCII(JSON.parse(l), opts);
  out.push(r === null ? '!' : JSON.stringify(r));
}
process.stdout.write(out.join('\n') + '\n');
`
	inputs := randomDomains(200000)
	var in bytes.Buffer
	for _, s := range inputs {
		b, _ := json.Marshal(s)
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", "-e", script)
	cmd.Env = append(os.Environ(), "UTS46_NPM="+npm)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	results := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(results) != len(inputs) {
		t.Fatalf("%d results for %d inputs", len(results), len(inputs))
	}
	var diffs []string
	ok := 0
	for i, s := range inputs {
		want := results[i]
		if want != "!" {
			if want, err = strconv.Unquote(want); err != nil {
				t.Fatal(err)
			}
			ok++
		}
		got, err := Lookup.ToASCII(s)
		if err != nil {
			got = "!"
		}
		if got != want {
			diffs = append(diffs, fmt.Sprintf("%+q: got %+q (%v), tr46 %+q", s, got, err, want))
		}
	}
	t.Logf("%d random domains, %d valid", len(inputs), ok)
	reportDiffs(t, diffs, 30)
}

// randomDomains returns n domains from a fixed seed.
func randomDomains(n int) []string {
	pieces := []string{
		"a", "b", "z", "0", "9", "-", "_", "$", "A", "Z", ".", "\u3002", "\uff0e", "\uff61",
		"xn--", "XN--", "xn--zca", "xn--a", "xn--mgb", "xn--ls8h", "xn--1ug", "xn--nxa", "xn--4db",
		"\u00df", "\u03c2", "\u1e9e", "\u00ad", "\u200b", "\u2488", "\ufffd", "\u00c0", "\u00e0",
		"\u0300", "\u0301", "\u0308", "\u0338", "\u0327", "\u0345", "\u05b0", "\u0f71", "\u0f72",
		"\u1100", "\u1161", "\u11a8", "\uac00", "\u113c2", "\u113b8", "\u113c9",
		"\u200c", "\u200d", "\u094d", "\u0915", "\u0dca", "\u0dc1",
		"\u0628", "\u0644", "\u0627", "\u0640", "\u064b", "\u0661", "\u06f1", "\u05d0", "\u05d1", "\u0591",
		"\u2665", "\u2615", "\u65e5", "\uff21", "\uff41", "\u2160", "\u24b6", "\ufdfa", "\u3164",
		"\U0001f600", "\U0001d400", "\U000e0001", "\U00010a01",
	}
	var ps []string
	for _, p := range pieces {
		s, err := strconv.Unquote(`"` + p + `"`)
		if err != nil {
			panic(err)
		}
		ps = append(ps, s)
	}
	rng := rand.New(rand.NewPCG(46, 17))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for k := 1 + rng.IntN(8); k > 0; k-- {
			b.WriteString(ps[rng.IntN(len(ps))])
		}
		s := b.String()
		if rng.IntN(4) == 0 {
			// Round-trip through ToASCII to get valid "xn--" labels.
			if a, err := Lookup.ToASCII(s); err == nil {
				s = a
				if rng.IntN(2) == 0 {
					s = strings.ToUpper(s)
				}
			}
		}
		out[i] = s
	}
	return out
}

// explainedTR46 reports whether a difference from tr46 is one of the
// known ones, where tr46 strays from UTS #46 (none so far).
func explainedTR46(s, got, want string) bool {
	return false
}

// TestCrossCheckXNet compares the IDNA Mapping Table in tables.go with the
// Unicode 17.0.0 tables of golang.org/x/net/idna (tables17.0.0.go, which
// only go1.27 compiles: the test builds a copy of it with go run). It
// needs the module in the module cache.
func TestCrossCheckXNet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skip(err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "golang.org", "x", "net@v0.62.0", "idna")
	if _, err := os.Stat(filepath.Join(src, "tables17.0.0.go")); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"tables17.0.0.go", "trie.go", "trieval.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte("//go:build go1.27"), nil, 1)
		b = bytes.Replace(b, []byte("package idna"), []byte("package main"), 1)
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The dumper prints, per code point: category (v valid, m mapped,
	// d deviation, x disallowed, i ignored), the mapping for m and d,
	// then the joining type, virama and mark attributes x/net keeps.
	const dumper = `package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := string(r)
		v, _ := theTrie.lookupString(s)
		c := info(v)
		cat := "?"
		switch c.category() {
		case valid, validNV8, validXV8, disallowedSTD3Valid:
			cat = "v"
		case mapped, disallowedSTD3Mapped:
			cat = "m"
		case deviation:
			cat = "d"
		case disallowed, unknown:
			cat = "x"
		case ignored:
			cat = "i"
		}
		m := ""
		if c.isMapped() {
			m = string(c.appendMapping(nil, s))
		}
		fmt.Fprintf(w, "%s\t%q\t%d\t%t\t%t\n", cat, m, c.joinType(), c.isViramaModifier(), c.isModifier())
	}
}
`
	// x/net's trie code expects these from idna.go.
	const shims = `package main

var theTrie = newIdnaTrie(0)

func (c info) appendMapping(b []byte, s string) []byte {
	index := int(c >> indexShift)
	if c&xorBit == 0 {
		p := index
		return append(b, mappings[mappingIndex[p]:mappingIndex[p+1]]...)
	}
	b = append(b, s...)
	if c&inlineXOR == inlineXOR {
		b[len(b)-1] ^= byte(index)
	} else {
		for p := len(b) - int(xorData[index]); p < len(b); p++ {
			index++
			b[p] ^= xorData[index]
		}
	}
	return b
}
`
	for name, body := range map[string]string{"main.go": dumper, "shims.go": shims, "go.mod": "module xnetdump\n\ngo 1.22\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	var diffs []string
	count := map[string]int{}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if !sc.Scan() {
			t.Fatalf("dump ends at U+%04X", r)
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			t.Fatalf("U+%04X: bad line %q", r, sc.Text())
		}
		m, err := strconv.Unquote(f[1])
		if err != nil {
			t.Fatal(err)
		}
		p := lookup(r)
		cat := map[int]string{statusValid: "v", statusMapped: "m", statusDeviation: "d", statusDisallowed: "x", statusIgnored: "i"}[p.status()]
		ours := ""
		if p.status() == statusMapped {
			ours = mapping(r)
		}
		theirs := f[0]
		if theirs == "d" {
			m = "" // x/net keeps the transitional mapping of deviations
		}
		count[cat]++
		if cat != theirs || ours != m {
			diffs = append(diffs, fmt.Sprintf("U+%04X: ours %s %+q, x/net %s %+q", r, cat, ours, theirs, m))
			continue
		}
		if !p.isUsable() {
			continue
		}
		// Attributes, for the code points that can be in a label.
		xj := map[string]int{"0": joinU, "1": joinL, "2": joinD, "3": joinT, "4": joinR}[f[2]]
		oj := p.join()
		if oj == joinC {
			oj = joinU // x/net has no join-causing type
		}
		if r == 0x200C || r == 0x200D || r == 0x094D {
			// x/net reuses the joining-type bits of these for its own
			// joinZWNJ, joinZWJ and joinVirama markers.
			continue
		}
		virama := p.ccc() == cccVirama
		if xj != oj || (f[3] == "true") != virama || (f[4] == "true") != p.isMark() && !virama {
			diffs = append(diffs, fmt.Sprintf("U+%04X: ours join %d virama %t mark %t, x/net %s", r, oj, virama, p.isMark(), sc.Text()))
		}
	}
	t.Logf("compared every code point: %d valid, %d mapped, %d deviation, %d disallowed, %d ignored",
		count["v"], count["m"], count["d"], count["x"], count["i"])
	if count["m"] < 6000 || count["v"] < 100000 {
		t.Errorf("implausible counts %v", count)
	}
	reportDiffs(t, diffs, 30)
}

// TestCrossCheckNFC compares nfc with node's String.prototype.normalize,
// which must be Unicode 17.0.0 (node 20.20 ships ICU 78.2), on every
// valid code point alone and on random sequences of the code points that
// normalization touches.
func TestCrossCheckNFC(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip(err)
	}
	const script = `
if (process.versions.unicode !== '17.0') { console.error('node has Unicode ' + process.versions.unicode); process.exit(2); }
const lines = require('fs').readFileSync(0, 'utf8').split('\n');
const out = [];
for (const l of lines) {
  if (l === '') continue;
  out.push(JSON.stringify(JSON.parse(l).normalize('NFC')));
}
process.stdout.write(out.join('\n') + '\n');
`
	var interesting []rune
	var inputs [][]rune
	for r := rune(0); r <= utf8.MaxRune; r++ {
		p := lookup(r)
		if !p.isUsable() {
			continue
		}
		inputs = append(inputs, []rune{r})
		if p.ccc() != 0 || p.qc() != qcYes || p.hasDecomp() || r >= hangulSBase && r < hangulSBase+hangulSCount && r%7 == 0 {
			interesting = append(interesting, r)
		}
	}
	interesting = append(interesting, 'a', 'e', 'o', 0x1100, 0x1161, 0x11A8, 0x3099)
	rng := rand.New(rand.NewPCG(15, 17))
	for range 100000 {
		s := make([]rune, 1+rng.IntN(8))
		for i := range s {
			s[i] = interesting[rng.IntN(len(interesting))]
		}
		inputs = append(inputs, s)
	}
	var in bytes.Buffer
	for _, s := range inputs {
		b, _ := json.Marshal(string(s))
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", "-e", script)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	results := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(results) != len(inputs) {
		t.Fatalf("%d results for %d inputs", len(results), len(inputs))
	}
	bad := 0
	for i, s := range inputs {
		want, err := strconv.Unquote(results[i])
		if err != nil {
			t.Fatal(err)
		}
		got := string(nfc(nil, s))
		if got != want {
			if bad++; bad <= 20 {
				t.Errorf("nfc(%+q) = %+q, node %+q", string(s), got, want)
			}
		}
		if isNFCQuick(s) && string(s) != want {
			t.Errorf("isNFCQuick(%+q) but NFC is %+q", string(s), want)
		}
	}
	t.Logf("%d strings (%d interesting code points), %d differences", len(inputs), len(interesting), bad)
}

// reportDiffs fails t with the first most of diffs, and their number when
// there are more.
func reportDiffs(t *testing.T, diffs []string, most int) {
	t.Helper()
	for i, d := range diffs {
		if i == most {
			t.Errorf("... %d differences in all", len(diffs))
			return
		}
		t.Error(d)
	}
}
