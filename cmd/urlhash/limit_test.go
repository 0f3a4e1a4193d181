package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/urlhash/urlhash/ingest"
)

// longLines are the lines over the limit of TestLineLimitEveryPath: each
// is refused on every input path with ingest's words for it.
var longLines = map[string]string{
	"10 MB":  "https://example.com/" + strings.Repeat("a", 10<<20),
	"1.5 MB": "https://example.com/" + strings.Repeat("b", 3<<19), // read whole, then refused
	// Valid first (an input that starts binary is refused whole), then
	// invalid bytes that cost three each.
	"invalid UTF8": "https://example.com/" + strings.Repeat("x", 9000) + strings.Repeat("\xff", 400<<10),
	"long comment": "# " + strings.Repeat("c", 2<<20),
}

// TestLineLimitEveryPath: a line over the limit is refused exactly alike
// from a file, from standard input (a pipe or a regular file) and as an
// argument, naming the input and its line; a one-line-per-input command
// still prints a line in its place (hash: an empty line, --json an object
// with error; has: error<TAB>), and dedupe neither stores nor prints it.
func TestLineLimitEveryPath(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "", "add", "--db", filepath.Join(dir, "idx"), "https://c.example/"); code != exitOK {
		t.Fatal(errs)
	}
	for name, long := range longLines {
		t.Run(name, func(t *testing.T) {
			input := "https://a.example/\n" + long + "\nhttps://b.example/\n"
			file := filepath.Join(dir, "in.txt")
			if err := os.WriteFile(file, []byte(input), 0o644); err != nil {
				t.Fatal(err)
			}
			var fileReason string
			for _, tc := range []struct {
				name string
				args []string
				want string // has's stdout
			}{
				{"hash", []string{"hash"}, ""}, // checked line by line below
				{"hash --json", []string{"hash", "--json"}, ""},
				{"has", []string{"has", "--db", filepath.Join(dir, "idx")}, "absent\thttps://a.example/\nerror\t\nabsent\thttps://b.example/\n"},
			} {
				outs := map[string]string{}
				errs := map[string]string{}
				for _, how := range []string{"--from", "stdin pipe", "stdin file", "stdin one byte"} {
					args := tc.args
					var stdin io.Reader = strings.NewReader("")
					switch how {
					case "--from":
						args = append(args, "--from", file)
					case "stdin pipe":
						stdin = strings.NewReader(input)
					case "stdin one byte":
						stdin = iotest.OneByteReader(strings.NewReader(input))
					case "stdin file":
						f, err := os.Open(file)
						if err != nil {
							t.Fatal(err)
						}
						defer f.Close()
						stdin = f
					}
					if how == "stdin one byte" && len(long) > 2<<20 {
						continue // a read a byte: too slow for 10 MB
					}
					var out, errb bytes.Buffer
					code := run(context.Background(), args, stdin, &out, &errb)
					where := "stdin"
					if how == "--from" {
						where = file
					}
					prefix := "urlhash: error: " + where + ":2: "
					if code != exitError || !strings.HasPrefix(errb.String(), prefix+"line too long (") || strings.Count(errb.String(), "\n") != 1 {
						t.Errorf("%s, %s: exit %d, stderr %q; want 2 and %q", tc.name, how, code, errb.String(), prefix+"line too long (...)")
					}
					outs[how], errs[how] = out.String(), strings.TrimPrefix(errb.String(), prefix)
				}
				for how, out := range outs {
					if out != outs["--from"] || errs[how] != errs["--from"] {
						t.Errorf("%s: %s answers %q %q, --from %q %q", tc.name, how, out, errs[how], outs["--from"], errs["--from"])
					}
				}
				lines := strings.Split(strings.TrimSuffix(outs["--from"], "\n"), "\n")
				if len(lines) != 3 {
					t.Errorf("%s: %d output lines for 3 inputs: %q", tc.name, len(lines), outs["--from"])
					continue
				}
				switch tc.name {
				case "hash":
					if lines[1] != "" || len(lines[0]) != 64 || len(lines[2]) != 64 {
						t.Errorf("hash: %q, want a hash, an empty line, a hash", lines)
					}
				case "hash --json":
					var o struct{ Input, Hash, Error string }
					if err := json.Unmarshal([]byte(lines[1]), &o); err != nil || o.Hash != "" || !strings.HasPrefix(o.Error, "line too long (") {
						t.Errorf("hash --json: line 2 %q (%v), want an object with the error", lines[1], err)
					}
				default:
					if outs["--from"] != tc.want {
						t.Errorf("%s: %q, want %q", tc.name, outs["--from"], tc.want)
					}
				}
				if fileReason == "" {
					fileReason = errs["--from"]
				} else if errs["--from"] != fileReason {
					t.Errorf("%s says %q, hash %q", tc.name, errs["--from"], fileReason)
				}
			}
			// dedupe stores the two URLs only, and prints them.
			idx := filepath.Join(t.TempDir(), "seen")
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"dedupe", "--db", idx}, strings.NewReader(input), &out, &errb)
			if code != exitError || out.String() != "https://a.example/\nhttps://b.example/\n" || !strings.HasPrefix(errb.String(), "urlhash: error: stdin:2: line too long") {
				t.Errorf("dedupe: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
			}
			if code, out, _ := runCLI(t, "", "stats", "--db", idx, "--json"); code != exitOK || !strings.Contains(out, `"entries":2,`) {
				t.Errorf("after dedupe: stats %q, want 2 entries", out)
			}
		})
	}
}

// TestLineLimitArguments: an argument over the limit is refused, named by
// its position, with a line in its place.
func TestLineLimitArguments(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", 2<<20)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"hash", "https://a.example/", long, "https://b.example/"}, strings.NewReader(""), &out, &errb)
	lines := strings.Split(out.String(), "\n")
	if code != exitError || len(lines) != 4 || lines[1] != "" || len(lines[0]) != 64 || len(lines[2]) != 64 ||
		errb.String() != fmt.Sprintf("urlhash: error: argument 2: line too long (more than %d bytes)\n", ingest.DefaultMaxLineBytes) {
		t.Errorf("hash with a long argument: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestBadHashLinesAnswered: a bad line of a hashes file is answered in its
// place, as the same line from standard input is.
func TestBadHashLinesAnswered(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "", "add", "--db", filepath.Join(dir, "idx"), "https://a.example/"); code != exitOK {
		t.Fatal(errs)
	}
	file := filepath.Join(dir, "hashes.txt")
	if err := os.WriteFile(file, []byte(strings.Repeat("0", 64)+"\nzz\n"+strings.Repeat("1", 64)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "has", "--db", filepath.Join(dir, "idx"), "--input-format", "hashes", "--from", file)
	want := "absent\t" + strings.Repeat("0", 64) + "\nerror\t\nabsent\t" + strings.Repeat("1", 64) + "\n"
	if code != exitError || out != want || !strings.HasPrefix(errs, "urlhash: error: "+file+":2: invalid hash") {
		t.Errorf("has of a hashes file with a bad line: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}
}
