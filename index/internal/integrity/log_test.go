package integrity

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logRecordBytes encodes a log record as Badger writes one: meta, user
// meta, uvarint key length, value length and expiry, key, value, CRC-32C.
func logRecordBytes(key, val string, meta byte) []byte {
	b := []byte{meta, 0}
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = binary.AppendUvarint(b, uint64(len(val)))
	b = binary.AppendUvarint(b, 0)
	b = append(b, key...)
	b = append(b, val...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// CheckLog and LogRecords on logs that end cleanly, torn by a crash,
// damaged in the middle, and damaged only in records a cache holds.
func TestCheckLog(t *testing.T) {
	good := [][]byte{logRecordBytes("key-a", "1", 0), logRecordBytes("key-b", "2", 0)}
	cache := logRecordBytes("cache/0001", strings.Repeat("x", 40), 0)
	damaged := func(rec []byte) []byte { rec = bytes.Clone(rec); rec[len(rec)-6] ^= 0xff; return rec }
	isCache := func(k []byte) bool { return bytes.HasPrefix(k, []byte("cache/")) }
	for _, tc := range []struct {
		name    string
		recs    [][]byte
		torn    bool
		want    string // "" or a part of the problem
		records int    // whole records LogRecords reads
	}{
		{name: "clean", recs: good, records: 2},
		{name: "zeros after the records", recs: append(good[:2:2], make([]byte, 100)), records: 2},
		{name: "torn last record, after a crash", recs: append(good[:2:2], good[0][:9], make([]byte, 50)), torn: true, records: 2},
		{name: "torn last record, no crash", recs: append(good[:2:2], good[0][:9]), want: "damaged record at offset", records: 2},
		{name: "damaged record before others", recs: [][]byte{good[0], damaged(good[1]), good[0]}, torn: true, want: "damaged record at offset", records: 1},
		{name: "damaged cache records only", recs: [][]byte{good[0], damaged(cache), cache}, records: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := make([]byte, LogHeaderSize)
			for _, r := range tc.recs {
				data = append(data, r...)
			}
			path := filepath.Join(t.TempDir(), "000001.vlog")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			got := CheckLog(path, tc.torn, isCache)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("CheckLog = %q, want %q", got, tc.want)
			}
			n := 0
			LogRecords(data, tc.torn, func(k, v []byte, meta byte, exp uint64) bool { n++; return true })
			if n != tc.records {
				t.Errorf("LogRecords read %d records, want %d", n, tc.records)
			}
		})
	}
}

// FuzzLogRecords feeds arbitrary bytes to the log readers: they stop
// cleanly at what they cannot read, within the data.
func FuzzLogRecords(f *testing.F) {
	data := make([]byte, LogHeaderSize)
	data = append(data, logRecordBytes("key-a", "1", 0)...)
	data = append(data, logRecordBytes("cache/0001", "xyz", BitTxn)...)
	f.Add(data, true)
	f.Add(data[:len(data)-3], false)
	f.Add(append(bytes.Clone(data), 0, 0, 0), true)
	f.Fuzz(func(t *testing.T, data []byte, torn bool) {
		off, end := LogRecords(data, torn, func(k, v []byte, meta byte, exp uint64) bool { return true })
		if off > end || end > len(data) || off < min(LogHeaderSize, len(data)) {
			t.Fatalf("LogRecords = %d, %d of %d bytes", off, end, len(data))
		}
		OnlyKeys(data, off, end, func(k []byte) bool { return bytes.HasPrefix(k, []byte("cache/")) })
		if n, _, _, _, _, ok := LogRecord(data); ok && n > len(data) {
			t.Fatalf("LogRecord read %d of %d bytes", n, len(data))
		}
		TornRecordLen(data)
	})
}
