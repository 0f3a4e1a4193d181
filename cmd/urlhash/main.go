// Command urlhash computes portable URL identities and keeps them in an index.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "urlhash: under construction")
	os.Exit(2)
}
