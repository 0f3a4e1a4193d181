package store

import (
	"testing"

	"github.com/urlhash/urlhash/hashkey"
)

// benchJSONLEntry is an entry as export writes most: a full key, its URL
// and seen times.
var benchJSONLEntry = FullEntry(hashkey.Sum([]byte("https://example.com/page/1")), Value{
	Text:      []byte("https://example.com/page/1"),
	FirstSeen: Unix(1893456000),
	LastSeen:  Unix(1893459600),
})

func BenchmarkAppendJSONL(b *testing.B) {
	line := AppendJSONL(nil, &benchJSONLEntry)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		line = AppendJSONL(line[:0], &benchJSONLEntry)
	}
}

func BenchmarkParseJSONL(b *testing.B) {
	line := AppendJSONL(nil, &benchJSONLEntry)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseJSONL(line); err != nil {
			b.Fatal(err)
		}
	}
}
