// Command badger is the baseline of the end-to-end store benchmarks: the
// plain program a Go user would write with Badger's default options, using
// the same URL identities as urlhash so that only the store differs.
//
//	badger import DIR < urls   WriteBatch of hash -> empty value
//	badger dedupe DIR < urls   per URL: Get, and Set when absent; prints new URLs
//	badger has DIR < urls      per URL: Get; prints how many were present
//
// The modes import-hashes and has-hashes read 64-hex-digit hashes instead
// of URLs (encoding/hex, as a Go user would).
package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey/urlhash"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: badger import|dedupe|has DIR < urls")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "badger:", err)
		os.Exit(2)
	}
}

func run(mode, dir string) error {
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		return err
	}
	defer db.Close()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 16<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()

	// key returns the input line's key: its URL's hash, or the hash it
	// spells in hex.
	key := func(line string) ([]byte, bool) {
		if mode == "import-hashes" || mode == "has-hashes" {
			k, err := hex.DecodeString(line)
			return k, err == nil && len(k) == 32
		}
		h, err := urlhash.Default.Hash(line)
		return h[:], err == nil
	}
	switch mode {
	case "import", "import-hashes":
		wb := db.NewWriteBatch()
		for in.Scan() {
			h, ok := key(in.Text())
			if !ok {
				continue
			}
			if err := wb.Set(h[:], nil); err != nil {
				return err
			}
		}
		return wb.Flush()
	case "dedupe":
		for in.Scan() {
			h, err := urlhash.Default.Hash(in.Text())
			if err != nil {
				continue
			}
			err = db.Update(func(txn *badger.Txn) error {
				if _, err := txn.Get(h[:]); err == nil {
					return nil
				} else if !errors.Is(err, badger.ErrKeyNotFound) {
					return err
				}
				out.WriteString(in.Text())
				out.WriteByte('\n')
				return txn.Set(h[:], nil)
			})
			if err != nil {
				return err
			}
		}
		return nil
	case "has", "has-hashes":
		present := 0
		err := db.View(func(txn *badger.Txn) error {
			for in.Scan() {
				h, ok := key(in.Text())
				if !ok {
					continue
				}
				if _, err := txn.Get(h[:]); err == nil {
					present++
				} else if !errors.Is(err, badger.ErrKeyNotFound) {
					return err
				}
			}
			return nil
		})
		fmt.Fprintln(out, present)
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}
