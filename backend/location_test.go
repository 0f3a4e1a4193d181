package backend

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestCheckScheme reads testdata/locations.txt: each location that looks
// like a URL but is none Open takes is refused with ErrLocation, before
// anything is created.
func TestCheckScheme(t *testing.T) {
	f, err := os.Open("testdata/locations.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		location, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		t.Run(location, func(t *testing.T) {
			err := checkScheme(location)
			if want == "dir" {
				if err != nil {
					t.Fatalf("checkScheme(%q) = %v, want nil", location, err)
				}
				return
			}
			if !errors.Is(err, ErrLocation) || !strings.Contains(err.Error(), want) {
				t.Fatalf("checkScheme(%q) = %v, want ErrLocation saying %q", location, err, want)
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
