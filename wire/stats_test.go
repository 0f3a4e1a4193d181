package wire

import (
	"encoding/json"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// TestStatsJSON pins the /v1/stats body: field names and order are a
// contract with deployed clients.
func TestStatsJSON(t *testing.T) {
	s := StatsOf(store.Stats{Entries: 1, PrefixEntries: 2, Expiring: 3, DiskBytes: 4, FormatVersion: 5, Profile: "p"})
	s.FilterBits, s.FilterBytes, s.FilterMemBytes = 6, 7, 8
	s.FilterAbsent, s.FilterFound, s.FilterFalsePositives = 9, 10, 11
	s.LSMBytes, s.VlogBytes, s.Tables = 12, 13, 14
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"Entries":1,"PrefixEntries":2,"Expiring":3,"FilterBits":6,"FilterBytes":7,"FilterMemBytes":8,` +
		`"FilterAbsent":9,"FilterFound":10,"FilterFalsePositives":11,"LSMBytes":12,"VlogBytes":13,"DiskBytes":4,` +
		`"Tables":14,"FormatVersion":5,"Profile":"p"}`
	if string(b) != want {
		t.Fatalf("json = %s\nwant   %s", b, want)
	}
	var back Stats
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, s)
	}
	if got, want := back.Store(), (store.Stats{Entries: 1, PrefixEntries: 2, Expiring: 3, DiskBytes: 4, FormatVersion: 5, Profile: "p"}); got != want {
		t.Fatalf("Store() = %+v, want %+v", got, want)
	}
}
