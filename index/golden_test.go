package index

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/store"
)

var update = flag.Bool("update", false, "rewrite testdata/format.golden")

// goldenRecords encodes a fixed set of keys, values, metadata and a tiny
// filter snapshot.
func goldenRecords(t *testing.T) [][2]string {
	a, b, c := hashOf("a"), hashOf("b"), hashOf("c")
	f := newFilter(minFilterBits)
	f.addFull(&a)
	f.addFull(&b)
	f.addPrefix(c[:4])
	data, fl, sl, err := f.marshal()
	if err != nil {
		t.Fatal(err)
	}
	hdr := snapshotHeader{State: 42, Entries: 2, PrefixEntries: 1, Bits: f.k, Chunks: 1,
		FullLen: fl, ShortLen: sl, CRC: crc32.Checksum(data, castagnoli)}
	fk := fullKey(&a)
	rec := func(name string, b []byte) [2]string { return [2]string{name, hex.EncodeToString(b)} }
	return [][2]string{
		rec("key full sha256(a)", fk[:]),
		rec("key prefix sha256(c)[:4]", prefixKey(c[:4])),
		rec("key meta format", metaKey(metaFormat)),
		rec("key meta filter chunk 1", filterChunkKey(1)),
		rec("meta format value", []byte{formatBadger}),
		rec("meta format value with a key table", []byte{formatKeyTable}),
		rec("key meta keytable-dirty", metaKey(metaKeyTableDirty)),
		rec("value empty", appendValue(nil, store.Value{})),
		rec("value text", appendValue(nil, store.Value{Text: []byte("https://example.com/")})),
		rec("value data", appendValue(nil, store.Value{Data: []byte{0xde, 0xad}})),
		rec("value text+data", appendValue(nil, store.Value{Text: []byte("u"), Data: []byte("d")})),
		rec("value times", appendValue(nil, store.Value{FirstSeen: store.Unix(1893456000), LastSeen: store.Unix(1893459600)})),
		rec("value times+text+data", appendValue(nil, store.Value{Text: []byte("u"), Data: []byte("d"),
			FirstSeen: store.Unix(1893456000), LastSeen: store.Unix(1893456000)})),
		rec("value expiry only", appendValue(nil, store.Value{Expires: store.Unix(1893456000)})),
		rec("snapshot header", hdr.appendBinary(nil)),
		rec("snapshot filter", data),
	}
}

// TestGoldenFormat pins the on-disk encodings; run with -update after an
// intended format change (and bump FormatVersion).
func TestGoldenFormat(t *testing.T) {
	path := filepath.Join("testdata", "format.golden")
	var got strings.Builder
	fmt.Fprintf(&got, "# index format %d: name: hex (see format.go)\n", FormatVersion)
	recs := goldenRecords(t)
	for _, r := range recs {
		fmt.Fprintf(&got, "%s: %s\n", r[0], r[1])
	}
	if *update {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Fatalf("format changed:\ngot:\n%s\nwant:\n%s", got.String(), want)
	}

	// The golden bytes decode to what they encode.
	field := map[string][]byte{}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n")[1:] {
		name, hx, _ := strings.Cut(line, ": ")
		b, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatal(err)
		}
		field[name] = b
	}
	var hdr snapshotHeader
	if err := hdr.decode(field["snapshot header"]); err != nil {
		t.Fatal(err)
	}
	data := field["snapshot filter"]
	if crc32.Checksum(data, castagnoli) != hdr.CRC {
		t.Fatal("golden filter checksum mismatch")
	}
	f, err := unmarshalFilter(hdr.Bits, data, hdr.FullLen, hdr.ShortLen)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c, d := hashOf("a"), hashOf("b"), hashOf("c"), hashOf("d")
	if !f.mayHaveFull(&a) || !f.mayHaveFull(&b) || !f.mayHavePrefixOf(&c) || f.mayHaveFull(&d) {
		t.Fatal("golden filter contents differ")
	}
	v, err := decodeValue(field["value text+data"])
	if err != nil || string(v.Text) != "u" || string(v.Data) != "d" {
		t.Fatalf("decode value text+data = %q, %v", v, err)
	}
}

func TestDecodeValueErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"unknown version", []byte{3}},
		{"times without first", []byte{2}},
		{"times without last", []byte{2, 2}},
		{"times without length", []byte{2, 2, 0}},
		{"times length too long", []byte{2, 2, 0, 4, 'a'}},
		{"missing length", []byte{1}},
		{"length too long", []byte{1, 5, 'a'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeValue(tc.in); err == nil {
				t.Fatalf("decodeValue(%x) = nil error", tc.in)
			}
		})
	}
	if _, err := unmarshalFilter(minFilterBits, []byte{1, 2, 3}, 3, 0); err == nil {
		t.Fatal("unmarshalFilter(garbage) = nil error")
	}
	var hdr snapshotHeader
	if err := hdr.decode(bytes.Repeat([]byte{0}, snapshotHeaderLen)); err == nil {
		t.Fatal("decode(zero header) = nil error")
	}
}

func FuzzDecodeValue(f *testing.F) {
	seen := store.Unix(1893456000)
	for _, v := range []store.Value{{}, {Text: []byte("u")}, {Data: []byte("d")}, {Text: []byte("u"), Data: []byte("d")},
		{FirstSeen: seen, LastSeen: seen.Add(time.Hour), Text: []byte("u")}} {
		f.Add(appendValue(nil, v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeValue(b)
		if err != nil {
			return
		}
		enc := appendValue(nil, v)
		w, err := decodeValue(enc)
		if err != nil || !bytes.Equal(w.Text, v.Text) || !bytes.Equal(w.Data, v.Data) ||
			!w.FirstSeen.Equal(v.FirstSeen) || !w.LastSeen.Equal(v.LastSeen) {
			t.Fatalf("round trip %x -> %x -> %q, %v", b, enc, w, err)
		}
	})
}

// FuzzSnapshot feeds arbitrary bytes to the snapshot header and filter
// decoders: they must fail cleanly or yield a usable filter.
func FuzzSnapshot(f *testing.F) {
	a := hashOf("a")
	flt := newFilter(minFilterBits)
	flt.addFull(&a)
	flt.addPrefix(a[:4])
	data, fl, _, _ := flt.marshal()
	hdr := snapshotHeader{Bits: minFilterBits, FullLen: fl}
	f.Add(hdr.appendBinary(nil), data, fl)
	f.Add([]byte(snapshotMagic), []byte{0x3a, 0x30, 0, 0}, uint64(2))
	f.Fuzz(func(t *testing.T, header, data []byte, fullLen uint64) {
		var h snapshotHeader
		_ = h.decode(header)
		if fullLen > uint64(len(data)) {
			return
		}
		flt, err := unmarshalFilter(minFilterBits+uint8(fullLen%40), data, fullLen, uint64(len(data))-fullLen)
		if err != nil {
			return
		}
		flt.mayHaveFull(&a)
		flt.mayHavePrefixOf(&a)
		flt.addFull(&a)
	})
}
