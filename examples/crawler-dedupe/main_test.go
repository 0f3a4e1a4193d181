package main

import "testing"

// TestRun runs the example as "go run" would; it must succeed.
func TestRun(t *testing.T) {
	if err := run(); err != nil {
		t.Fatal(err)
	}
}
