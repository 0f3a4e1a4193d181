// Command redis is the Redis baseline of the shared-index benchmark: the
// scrapy-redis way of deduplicating a crawl frontier. It reads URLs on
// stdin, adds the SHA-256 fingerprint of each one's canonical form (the
// url-hash identity, computed here as urlhash does) to one Redis set with
// SADD, pipelined 1,000 at a time over a unix socket, and prints each URL
// whose SADD answered 1 (new).
//
// With -ttl it is a revisiting crawler's seen-set instead: one key a URL,
// SET seen:FINGERPRINT 1 NX EX TTL, and a URL is printed when the SET
// answered OK (absent, or expired TTL seconds after it was set).
//
//	redis -socket /tmp/redis.sock < urls.txt
//	redis -socket /tmp/redis.sock -ttl 86400 < urls.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"

	"github.com/urlhash/urlhash/hashkey/urlhash"
)

const batch = 1000

func main() {
	socket := flag.String("socket", "", "Redis unix socket")
	key := flag.String("key", "seen", "the set (with -ttl: the keys' prefix, before a colon)")
	ttl := flag.Int("ttl", 0, "SET NX EX with this TTL in seconds, one key a URL, instead of SADD to one set")
	flag.Parse()
	conn, err := net.Dial("unix", *socket)
	if err != nil {
		log.Fatal("redis: ", err)
	}
	defer conn.Close()
	rw := bufio.NewReadWriter(bufio.NewReaderSize(conn, 64<<10), bufio.NewWriterSize(conn, 256<<10))
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer out.Flush()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	prefix := fmt.Sprintf("*3\r\n$4\r\nSADD\r\n$%d\r\n%s\r\n$32\r\n", len(*key), *key)
	var suffix string
	if *ttl > 0 {
		// The key is the prefix, a colon and the 32 fingerprint bytes.
		ex := fmt.Sprint(*ttl)
		prefix = fmt.Sprintf("*6\r\n$3\r\nSET\r\n$%d\r\n%s:", len(*key)+1+32, *key)
		suffix = fmt.Sprintf("\r\n$1\r\n1\r\n$2\r\nNX\r\n$2\r\nEX\r\n$%d\r\n%s", len(ex), ex)
	}
	var urls []string
	flush := func() {
		if len(urls) == 0 {
			return
		}
		if err := rw.Flush(); err != nil {
			log.Fatal("redis: ", err)
		}
		for _, u := range urls {
			line, err := rw.ReadString('\n')
			if err != nil || len(line) < 3 {
				log.Fatalf("redis: reply %q: %v", line, err)
			}
			var isNew bool
			switch {
			case line[0] == ':': // SADD: 1 new, 0 a member
				n, _ := strconv.Atoi(line[1 : len(line)-2])
				isNew = n == 1
			case line == "+OK\r\n": // SET NX: set
				isNew = true
			case line == "$-1\r\n": // SET NX: the key exists
			default:
				log.Fatalf("redis: reply %q", line)
			}
			if isNew {
				out.WriteString(u)
				out.WriteByte('\n')
			}
		}
		urls = urls[:0]
	}
	for in.Scan() {
		u := in.Text()
		h, err := urlhash.Default.Hash(u)
		if err != nil {
			continue
		}
		rw.WriteString(prefix)
		rw.Write(h[:])
		rw.WriteString(suffix)
		rw.WriteString("\r\n")
		urls = append(urls, u)
		if len(urls) == batch {
			flush()
		}
	}
	flush()
	if err := in.Err(); err != nil {
		log.Fatal("redis: ", err)
	}
}
