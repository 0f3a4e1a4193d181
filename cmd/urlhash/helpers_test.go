package main

import (
	"bytes"
	"strings"
)

type testBuffer = bytes.Buffer

func contains(s, sub string) bool { return strings.Contains(s, sub) }
