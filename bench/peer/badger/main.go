// Command badger is the baseline of the end-to-end store benchmarks: the
// plain program a Go user would write with Badger's default options, using
// the same URL identities as urlhash so that only the store differs.
//
//	badger import DIR < urls   WriteBatch of hash -> empty value
//	badger dedupe DIR < urls   per URL: Get, and Set when absent; prints new URLs
//	badger has DIR < urls      per URL: Get; prints how many were present
//	badger dedupe-revisit DIR < urls  dedupe with a revisit: prints a URL when absent or
//	                                  last printed 24 hours ago or more (value: that time)
//	badger import-urls DIR < urls   WriteBatch of hash -> URL text (a dictionary)
//	badger get-hashes DIR < hashes  per hash: Get; prints "present HASH TEXT" or "absent HASH"
//
// The modes import-hashes and has-hashes read 64-hex-digit hashes instead
// of URLs (encoding/hex, as a Go user would).
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

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
		if mode == "import-hashes" || mode == "has-hashes" || mode == "get-hashes" {
			k, err := hex.DecodeString(line)
			return k, err == nil && len(k) == 32
		}
		h, err := urlhash.Default.Hash(line)
		return h[:], err == nil
	}
	switch mode {
	case "import", "import-hashes", "import-urls":
		wb := db.NewWriteBatch()
		for in.Scan() {
			h, ok := key(in.Text())
			if !ok {
				continue
			}
			var v []byte
			if mode == "import-urls" {
				v = []byte(in.Text())
			}
			if err := wb.Set(h[:], v); err != nil {
				return err
			}
		}
		return wb.Flush()
	case "get-hashes":
		return db.View(func(txn *badger.Txn) error {
			var v []byte
			for in.Scan() {
				h, ok := key(in.Text())
				if !ok {
					continue
				}
				item, err := txn.Get(h[:])
				if errors.Is(err, badger.ErrKeyNotFound) {
					out.WriteString("absent\t" + in.Text() + "\n")
					continue
				}
				if err == nil {
					v, err = item.ValueCopy(v[:0])
				}
				if err != nil {
					return err
				}
				out.WriteString("present\t" + in.Text() + "\t")
				out.Write(v)
				out.WriteByte('\n')
			}
			return nil
		})
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
	case "dedupe-revisit":
		const revisit = 24 * 60 * 60
		for in.Scan() {
			h, err := urlhash.Default.Hash(in.Text())
			if err != nil {
				continue
			}
			now := time.Now().Unix()
			err = db.Update(func(txn *badger.Txn) error {
				item, err := txn.Get(h[:])
				switch {
				case err == nil:
					last := int64(0)
					if err := item.Value(func(v []byte) error {
						if len(v) == 8 {
							last = int64(binary.BigEndian.Uint64(v))
						}
						return nil
					}); err != nil {
						return err
					}
					if now-last < revisit {
						return nil
					}
				case !errors.Is(err, badger.ErrKeyNotFound):
					return err
				}
				out.WriteString(in.Text())
				out.WriteByte('\n')
				return txn.Set(h[:], binary.BigEndian.AppendUint64(nil, uint64(now)))
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
