package main

import (
	"bytes"
	"os"
	"testing"
)

// TestVectorsUpToDate fails when testdata/vectors.json differs from what
// the current code computes: regenerate it with go run ./testvectors
// after a deliberate change, and treat any other difference as a bug.
func TestVectorsUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../" + outPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go run ./testvectors", outPath)
	}
}
