package threatlist

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// FuzzDiffResponse decodes hostile computeDiff answers and applies them to
// a small list: errors, never a panic; a decoded update's removals index
// the list or are refused.
func FuzzDiffResponse(f *testing.F) {
	for _, name := range []string{"webrisk_additions.jsonl", "webrisk_removals.jsonl"} {
		b, _ := os.ReadFile("testdata/" + name)
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"responseType":"RESET","additions":{"riceHashes":{"firstValue":"1","riceParameter":28,"entryCount":2000000000,"encodedData":"AAAA"}},"checksum":{"sha256":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}`))
	base, _ := NewList([][]byte{[]byte("aaaa"), []byte("bbbb"), []byte("cccccccc")})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r DiffResponse
		if json.Unmarshal(data, &r) != nil {
			return
		}
		u, err := r.Decode()
		if err != nil {
			return
		}
		from := base
		if u.Reset {
			from = &List{}
		}
		l, _, err := from.Apply(u.Removals, u.Additions)
		if err != nil {
			return
		}
		if l.Len() > from.Len()+u.Additions.Len() {
			t.Fatalf("%d entries from %d and %d additions", l.Len(), from.Len(), u.Additions.Len())
		}
	})
}

// FuzzHashList decodes hostile v5 hash lists.
func FuzzHashList(f *testing.F) {
	f.Add([]byte(`{"name":"se","additionsFourBytes":{"firstValue":10,"riceParameter":3,"entriesCount":1,"encodedData":"Ag=="}}`))
	f.Add([]byte(`{"name":"se","additionsSixteenBytes":{"firstValueHi":"1","firstValueLo":"2","riceParameter":99,"entriesCount":1,"encodedData":"AgAAAAAAAAAAAAAAAA=="}}`))
	f.Add([]byte(`{"name":"se","partialUpdate":true,"compressedRemovals":{"firstValue":10,"riceParameter":3,"entriesCount":1000000000,"encodedData":"Ag=="}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h HashList
		if json.Unmarshal(data, &h) != nil {
			return
		}
		u, err := h.Decode(time.Unix(0, 0))
		if err == nil && u.Additions.Len() > 8*len(data)+1 {
			t.Fatalf("%d additions from %d bytes", u.Additions.Len(), len(data))
		}
	})
}

// FuzzState reads hostile state files: an error, or a state that writes
// back to the same bytes.
func FuzzState(f *testing.F) {
	l, _ := NewList([][]byte{[]byte("aaaa"), []byte("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")})
	f.Add(state{"webrisk/MALWARE": {Name: "webrisk/MALWARE", Version: []byte("v"), List: l,
		History: []Version{{Token: []byte("u"), Change: Change{Removed: l, Added: &List{}}}}}}.marshal())
	f.Add([]byte(stateMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := unmarshalState(data)
		if err != nil {
			return
		}
		if !bytes.Equal(s.marshal(), data) {
			t.Fatal("does not write back the same")
		}
	})
}
