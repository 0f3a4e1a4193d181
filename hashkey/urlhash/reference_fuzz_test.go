package urlhash

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"unicode/utf8"
)

// FuzzAgainstReference is the differential fuzz target: every valid UTF-8
// input must canonicalise as whatwg-url (the URL Standard's reference
// implementation) parses it, or be rejected by both. It needs node and
// whatwg-url installed in testdata/whatwg-url (see its README.md) and
// skips without them; its seeds are the reference input set. Inputs that
// are not valid UTF-8 are skipped: a JavaScript string cannot hold them
// (our handling, one U+FFFD per ill-formed subsequence, is the Encoding
// Standard's decoding, tested in TestDecodeLossy).
func FuzzAgainstReference(f *testing.F) {
	if _, err := os.Stat("testdata/whatwg-url/node_modules/whatwg-url"); err != nil {
		f.Skip("whatwg-url is not installed in testdata/whatwg-url (see README.md)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		f.Skip("node is not installed")
	}
	ref := startReference(f)
	for _, s := range referenceInputs(f)[:5000] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) {
			return
		}
		want, ok := ref.href(t, in)
		got, err := appendWHATWG(nil, in, false)
		switch {
		case !ok && err != nil:
		case ok && err == nil && string(got) == want:
		default:
			t.Fatalf("%q: ours %q (%v); whatwg-url %q (accepted %v)", in, got, err, want, ok)
		}
	})
}

// reference is a running "node serve.js": one JSON string in, one JSON
// href or null out, per line.
type reference struct {
	in  *bufio.Writer
	out *bufio.Scanner
}

func startReference(tb testing.TB) *reference {
	cmd := exec.Command("node", "-e", `
const { URL } = require("whatwg-url");
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (l) => {
  let h = null;
  try { h = new URL(JSON.parse(l)).href; } catch {}
  process.stdout.write(JSON.stringify(h) + "\n");
});`)
	cmd.Dir = "testdata/whatwg-url"
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	return &reference{in: bufio.NewWriter(stdin), out: sc}
}

func (r *reference) href(tb testing.TB, s string) (string, bool) {
	b, _ := json.Marshal(s)
	r.in.Write(append(b, '\n'))
	if err := r.in.Flush(); err != nil || !r.out.Scan() {
		tb.Fatalf("reference: %v %v", err, r.out.Err())
	}
	var h *string
	if err := json.Unmarshal(r.out.Bytes(), &h); err != nil {
		tb.Fatal(err)
	}
	if h == nil {
		return "", false
	}
	return *h, true
}
