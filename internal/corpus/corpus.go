// Package corpus derives large, reproducible URL sets from the real URLs in
// testdata, for benchmarks and cross-checks. The same seed always gives the
// same URLs, in every package and in the end-to-end benchmark.
package corpus

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// Seed is the default seed of Derive.
const Seed = 20261122

// ReadLines returns the non-empty lines of a file.
func ReadLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); line != "" {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", path, err)
	}
	return out, nil
}

// Derive returns n URLs made from base: the base URLs themselves first, then
// variations of randomly chosen ones (extra path segments, queries,
// fragments, letter case in scheme and host, explicit default ports, dot
// segments, percent escapes, trailing slashes), drawn from a PCG generator
// seeded with seed. Roughly one variation in ten is of the unusual kinds
// (case, ports, dots, escapes), as in real crawl frontiers.
func Derive(base []string, n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]string, 0, n)
	for _, u := range base {
		if len(out) == n {
			return out
		}
		out = append(out, u)
	}
	words := []string{"index", "docs", "api", "v2", "download", "release", "src", "blob", "main",
		"wiki", "issues", "about", "en", "packages", "tree", "latest", "news", "search"}
	var b strings.Builder
	for len(out) < n {
		u := base[rng.IntN(len(base))]
		b.Reset()
		b.WriteString(strings.TrimRight(u, "/"))
		for k := rng.IntN(4); k > 0; k-- {
			b.WriteByte('/')
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) == 0 {
				b.WriteString(strconv.Itoa(rng.IntN(100000)))
			}
		}
		if rng.IntN(4) == 0 {
			b.WriteByte('/')
		}
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&b, "?id=%d&q=%s", rng.IntN(1<<20), words[rng.IntN(len(words))])
		}
		if rng.IntN(8) == 0 {
			b.WriteString("#sec-" + strconv.Itoa(rng.IntN(50)))
		}
		s := b.String()
		switch rng.IntN(40) {
		case 0:
			s = upperSchemeHost(s)
		case 1:
			s = withDefaultPort(s)
		case 2:
			s += "/a/./b/../c"
		case 3:
			s += "/caf%C3%A9%20menu"
		}
		out = append(out, s)
	}
	return out
}

func upperSchemeHost(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	j := strings.IndexByte(s[i+3:], '/')
	if j < 0 {
		return strings.ToUpper(s)
	}
	return strings.ToUpper(s[:i+3+j]) + s[i+3+j:]
}

func withDefaultPort(s string) string {
	for scheme, port := range map[string]string{"http://": ":80", "https://": ":443"} {
		if strings.HasPrefix(s, scheme) {
			rest := s[len(scheme):]
			j := strings.IndexAny(rest, "/?#")
			if j < 0 {
				j = len(rest)
			}
			if !strings.Contains(rest[:j], ":") && !strings.Contains(rest[:j], "@") {
				return scheme + rest[:j] + port + rest[j:]
			}
		}
	}
	return s
}
