// Command shared benchmarks one index shared by many processes (package
// bench/internal/shared says how): four clients deduplicating the same URLs
// through urlhash serve, and through Redis, as a seen-set and as
// revisiting crawlers.
//
//	go run ./bench/shared              # 1M URLs
//	go run ./bench/shared -n 200000
//	go run ./bench/shared -key-table=false   # the index without a key table (Badger alone)
//	go run ./bench/shared -memory-limit 160  # serve --memory-limit 160
//	go run ./bench/shared -revisit=false     # the seen-set rows only
//
// It needs Debian's redis-server (apt-get install redis-server).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/urlhash/urlhash/bench/internal/shared"
)

func main() {
	n := flag.Int("n", 1_000_000, "number of distinct URLs")
	keyTable := flag.Bool("key-table", true, "the served index keeps its key-only entries in a key table (false: serve --key-table off)")
	memoryLimit := flag.Int("memory-limit", 0, "serve --memory-limit `MIB` (0: none, serve's default)")
	revisit := flag.Bool("revisit", true, "also run revisiting clients: dedupe --revisit-after 24h against Redis SET NX EX 86400")
	flag.Parse()
	var serveFlags []string
	if !*keyTable {
		serveFlags = []string{"--key-table", "off"}
	}
	if *memoryLimit > 0 {
		serveFlags = append(serveFlags, "--memory-limit", fmt.Sprint(*memoryLimit))
	}
	if err := shared.Run(shared.Options{N: *n, ServeFlags: serveFlags, Revisit: *revisit, Out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "shared: error:", err)
		os.Exit(2)
	}
}
