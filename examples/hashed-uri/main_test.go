package main

import (
	"bytes"
	"os"
	"testing"
)

// TestRun runs the example as "go run" would and checks what it prints
// against testdata/output.txt.
func TestRun(t *testing.T) {
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
