package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadInputsBatches reads the same text through readers that split
// it differently, with and without fill: every input arrives once, in
// order, with its line; with fill every batch but the last is full.
func TestReadInputsBatches(t *testing.T) {
	var lines []string
	for i := range 1000 {
		lines = append(lines, fmt.Sprintf("https://example.com/%d", i))
	}
	lines[10] = "# a comment"
	lines[11] = ""
	text := strings.Join(lines, "\n") + "\n"
	readers := map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(text) },
		"one-byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(text)) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(text)) },
		"no-final-newline": func() io.Reader {
			return strings.NewReader(strings.TrimSuffix(text, "\n"))
		},
	}
	for name, reader := range readers {
		for _, fill := range []bool{false, true} {
			for _, size := range []int{1, 7, 998, 4096} {
				t.Run(fmt.Sprintf("%s/fill=%v/%d", name, fill, size), func(t *testing.T) {
					var got []input
					var sizes []int
					err := readInputs(nil, reader(), false, fill, size, func(b []input) error {
						got = append(got, b...)
						sizes = append(sizes, len(b))
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(lines)-2 {
						t.Fatalf("%d inputs, want %d", len(got), len(lines)-2)
					}
					for _, r := range got {
						if want := lines[r.line-1]; r.text != want {
							t.Fatalf("line %d: %q, want %q", r.line, r.text, want)
						}
					}
					for i, n := range sizes {
						if n > size || n == 0 || fill && i < len(sizes)-1 && n != size {
							t.Fatalf("batch sizes %v (fill %v, at most %d)", sizes, fill, size)
						}
					}
				})
			}
		}
	}
}
