// Package golden is the module's one convention for golden files: a test
// compares what it made with a file under testdata, and
//
//	go test ./pkg -update
//
// rewrites the file from the code under test instead (then review the
// diff). Datadriven scripts follow it too: with -update, Rewrite turns
// on cockroachdb/datadriven's own -rewrite.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata) from the code under test")

// Update reports whether this test run rewrites golden files (-update).
func Update() bool { return *update }

// Check compares got with the file at path, after writing got there when
// the run rewrites golden files. A difference fails t, naming the file.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n got %q\nwant %q", path, truncate(got), truncate(want))
	}
}

// Rewrite makes datadriven rewrite its scripts' expected output when the
// run rewrites golden files; call it before datadriven.RunTest or Walk.
func Rewrite(t testing.TB) {
	t.Helper()
	if !*update {
		return
	}
	if err := flag.Set("rewrite", "true"); err != nil {
		t.Fatalf("golden: -update with datadriven: %v", err)
	}
}

// truncate shortens b for a message.
func truncate(b []byte) []byte {
	if len(b) > 2048 {
		return append(b[:2048:2048], "..."...)
	}
	return b
}
