package wire

import (
	"encoding/json"
	"fmt"

	"github.com/urlhash/urlhash/store"
)

// Stats is the JSON body of GET /v1/stats: one flat object whose fields
// are lower-case snake_case, like every other body (entries,
// prefix_entries, expiring, filter_bits, ..., profile; see statsFields).
// The fields of store.Stats come from any backend; the filter and file
// figures are those of a server over a Badger index (index.Stats), zero
// for another backend.
//
// Former names: for one release (CHANGELOG.md), the body also carries
// every field under its former Go name (Entries, PrefixEntries,
// FilterBits, ...), after the snake_case ones, so that a client that reads
// those keeps working; a body with only the former names (an older
// server's) decodes as well.
type Stats struct {
	Entries, PrefixEntries, Expiring                int64
	FilterBits                                      int
	FilterBytes, FilterMemBytes                     uint64
	FilterAbsent, FilterFound, FilterFalsePositives int64
	LSMBytes, VlogBytes, DiskBytes                  int64
	Tables                                          int
	FormatVersion                                   int
	Profile                                         string
}

// statsField is one field of the /v1/stats body: its name, its former
// (Go) name, and where it lives in a Stats.
type statsField struct {
	name, old string
	v         func(s *Stats) any // a pointer to the field
}

// statsFields are the fields of the /v1/stats body, in the body's order.
var statsFields = []statsField{
	{"entries", "Entries", func(s *Stats) any { return &s.Entries }},
	{"prefix_entries", "PrefixEntries", func(s *Stats) any { return &s.PrefixEntries }},
	{"expiring", "Expiring", func(s *Stats) any { return &s.Expiring }},
	{"filter_bits", "FilterBits", func(s *Stats) any { return &s.FilterBits }},
	{"filter_bytes", "FilterBytes", func(s *Stats) any { return &s.FilterBytes }},
	{"filter_mem_bytes", "FilterMemBytes", func(s *Stats) any { return &s.FilterMemBytes }},
	{"filter_absent", "FilterAbsent", func(s *Stats) any { return &s.FilterAbsent }},
	{"filter_found", "FilterFound", func(s *Stats) any { return &s.FilterFound }},
	{"filter_false_positives", "FilterFalsePositives", func(s *Stats) any { return &s.FilterFalsePositives }},
	{"lsm_bytes", "LSMBytes", func(s *Stats) any { return &s.LSMBytes }},
	{"vlog_bytes", "VlogBytes", func(s *Stats) any { return &s.VlogBytes }},
	{"disk_bytes", "DiskBytes", func(s *Stats) any { return &s.DiskBytes }},
	{"tables", "Tables", func(s *Stats) any { return &s.Tables }},
	{"format_version", "FormatVersion", func(s *Stats) any { return &s.FormatVersion }},
	{"profile", "Profile", func(s *Stats) any { return &s.Profile }},
}

// AppendStats appends the /v1/stats body of s (Content-Type
// application/json) and a LF: every field under its snake_case name, then
// again under its former name.
func AppendStats(dst []byte, s *Stats) []byte {
	dst = append(dst, '{')
	for pass := range 2 {
		for i, f := range statsFields {
			if pass+i > 0 {
				dst = append(dst, ',')
			}
			name := f.name
			if pass == 1 {
				name = f.old
			}
			dst = append(dst, '"')
			dst = append(dst, name...)
			dst = append(dst, '"', ':')
			b, _ := json.Marshal(f.v(s)) // numbers and a string always encode
			dst = append(dst, b...)
		}
	}
	return append(dst, '}', '\n')
}

// MarshalJSON implements json.Marshaler: AppendStats without its LF.
func (s Stats) MarshalJSON() ([]byte, error) {
	b := AppendStats(nil, &s)
	return b[:len(b)-1], nil
}

// UnmarshalJSON implements json.Unmarshaler: each field from its
// snake_case name, or else from its former name (an older server's body).
// Unknown names are ignored (a newer server's fields).
func (s *Stats) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*s = Stats{}
	for _, f := range statsFields {
		raw, ok := m[f.name]
		if !ok {
			raw, ok = m[f.old]
		}
		if !ok {
			continue
		}
		if err := json.Unmarshal(raw, f.v(s)); err != nil {
			return fmt.Errorf("wire: stats field %s: %w", f.name, err)
		}
	}
	return nil
}

// StatsOf returns the body that carries s (its backend's own figures zero).
func StatsOf(s store.Stats) Stats {
	return Stats{Entries: s.Entries, PrefixEntries: s.PrefixEntries, Expiring: s.Expiring,
		DiskBytes: s.DiskBytes, FormatVersion: s.FormatVersion, Profile: s.Profile}
}

// Store returns the figures of s that every backend answers.
func (s *Stats) Store() store.Stats {
	return store.Stats{Entries: s.Entries, PrefixEntries: s.PrefixEntries, Expiring: s.Expiring,
		DiskBytes: s.DiskBytes, FormatVersion: s.FormatVersion, Profile: s.Profile}
}
