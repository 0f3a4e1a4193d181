package wire

import "github.com/urlhash/urlhash/store"

// Stats is the JSON body of GET /v1/stats: one flat object, with Go's
// field names in this order. The fields of store.Stats come from any
// backend; the filter and file figures are those of a server over a
// Badger index (index.Stats), zero for another backend.
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
