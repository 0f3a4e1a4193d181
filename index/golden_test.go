package index

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlhash/urlhash/index/internal/filter"
	"github.com/urlhash/urlhash/store"
)

var update = flag.Bool("update", false, "rewrite testdata/format.golden")

// goldenRecords encodes a fixed set of keys, values, metadata and a tiny
// filter snapshot.
func goldenRecords(t *testing.T) [][2]string {
	a, b, c := hashOf("a"), hashOf("b"), hashOf("c")
	f := filter.New(filter.MinBits)
	f.AddFull(&a)
	f.AddFull(&b)
	f.AddPrefix(c[:4])
	data, fl, sl, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	hdr := snapshotHeader{State: 42, Entries: 2, PrefixEntries: 1, Bits: f.Bits(), Chunks: 1,
		FullLen: fl, ShortLen: sl, CRC: crc32.Checksum(data, castagnoli)}
	fk := fullKey(&a)
	rec := func(name string, b []byte) [2]string { return [2]string{name, hex.EncodeToString(b)} }
	recs := [][2]string{
		rec("key full sha256(a)", fk[:]),
		rec("key prefix sha256(c)[:4]", prefixKey(c[:4])),
		rec("key meta format", metaKey(metaFormat)),
		rec("key meta filter chunk 1", filterChunkKey(1)),
		rec("meta format value", []byte{formatBadger}),
		rec("meta format value with a key table", []byte{formatKeyTable}),
		rec("meta format value with values in the key table", []byte{formatValues}),
		rec("key meta keytable-dirty", metaKey(metaSnapshotStale)),
	}
	for _, gv := range goldenValues {
		recs = append(recs, rec(gv.name, appendValue(nil, gv.v)))
	}
	// A key-table row's value: its text and data (the times and expiry
	// are columns).
	for _, gv := range goldenValues {
		recs = append(recs, rec("key table "+gv.name, tableValue(&gv.v)))
	}
	hdr2 := snapshotHeader{File: true, State: 42, Entries: 2, PrefixEntries: 1, Bits: f.Bits(),
		FullLen: fl, ShortLen: sl, Size: snapshotFileLen(fl, sl)}
	file := binary.BigEndian.AppendUint64([]byte(snapshotFileMagic), hdr2.State)
	file = append(file, data...)
	hdr2.CRC = crc32.Checksum(file, castagnoli)
	file = binary.BigEndian.AppendUint32(file, hdr2.CRC)
	return append(recs,
		rec("snapshot header", hdr.appendBinary(nil)),
		rec("snapshot filter", data),
		rec("snapshot header v2", hdr2.appendBinary(nil)),
		rec("snapshot file", file),
	)
}

// goldenValues are the values of the golden file, each under its name. An
// expiry is not in the value's bytes (Badger keeps it with the entry), so
// it decodes to none.
var goldenValues = []struct {
	name string
	v    store.Value
}{
	{"value empty", store.Value{}},
	{"value text", store.Value{Text: []byte("https://example.com/")}},
	{"value data", store.Value{Data: []byte{0xde, 0xad}}},
	{"value text+data", store.Value{Text: []byte("u"), Data: []byte("d")}},
	{"value times", store.Value{FirstSeen: store.Unix(1893456000), LastSeen: store.Unix(1893459600)}},
	{"value times+text+data", store.Value{Text: []byte("u"), Data: []byte("d"),
		FirstSeen: store.Unix(1893456000), LastSeen: store.Unix(1893456000)}},
	{"value expiry only", store.Value{Expires: store.Unix(1893456000)}},
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
	f, err := filter.Unmarshal(hdr.Bits, data, hdr.FullLen, hdr.ShortLen)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c, d := hashOf("a"), hashOf("b"), hashOf("c"), hashOf("d")
	if !f.MayHaveFull(&a) || !f.MayHaveFull(&b) || !f.MayHavePrefixOf(&c) || f.MayHaveFull(&d) {
		t.Fatal("golden filter contents differ")
	}
	// Version 2: the same filter, in a file.
	var hdr2 snapshotHeader
	if err := hdr2.decode(field["snapshot header v2"]); err != nil || !hdr2.File || hdr2.State != 42 {
		t.Fatalf("snapshot header v2: %+v, %v", hdr2, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, snapshotFileName), field["snapshot file"], 0o644); err != nil {
		t.Fatal(err)
	}
	f2, err := readSnapshotFile(dir, &hdr2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f2.MayHaveFull(&a) || !f2.MayHaveFull(&b) || !f2.MayHavePrefixOf(&c) || f2.MayHaveFull(&d) {
		t.Fatal("golden filter file contents differ")
	}
	for name, version := range map[string]byte{"meta format value": formatBadger, "meta format value with a key table": formatKeyTable,
		"meta format value with values in the key table": formatValues} {
		if got := field[name]; !bytes.Equal(got, []byte{version}) {
			t.Fatalf("%s = %x, want %d", name, got, version)
		}
	}
	for _, gv := range goldenValues {
		b, ok := field[gv.name]
		if !ok {
			t.Fatalf("%s: not in the golden file", gv.name)
		}
		got, err := decodeValue(b)
		if err != nil {
			t.Fatalf("%s: decodeValue(%x): %v", gv.name, b, err)
		}
		want := gv.v
		want.Expires = time.Time{}
		if !bytes.Equal(got.Text, want.Text) || !bytes.Equal(got.Data, want.Data) || !got.FirstSeen.Equal(want.FirstSeen) ||
			!got.LastSeen.Equal(want.LastSeen) || !got.Expires.IsZero() {
			t.Errorf("%s: decodeValue(%x) = %+v, want %+v", gv.name, b, got, want)
		}
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
	if _, err := filter.Unmarshal(filter.MinBits, []byte{1, 2, 3}, 3, 0); err == nil {
		t.Fatal("filter.Unmarshal(garbage) = nil error")
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
	flt := filter.New(filter.MinBits)
	flt.AddFull(&a)
	flt.AddPrefix(a[:4])
	data, fl, _, _ := flt.Marshal()
	hdr := snapshotHeader{Bits: filter.MinBits, FullLen: fl}
	f.Add(hdr.appendBinary(nil), data, fl)
	hdr2 := snapshotHeader{File: true, Bits: filter.MinBits, FullLen: fl, ShortLen: uint64(len(data)) - fl,
		Size: snapshotFileLen(fl, uint64(len(data))-fl)}
	f.Add(hdr2.appendBinary(nil), data, fl)
	f.Add([]byte(snapshotMagicV2), []byte{}, uint64(0))
	f.Add([]byte(snapshotMagic), []byte{0x3a, 0x30, 0, 0}, uint64(2))
	f.Fuzz(func(t *testing.T, header, data []byte, fullLen uint64) {
		var h snapshotHeader
		_ = h.decode(header)
		if fullLen > uint64(len(data)) {
			return
		}
		flt, err := filter.Unmarshal(filter.MinBits+uint8(fullLen%40), data, fullLen, uint64(len(data))-fullLen)
		if err != nil {
			return
		}
		flt.MayHaveFull(&a)
		flt.MayHavePrefixOf(&a)
		flt.AddFull(&a)
	})
}

// FuzzSnapshotFile feeds arbitrary files to the snapshot file's reader,
// under a header that agrees with the file's size, state and checksum:
// it must fail cleanly or yield a usable filter.
func FuzzSnapshotFile(f *testing.F) {
	a := hashOf("a")
	flt := filter.New(filter.MinBits)
	flt.AddFull(&a)
	flt.AddPrefix(a[:4])
	data, fl, _, _ := flt.Marshal()
	file := binary.BigEndian.AppendUint64([]byte(snapshotFileMagic), 7)
	file = append(file, data...)
	file = binary.BigEndian.AppendUint32(file, crc32.Checksum(file, castagnoli))
	f.Add(file, uint8(0), fl)
	f.Add([]byte(snapshotFileMagic), uint8(3), uint64(0))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, file []byte, bits uint8, fullLen uint64) {
		head := len(snapshotFileMagic) + 8
		if len(file) < head+4 {
			return
		}
		body := uint64(len(file) - head - 4)
		fullLen = min(fullLen, body)
		hdr := snapshotHeader{File: true, State: binary.BigEndian.Uint64(file[len(snapshotFileMagic):]),
			Bits: filter.MinBits + bits%(filter.MaxBits-filter.MinBits+1), FullLen: fullLen, ShortLen: body - fullLen,
			Size: uint64(len(file)), CRC: binary.BigEndian.Uint32(file[len(file)-4:])}
		if err := os.WriteFile(filepath.Join(dir, snapshotFileName), file, 0o644); err != nil {
			t.Fatal(err)
		}
		flt, err := readSnapshotFile(dir, &hdr, nil)
		if err != nil {
			return
		}
		flt.MayHaveFull(&a)
		flt.MayHavePrefixOf(&a)
		flt.AddFull(&a)
	})
}
