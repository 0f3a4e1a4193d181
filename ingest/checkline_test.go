package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCheckLine: CheckLine refuses exactly the lines Read refuses as too
// long, with the same message, at every length around the limit, valid
// UTF-8 or not.
func TestCheckLine(t *testing.T) {
	const max = 30
	for n := 0; n <= 2*max; n++ {
		for _, fill := range []string{"a", "\xff", "é"} {
			line := []byte(strings.Repeat(fill, n/len(fill)))
			var readErr error
			binary := false
			for _, err := range Read(bytes.NewReader(append(line, '\n')), "f", Lines, &Options{MaxLineBytes: max}) {
				var le *LineError
				switch {
				case errors.As(err, &le):
					readErr = le.Err
				case errors.Is(err, ErrBinary):
					binary = true // refused whole: no line to compare
				}
			}
			if binary {
				continue
			}
			err := CheckLine(line, max)
			if fmt.Sprint(err) != fmt.Sprint(readErr) || err != nil && !errors.Is(err, ErrLineTooLong) {
				t.Errorf("%d bytes of %q: CheckLine %v, Read %v", len(line), fill, err, readErr)
			}
		}
	}
	if err := CheckLine(make([]byte, DefaultMaxLineBytes+1), 0); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("CheckLine of DefaultMaxLineBytes+1 bytes with 0: %v", err)
	}
}

func ExampleCheckLine() {
	fmt.Println(CheckLine([]byte("https://example.com/"), 0))
	fmt.Println(CheckLine([]byte(strings.Repeat("a", 11)), 10))
	// Output:
	// <nil>
	// ingest: line too long (more than 10 bytes)
}
