package frontier

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/urlhash/urlhash/hashkey"
)

// The frontier's index holds four kinds of entries, told apart by their
// keys' shapes and by their values (see doc.go, "Storage"):
//
//	record   uid[16] 0[16]              value: the URL's text and state
//	due      queue[8] due[8] uid[16]    no value: the queue's due order
//	done     done[8] uid[16] 0[8]       no value: the queue's completed URLs
//	meta     0[4] hash[28]              value: a queue's or crawl's settings
//
// Every hash that starts a key other than a meta key has a non-zero first
// 4 bytes (nonZero), so that the meta keys alone fill the range a scan of
// 32 zero bits reads.

// uid is a URL's id within its crawl: the first 16 bytes of a SHA-256 of
// the crawl and the URL's identity.
type uid [16]byte

// Domain separators of the hashes: a URL's, a queue's due order, a
// queue's completed set and a meta entry never share a hash.
const (
	sepURL   = "urlhash-frontier/url\x00"
	sepQueue = "urlhash-frontier/queue\x00"
	sepDone  = "urlhash-frontier/done\x00"
	sepMeta  = "urlhash-frontier/meta\x00"
	// sepFingerprint makes an explicit identity (a scrapy fingerprint)
	// never equal to a URL's identity.
	sepFingerprint = "urlhash-frontier/fingerprint\x00"
)

func sum(sep string, parts ...string) [sha256.Size]byte {
	// One buffer and sha256.Sum256: the hash.Hash of sha256.New escapes
	// and costs allocations, and Open hashes every queue's names.
	var stack [256]byte
	b := append(stack[:0], sep...)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return sha256.Sum256(b)
}

// nonZero keeps the first 4 bytes of b off zero, the meta keys' range.
func nonZero(b []byte) {
	if b[0]|b[1]|b[2]|b[3] == 0 {
		b[0] = 0x80
	}
}

// uidOf returns the id of the URL of identity id in crawl.
func uidOf(crawl string, id hashkey.Hash) uid {
	s := sum(sepURL, crawl, string(id[:]))
	var u uid
	copy(u[:], s[:])
	nonZero(u[:])
	return u
}

// fingerprintIdentity returns the identity of an explicit fingerprint.
func fingerprintIdentity(fp []byte) hashkey.Hash {
	return hashkey.Hash(sum(sepFingerprint, string(fp)))
}

// queueHashes returns the 8-byte prefixes of a queue's due keys and of its
// done keys.
func queueHashes(crawl, key string) (due, done uint64) {
	a, b := sum(sepQueue, crawl, key), sum(sepDone, crawl, key)
	nonZero(a[:])
	nonZero(b[:])
	return binary.BigEndian.Uint64(a[:]), binary.BigEndian.Uint64(b[:])
}

func recordKey(u uid) hashkey.Hash {
	var h hashkey.Hash
	copy(h[:], u[:])
	return h
}

func dueKey(q uint64, due int64, u uid) hashkey.Hash {
	var h hashkey.Hash
	binary.BigEndian.PutUint64(h[:], q)
	binary.BigEndian.PutUint64(h[8:], uint64(due))
	copy(h[16:], u[:])
	return h
}

// parseDueKey splits a due key.
func parseDueKey(h *hashkey.Hash) (due int64, u uid) {
	copy(u[:], h[16:])
	return int64(binary.BigEndian.Uint64(h[8:])), u
}

func doneKey(d uint64, u uid) hashkey.Hash {
	var h hashkey.Hash
	binary.BigEndian.PutUint64(h[:], d)
	copy(h[8:], u[:])
	return h
}

func parseDoneKey(h *hashkey.Hash) (u uid) {
	copy(u[:], h[8:24])
	return u
}

// metaBits is the length of the meta keys' common prefix (zero bits).
const metaBits = 32

// metaKey returns the key of a meta entry of kind for crawl and key.
func metaKey(kind byte, crawl, key string) hashkey.Hash {
	s := sum(sepMeta, string(kind), crawl, key)
	var h hashkey.Hash
	copy(h[4:], s[:28])
	return h
}

func prefix8(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
