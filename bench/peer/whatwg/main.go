// Command whatwg is the baseline of the end-to-end benchmark: the
// straightforward program a Go user would write with
// github.com/nlnwa/whatwg-url, reading URLs from stdin, one per line.
//
//	whatwg hash       prints hex SHA-256 of url.Parse(x).Href(false)
//	whatwg sbcanon    prints canonicalizer.GoogleSafeBrowsing.Parse(x).Href(false)
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/nlnwa/whatwg-url/canonicalizer"
	"github.com/nlnwa/whatwg-url/url"
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "hash" && os.Args[1] != "sbcanon") {
		fmt.Fprintln(os.Stderr, "usage: whatwg hash|sbcanon < urls")
		os.Exit(2)
	}
	mode := os.Args[1]
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	parser := url.NewParser()
	failed := 0
	for in.Scan() {
		var (
			u   *url.Url
			err error
		)
		if mode == "hash" {
			u, err = parser.Parse(in.Text())
		} else {
			u, err = canonicalizer.GoogleSafeBrowsing.Parse(in.Text())
		}
		if err != nil {
			failed++
			continue
		}
		href := u.Href(false)
		if mode == "hash" {
			sum := sha256.Sum256([]byte(href))
			out.WriteString(hex.EncodeToString(sum[:]))
		} else {
			out.WriteString(href)
		}
		out.WriteByte('\n')
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "whatwg: %d inputs failed\n", failed)
	}
}
