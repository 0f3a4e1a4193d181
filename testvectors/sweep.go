package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urlhash/urlhash/hashkey/safebrowsing"
	"github.com/urlhash/urlhash/hashkey/urlhash"
)

// sweep writes, for a fixed set of inputs, the canonical form (or "error")
// under each profile, one line per input and profile. Two builds that
// print the same lines give every URL the same identity; CI runs it under
// two Go toolchains and compares (identity must not depend on the
// toolchain's Unicode tables). The inputs: every code point (surrogates
// aside) inside a host label and in a path, the fuzz seeds of the
// canonicalisers, and the bundled corpus.
func sweep(w io.Writer) error {
	out := bufio.NewWriterSize(w, 1<<20)
	profiles := []struct {
		name      string
		canonical func(dst []byte, raw string) ([]byte, error)
	}{
		{"urlhash", urlhash.Default.AppendCanonical},
		{"webrisk", safebrowsing.WebRisk.AppendCanonical},
		{"safebrowsing-v5", safebrowsing.V5.AppendCanonical},
	}
	var buf []byte
	emit := func(in string) {
		for _, p := range profiles {
			var err error
			buf = append(buf[:0], p.name...)
			buf = append(buf, '\t')
			buf = strconv.AppendQuoteToASCII(buf, in) // not AppendQuote: "printable" depends on the toolchain
			buf = append(buf, '\t')
			if buf, err = p.canonical(buf, in); err != nil {
				buf = append(buf, "error"...)
			}
			buf = append(buf, '\n')
			out.Write(buf)
		}
	}
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		c := string(r)
		emit("http://a" + c + "b.example/")
		emit("http://" + c + ".example/" + c)
	}
	seeds, err := fuzzSeeds("hashkey/urlhash/testdata/fuzz", "hashkey/safebrowsing/testdata/fuzz")
	if err != nil {
		return err
	}
	for _, s := range seeds {
		emit(s)
	}
	f, err := os.Open("testdata/debian-package-urls.txt")
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		emit(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return out.Flush()
}

// fuzzSeeds returns the string values of the go test fuzz corpus files
// under dirs.
func fuzzSeeds(dirs ...string) ([]string, error) {
	var seeds []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "string("); ok {
					if s, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
						seeds = append(seeds, s)
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return seeds, nil
}
