package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// realFlags returns the flags a command parses, as completion should
// offer them: every flag that is not hidden, long and short, and --help;
// and the values of those that declare an enumeration.
func realFlags(t *testing.T, c *command) (words []string, values map[string][]string) {
	t.Helper()
	fs, _ := c.flags()
	values = map[string][]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		words = append(words, "--"+f.Name)
		if f.Shorthand != "" {
			words = append(words, "-"+f.Shorthand)
		}
		if v := f.Annotations[enumAnnotation]; v != nil {
			values["--"+f.Name] = v
		}
	})
	words = append(words, "--help")
	slices.Sort(words)
	return words, values
}

// TestCompletionBash loads the bash script into a real bash and asks it to
// complete every command's flags and every enumeration's values: what it
// offers must be exactly the flags the command parses.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var script bytes.Buffer
	if code := run(context.Background(), []string{"completion", "bash"}, nil, &script, os.Stderr); code != exitOK {
		t.Fatalf("completion bash: exit %d", code)
	}
	file := filepath.Join(t.TempDir(), "urlhash.bash")
	if err := os.WriteFile(file, script.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// complete prints what bash offers after the words, one a line.
	complete := func(words ...string) []string {
		t.Helper()
		var sh strings.Builder
		sh.WriteString("source " + file + "\nCOMP_WORDS=(")
		for _, w := range words {
			sh.WriteString(" '" + w + "'")
		}
		sh.WriteString(")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_urlhash\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", sh.String()).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		return got
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		t.Run(c.name, func(t *testing.T) {
			want, values := realFlags(t, c)
			if got := complete("urlhash", c.name, "-"); !slices.Equal(got, want) {
				t.Errorf("urlhash %s -<TAB> offers %v\nthe command parses %v", c.name, got, want)
			}
			for flag, vals := range values {
				want := slices.Sorted(slices.Values(vals))
				if got := complete("urlhash", c.name, flag, ""); !slices.Equal(got, want) {
					t.Errorf("urlhash %s %s <TAB> offers %v, want %v", c.name, flag, got, want)
				}
			}
		})
	}
	slices.Sort(names)
	if got := complete("urlhash", ""); !slices.Equal(got, slices.Sorted(slices.Values(append(names, "--help", "--version")))) {
		t.Errorf("urlhash <TAB> offers %v, want the commands %v", got, names)
	}
	// A few values by name, so that a lost annotation fails here too.
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"urlhash", "has", "--input-format", "tu"}, "turtle"},
		{[]string{"urlhash", "import", "--input-format", "js"}, "jsonl"},
		{[]string{"urlhash", "hash", "--profile", "safe"}, "safebrowsing-v5"},
		{[]string{"urlhash", "serve", "--threat-type", "SOCIAL_ENGINEERING_"}, "SOCIAL_ENGINEERING_EXTENDED_COVERAGE"},
		{[]string{"urlhash", "export", "--format", "b"}, "binary"},
		{[]string{"urlhash", "help", "ded"}, "dedupe"},
		{[]string{"urlhash", "completion", "fi"}, "fish"},
		// --flag=VALUE, split at '=' as bash does by default, or not.
		{[]string{"urlhash", "hash", "--profile", "=", "w"}, "webrisk"},
		{[]string{"urlhash", "lookup", "--profile=w"}, "--profile=webrisk"},
		{[]string{"urlhash", "has", "--input-format", "=", "tr"}, "trig"},
	} {
		if got := complete(tc.words...); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%v<TAB> offers %v, want %s", tc.words, got, tc.want)
		}
	}
	if got, want := complete("urlhash", "hash", "--profile", "="), slices.Sorted(slices.Values(indexProfiles)); !slices.Equal(got, want) {
		t.Errorf("urlhash hash --profile=<TAB> offers %v, want %v", got, want)
	}
	// A value that is no path completes no file name; a path does.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "urls.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, words := range [][]string{
		{"urlhash", "expressions", "--prefix-len", ""},
		{"urlhash", "dedupe", "--revisit-after", ""},
		{"urlhash", "dedupe", "--revisit-after", "=", ""},
		{"urlhash", "serve", "--listen", ""},
		{"urlhash", "has", "--base", ""},
	} {
		if got := complete(words...); len(got) != 0 {
			t.Errorf("%v<TAB> offers %v, want nothing", words, got)
		}
	}
	for _, words := range [][]string{
		{"urlhash", "has", "--from", ""},
		{"urlhash", "has", "--from", "=", ""},
		{"urlhash", "has", "https://example.com/", "u"},
	} {
		if got := complete(words...); !slices.Equal(got, []string{"urls.txt"}) {
			t.Errorf("%v<TAB> offers %v, want the file urls.txt", words, got)
		}
	}
}

// TestCompletionFishAndZsh checks the fish and zsh scripts list, for every
// command, exactly the flags it parses.
func TestCompletionFishAndZsh(t *testing.T) {
	var fish, zsh bytes.Buffer
	run(context.Background(), []string{"completion", "fish"}, nil, &fish, os.Stderr)
	run(context.Background(), []string{"completion", "zsh"}, nil, &zsh, os.Stderr)
	for _, c := range commands() {
		want, values := realFlags(t, c)
		var got []string
		for _, line := range strings.Split(fish.String(), "\n") {
			if !strings.Contains(line, "'__fish_seen_subcommand_from "+c.name+"' -l ") {
				continue
			}
			f := strings.Fields(line)
			for i := range f {
				switch f[i] {
				case "-l":
					got = append(got, "--"+f[i+1])
				case "-s":
					got = append(got, "-"+f[i+1])
				}
			}
			if vals := values["--"+f[slices.Index(f, "-l")+1]]; vals != nil && !strings.Contains(line, "-x -a '"+strings.Join(vals, " ")+"'") {
				t.Errorf("fish: %s: values missing: %s", c.name, line)
			}
			if name := f[slices.Index(f, "-l")+1]; (name == "prefix-len" || name == "revisit-after") && strings.Contains(line, " -F") {
				t.Errorf("fish: %s --%s completes file names: %s", c.name, name, line)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("fish offers %s %v\nthe command parses %v", c.name, got, want)
		}
		// zsh: the line "compadd -- FLAGS...; _files" of the command.
		block := zsh.String()[strings.Index(zsh.String(), "\n    "+c.name+")\n"):]
		for _, line := range strings.Split(block, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "compadd -- "); ok && strings.HasSuffix(line, "; _files ;;") {
				got = nil
				for _, w := range strings.Fields(strings.TrimSuffix(rest, "; _files ;;")) {
					if strings.HasPrefix(w, "-") {
						got = append(got, w)
					}
				}
				break
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("zsh offers %s %v\nthe command parses %v", c.name, got, want)
		}
	}
	// zsh: --flag=VALUE is split by compset, and a value that is no path
	// offers nothing.
	for _, want := range []string{"compset -P '*='", "        --prefix-len) return ;;\n", "        --revisit-after) return ;;\n", "        --profile) compadd -- "} {
		if !strings.Contains(zsh.String(), want) {
			t.Errorf("the zsh script lacks %q", want)
		}
	}
}
