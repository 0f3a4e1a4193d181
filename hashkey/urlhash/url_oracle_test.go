package urlhash

import (
	"bufio"
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/text/secure/bidirule"
	"golang.org/x/text/unicode/norm"
)

// The differential oracle is github.com/nlnwa/whatwg-url, a separate
// implementation of the URL Standard, configured for the current path
// percent-encode set (which gained U+005E ^ after its release).
func newOracle() whatwg.Parser {
	return whatwg.NewParser(whatwg.WithPathPercentEncodeSet(whatwg.PathPercentEncodeSet.Set('^')))
}

// oracleHref returns the oracle's serialisation of s parsed with no base.
func oracleHref(p whatwg.Parser, s string) (string, error) {
	u, err := p.Parse(s)
	if err != nil {
		return "", err
	}
	return u.Href(false), nil
}

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

func TestCorpusAgainstOracle(t *testing.T) {
	lines := readCorpus(t)
	p := newOracle()
	var match, fast, bothFail, oracleBug int
	for _, s := range lines {
		checkFastAgrees(t, s)
		if _, ok := appendFast(nil, s, false); ok {
			fast++
		}
		got, err := appendWHATWG(nil, s, false)
		want, werr := oracleHref(p, s)
		switch {
		case err != nil && werr != nil:
			bothFail++
		case knownOracleBug(oracleResult{s, string(got), err, want, werr}) != "":
			oracleBug++
		case err != nil || werr != nil:
			t.Errorf("%q: ours %q, %v; oracle %q, %v", s, got, err, want, werr)
		case string(got) != want:
			t.Errorf("%q: ours %q, oracle %q", s, got, want)
		default:
			match++
		}
	}
	t.Logf("corpus: %d urls, %d equal to the oracle, %d rejected by both, %d known oracle bugs; fast path took %d",
		len(lines), match, bothFail, oracleBug, fast)
	if len(lines) < 30000 || match < len(lines)*99/100 {
		t.Errorf("corpus: only %d of %d matched", match, len(lines))
	}
}

// oracleResult is one input with both implementations' answers.
type oracleResult struct {
	in        string
	ours      string
	oursErr   error
	oracle    string
	oracleErr error
}

// knownOracleBug returns the name of the documented oracle defect that
// explains a disagreement in r, or "".
func knownOracleBug(r oracleResult) string {
	for _, b := range knownOracleBugs {
		if b.match(r) {
			return b.name
		}
	}
	return ""
}

// knownOracleBugs are the oracle's known deviations from the URL Standard.
// Each matcher is narrow: it explains a disagreement only of its own shape.
var knownOracleBugs = []struct {
	name  string
	match func(r oracleResult) bool
}{
	{
		// The oracle runs UTS 46 with UseSTD3ASCIIRules=true whenever a
		// domain needs UTS 46 at all (a non-ASCII code point after
		// percent-decoding, or an xn-- label), so it rejects hosts that
		// contain, or map to, an ASCII code point outside letters, digits,
		// '-' and '.': "https://a）b.com/" (U+FF09 maps to ')'), "http:≠",
		// "http://ü_x.de/", "https://é*.org/". The URL Standard passes
		// UseSTD3ASCIIRules=false and forbids only the forbidden domain
		// code points, so these hosts are valid.
		name: "uts46-std3-rules",
		match: func(r oracleResult) bool {
			if r.oursErr != nil || r.oracleErr == nil {
				return false
			}
			// The oracle names the rune it refused; under STD3 rules only
			// ASCII outside letters, digits and '-', and code points whose
			// compatibility decomposition holds such ASCII (U+FF09 ')',
			// U+2260 '=' + U+0338), are disallowed where the standard's
			// flags allow them.
			msg := r.oracleErr.Error()
			var refused string
			if i := strings.Index(msg, "disallowed rune U+"); i >= 0 {
				hexRune := msg[i+len("disallowed rune U+"):]
				if j := strings.IndexFunc(hexRune, func(c rune) bool { return !isASCIIHex(c) }); j >= 0 {
					hexRune = hexRune[:j]
				}
				v, err := strconv.ParseUint(hexRune, 16, 32)
				if err != nil {
					return false
				}
				refused = string(rune(v))
			} else if i := strings.Index(msg, "invalid label "); i >= 0 {
				// An A-label whose Unicode form holds such a code point.
				q, err := strconv.QuotedPrefix(msg[i+len("invalid label "):])
				if err != nil {
					return false
				}
				refused, _ = strconv.Unquote(q)
			}
			return strings.ContainsFunc(norm.NFKD.String(refused), func(c rune) bool {
				return c < 0x80 && !(isASCIIAlpha(c) || isASCIIDigit(c) || c == '-' || c == '.')
			})
		},
	},
	{
		// The oracle parses IPv4 numbers with Go's strconv.ParseInt, which
		// accepts a sign ("+0", "0x-1", "0+257" as octal "+257") and stops
		// at the first digit that overflows 64 bits, before seeing a later
		// invalid character ("0xffffffffffffffffi" is out of range, so a
		// number, for the oracle). The standard's IPv4 number parser
		// accepts only radix digits, so such labels are not numbers: the
		// host is a domain (or an IPv4 failure where the oracle succeeds).
		name: "ipv4-number-strconv",
		match: func(r oracleResult) bool {
			// The labels as written, percent-decoded, and after UTS 46
			// mapping ("－１" is "-1").
			hosts := rawHost(r.in)
			hosts += "." + string(percentDecode([]rune(hosts)))
			if h, ok := canonicalHost(r.in); ok {
				hosts += "." + h
			}
			for _, label := range strings.Split(hosts, ".") {
				rest, radix := label, 10
				if len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
					rest, radix = rest[2:], 16
				} else if len(rest) >= 2 && rest[0] == '0' {
					rest, radix = rest[1:], 8
				}
				if rest == "" {
					continue
				}
				_, err := strconv.ParseInt(rest, radix, 64)
				oracleNumber := err == nil || errors.Is(err, strconv.ErrRange)
				_, specNumber := parseIPv4Number(label)
				if oracleNumber != specNumber {
					return true
				}
			}
			return false
		},
	},
	{
		// The oracle strips every leading and trailing '[' or ']' of an
		// IPv6 host (strings.Trim), so "http://[[::1]]" and "a://[::[]"
		// parse for it; the standard removes exactly one bracket at each
		// end and fails on the rest.
		name: "ipv6-bracket-trim",
		match: func(r oracleResult) bool {
			h := rawHost(r.in)
			return len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' && strings.Trim(h, "[]") != h[1:len(h)-1]
		},
	},
	{
		// Not an oracle bug but our one deliberate deviation, shared with
		// golang.org/x/net/idna: a domain with an A-label whose Unicode
		// form is longer than 1024 code points is rejected, because the
		// Punycode decoder refuses to read such labels back and the
		// canonical form must reparse to itself. The oracle accepts it.
		name: "long-idn-label",
		match: func(r oracleResult) bool {
			if r.oursErr == nil || r.oracleErr != nil {
				return false
			}
			for _, f := range strings.FieldsFunc(r.oracle, func(c rune) bool { return strings.ContainsRune("/.:@", c) }) {
				if len(f) > 1024 && strings.HasPrefix(f, "xn--") {
					return true
				}
			}
			return false
		},
	},
	{
		// The oracle uses golang.org/x/net/idna, which returns an empty
		// label for "xn--" (any case or width); UTS 46 makes a label whose
		// Punycode decodes to nothing an error, so we fail where it
		// succeeds.
		name: "empty-ace-label",
		match: func(r oracleResult) bool {
			return r.oursErr != nil && r.oracleErr == nil && hasEmptyACELabel(percentDecodedHost(r.in))
		},
	},
	{
		// The oracle applies x/net/idna's BidiRule, which holds an ASCII
		// label of a Bidi domain name ("1" in "1.ي") to RFC 5893; the
		// URL Standard's tests (toascii.json) accept it.
		name: "bidi-ascii-label",
		match: func(r oracleResult) bool {
			if r.oursErr != nil || r.oracleErr == nil {
				return false
			}
			host, ok := canonicalHost(r.in)
			if !ok {
				return false
			}
			uni, err := uts46.ToUnicode(host)
			if err != nil {
				return false
			}
			// An ASCII label before the first right-to-left one, which the
			// strict rule refuses and ours exempts.
			for _, l := range strings.Split(uni, ".") {
				if strings.ContainsFunc(l, isRTL) {
					return false
				}
				if l != "" && isASCII(l) && !bidirule.ValidString(l) {
					return true
				}
			}
			return false
		},
	},
	{
		// The oracle predates the 2025 change that writes a space ending an
		// opaque path (one followed by '?' or '#') as %20, so that the path
		// survives reparsing: "a: #" is "a:%20#" now, "a: #" in the oracle.
		name: "opaque-path-trailing-space",
		match: func(r oracleResult) bool {
			old, ok := oldOpaqueSpace(r.in)
			return ok && r.oursErr == nil && r.oracleErr == nil && old == r.oracle
		},
	},
	{
		// The oracle works on Go strings: tab and newline are removed from
		// the bytes before decoding, and each byte of an ill-formed UTF-8
		// sequence becomes its own U+FFFD. The standard's input is a string
		// of scalar values, decoded first by the Encoding Standard's UTF-8
		// decoder, which yields one U+FFFD per maximal ill-formed subpart
		// ("\xe2\x82" is one U+FFFD, not two).
		name: "invalid-utf8-decoding",
		match: func(r oracleResult) bool {
			return !utf8.ValidString(r.in)
		},
	},
}

// oldOpaqueSpace returns the serialisation of s under the URL Standard
// before 2025, which kept a space ending an opaque path literal.
func oldOpaqueSpace(s string) (string, bool) {
	var u urlRecord
	if err := u.parse(preprocess(s)); err != nil || !u.opaque || !bytes.HasSuffix(u.opaquePath, []byte("%20")) {
		return "", false
	}
	u.opaquePath = append(u.opaquePath[:len(u.opaquePath)-3], ' ')
	return string(u.appendTo(nil, false)), true
}

// rawHost returns, roughly, the host text of a special URL as written:
// after the scheme and any slashes, before the path, userinfo and port
// removed. It serves only to recognise an oracle bug's shape.
func rawHost(s string) string {
	rs := string(preprocess(s))
	i := strings.IndexByte(rs, ':')
	if i < 0 {
		return ""
	}
	rs = strings.TrimLeft(rs[i+1:], "/\\")
	if j := strings.IndexAny(rs, "/\\?#"); j >= 0 {
		rs = rs[:j]
	}
	if j := strings.LastIndexByte(rs, '@'); j >= 0 {
		rs = rs[j+1:]
	}
	if j := strings.LastIndexByte(rs, ':'); j >= 0 && j > strings.LastIndexByte(rs, ']') {
		rs = rs[:j]
	}
	return rs
}

// canonicalHost returns the serialised host of s as our parser reads it.
func canonicalHost(s string) (string, bool) {
	var u urlRecord
	if err := u.parse(preprocess(s)); err != nil || u.host.kind == hostNone {
		return "", false
	}
	return string(u.host.appendTo(nil)), true
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

func TestMutationsAgainstOracle(t *testing.T) {
	lines := readCorpus(t)
	p := newOracle()
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	var equal, bothFail, oursFail, oracleFail, bug int
	byBug := map[string]int{}
	for k := 0; k < n; k++ {
		s := mutate(r, lines[r.IntN(len(lines))])
		checkFastAgrees(t, s)
		got, err := appendWHATWG(nil, s, false)
		if err == nil {
			again, err2 := appendWHATWG(nil, string(got), false)
			if err2 != nil || string(again) != string(got) {
				t.Errorf("not idempotent: %q -> %q -> %q, %v", s, got, again, err2)
			}
		}
		want, werr := oracleHref(p, s)
		switch {
		case err != nil && werr != nil:
			bothFail++
		case knownOracleBug(oracleResult{s, string(got), err, want, werr}) != "":
			bug++
			byBug[knownOracleBug(oracleResult{s, string(got), err, want, werr})]++
		case err != nil:
			oursFail++
			t.Errorf("%q: ours failed (%v), oracle %q", s, err, want)
		case werr != nil:
			oracleFail++
			t.Errorf("%q: ours %q, oracle failed (%v)", s, got, werr)
		case string(got) != want:
			t.Errorf("%q: ours %q, oracle %q", s, got, want)
		default:
			equal++
		}
	}
	t.Logf("mutations: %d, equal %d, both rejected %d, known oracle bugs %d %v", n, equal, bothFail, bug, byBug)
	if equal < n/2 {
		t.Errorf("only %d of %d mutations compared equal", equal, n)
	}
}

// percentDecodedHost is the raw host of in, percent-decoded, for matching
// labels as the host parser sees them.
func percentDecodedHost(in string) string {
	return string(percentDecode([]rune(rawHost(in))))
}
