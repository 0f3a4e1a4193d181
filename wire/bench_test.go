package wire

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// benchBatch is a batch of n entries as a client sends them: full keys,
// half with a URL text.
func benchBatch(n int) []store.Entry {
	es := make([]store.Entry, n)
	for i := range es {
		u := fmt.Sprintf("https://example.com/page/%d", i)
		es[i] = store.FullEntry(hashkey.Sum([]byte(u)), store.Value{})
		if i%2 == 0 {
			es[i].Value.Text = []byte(u)
		}
	}
	return es
}

const benchN = 1000

// bareBatch is a batch of n bare full keys: a seen-set client's.
func bareBatch(n int) []store.Entry {
	es := make([]store.Entry, n)
	for i := range es {
		es[i] = store.FullEntry(hashkey.Sum([]byte(fmt.Sprintf("https://example.com/page/%d", i))), store.Value{})
	}
	return es
}

// BenchmarkDecodeBare decodes a batch of bare keys: as entries
// (DecodeEntries) and as keys (DecodeKeys, into a reused slice).
func BenchmarkDecodeBare(b *testing.B) {
	buf, _ := AppendEntries(nil, bareBatch(benchN))
	b.Run("entries", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeEntries(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("keys", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		dst := make([]hashkey.Hash, 0, benchN)
		for b.Loop() {
			if _, ok := DecodeKeys(dst[:0], buf); !ok {
				b.Fatal("declined")
			}
		}
	})
}

func BenchmarkAppendEntries(b *testing.B) {
	es := benchBatch(benchN)
	buf, _ := AppendEntries(nil, es)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendEntries(buf[:0], es)
	}
}

func BenchmarkDecodeEntries(b *testing.B) {
	buf, _ := AppendEntries(nil, benchBatch(benchN))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeEntries(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendBools(b *testing.B) {
	answers := make([]bool, benchN)
	for i := range answers {
		answers[i] = i%3 == 0
	}
	buf := AppendBools(nil, answers)
	b.SetBytes(benchN)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendBools(buf[:0], answers)
	}
}

func BenchmarkParseBools(b *testing.B) {
	buf := AppendBools(nil, make([]bool, benchN))
	b.SetBytes(benchN)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseBools(buf, benchN); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendStream frames a scan answer: JSONL entries and the end
// record.
func BenchmarkAppendStream(b *testing.B) {
	es := benchBatch(benchN)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for i := range es {
			buf = store.AppendJSONL(buf, &es[i])
		}
		buf = AppendStreamEnd(buf)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkReadStream reads a scan answer of benchN entries.
func BenchmarkReadStream(b *testing.B) {
	es := benchBatch(benchN)
	var buf []byte
	for i := range es {
		buf = store.AppendJSONL(buf, &es[i])
	}
	buf = AppendStreamEnd(buf)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ReadStream(bytes.NewReader(buf), func(store.Entry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
