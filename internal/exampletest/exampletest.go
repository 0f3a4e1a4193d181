// Package exampletest runs an example program's body and checks what it
// prints against the program's testdata/output.txt, so that each example's
// test is one line.
package exampletest

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// Check runs run, which writes what the example shows to its argument, and
// fails t unless that is exactly testdata/output.txt.
func Check(t *testing.T, run func(io.Writer) error) {
	t.Helper()
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/output.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("output:\n%s\nwant (testdata/output.txt):\n%s", got, want)
	}
}
