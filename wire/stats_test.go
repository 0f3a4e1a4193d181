package wire

import (
	"encoding/json"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// statsSample is a Stats with every field set to a value of its own.
func statsSample() Stats {
	s := StatsOf(store.Stats{Entries: 1, PrefixEntries: 2, Expiring: 3, DiskBytes: 4, FormatVersion: 5, Profile: "p"})
	s.FilterBits, s.FilterBytes, s.FilterMemBytes = 6, 7, 8
	s.FilterAbsent, s.FilterFound, s.FilterFalsePositives = 9, 10, 11
	s.LSMBytes, s.VlogBytes, s.Tables = 12, 13, 14
	return s
}

// TestStatsJSON pins the /v1/stats body: field names and order are a
// contract with deployed clients. The snake_case names come first, the
// former Go names after them (kept one release).
func TestStatsJSON(t *testing.T) {
	s := statsSample()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"entries":1,"prefix_entries":2,"expiring":3,"filter_bits":6,"filter_bytes":7,"filter_mem_bytes":8,` +
		`"filter_absent":9,"filter_found":10,"filter_false_positives":11,"lsm_bytes":12,"vlog_bytes":13,"disk_bytes":4,` +
		`"tables":14,"format_version":5,"profile":"p",` +
		`"Entries":1,"PrefixEntries":2,"Expiring":3,"FilterBits":6,"FilterBytes":7,"FilterMemBytes":8,` +
		`"FilterAbsent":9,"FilterFound":10,"FilterFalsePositives":11,"LSMBytes":12,"VlogBytes":13,"DiskBytes":4,` +
		`"Tables":14,"FormatVersion":5,"Profile":"p"}`
	if string(b) != want {
		t.Fatalf("json = %s\nwant   %s", b, want)
	}
	if got := string(AppendStats(nil, &s)); got != want+"\n" {
		t.Fatalf("AppendStats = %s, want the JSON and a LF", got)
	}
	var back Stats
	if err := json.Unmarshal(b, &back); err != nil || back != s {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, s)
	}
	if got, want := back.Store(), (store.Stats{Entries: 1, PrefixEntries: 2, Expiring: 3, DiskBytes: 4, FormatVersion: 5, Profile: "p"}); got != want {
		t.Fatalf("Store() = %+v, want %+v", got, want)
	}
}

// TestStatsDecode: a body of the snake_case names alone (the next
// release's), of the former names alone (an older server's), or of both
// disagreeing (the snake_case name wins) decodes; a field of the wrong
// type is an error naming it.
func TestStatsDecode(t *testing.T) {
	tests := []struct {
		name, body string
		want       Stats
		wantErr    bool
	}{
		{"snake_case only", `{"entries":7,"filter_bits":25,"profile":"x","unknown_field":1}`, Stats{Entries: 7, FilterBits: 25, Profile: "x"}, false},
		{"former names only", `{"Entries":7,"FilterBits":25,"Profile":"x"}`, Stats{Entries: 7, FilterBits: 25, Profile: "x"}, false},
		{"snake_case wins", `{"entries":7,"Entries":8}`, Stats{Entries: 7}, false},
		{"wrong type", `{"entries":"many"}`, Stats{}, true},
		{"not an object", `[1]`, Stats{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Stats
			err := json.Unmarshal([]byte(tc.body), &got)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("decoded %+v, want %+v", got, tc.want)
			}
		})
	}
}
