package main

import (
	"testing"

	"github.com/urlhash/urlhash/internal/exampletest"
)

// TestRun runs the example as "go run" would and checks what it prints.
func TestRun(t *testing.T) { exampletest.Check(t, run) }
