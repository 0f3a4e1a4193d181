package ingest

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestResolve checks reference resolution against the examples of RFC
// 3986 section 5.4 and a few more (testdata/rfc3986-resolve.txt).
func TestResolve(t *testing.T) {
	f, err := os.Open("testdata/rfc3986-resolve.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rs resolver
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if IsSkipped(line) {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			t.Fatalf("bad line %q", line)
		}
		if fields[0] == "base" {
			if err := rs.setBase(fields[1]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		ref, want := fields[0], fields[1]
		if ref == "(empty)" {
			ref = ""
		}
		got, err := rs.resolve(ref)
		if err != nil || got != want {
			t.Errorf("resolve(%q) against %s = %q, %v; want %q", ref, rs.text, got, err, want)
		}
		n++
	}
	if n < 40 {
		t.Fatalf("only %d cases read", n)
	}
}

func TestResolveNoBase(t *testing.T) {
	var rs resolver
	if _, err := rs.resolve("g"); !errors.Is(err, ErrRelativeIRI) {
		t.Errorf("resolve(g) with no base: %v, want ErrRelativeIRI", err)
	}
	if got, err := rs.resolve("http://a/b/../c"); err != nil || got != "http://a/c" {
		t.Errorf("resolve(http://a/b/../c) = %q, %v", got, err)
	}
	if err := rs.setBase("relative/base"); !errors.Is(err, ErrRelativeIRI) {
		t.Errorf("setBase(relative) = %v", err)
	}
}

func TestRemoveDotSegments(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b/c/./../../g":   "/a/g",
		"mid/content=5/../6": "mid/6",
		"":                   "",
		"/":                  "/",
		"/..":                "/",
		"a/..":               "/",
		"../a":               "a",
		"/a/b/..":            "/a/",
	} {
		if got := removeDotSegments(in); got != want {
			t.Errorf("removeDotSegments(%q) = %q, want %q", in, got, want)
		}
	}
}
