package main

import (
	"bufio"
	"context"
	"fmt"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/remote"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

func statsCommand() *command {
	return &command{
		name:      "stats",
		usageLine: "stats --db DIR [--json]",
		short:     "print an index's counts and sizes",
		long: `Prints the index's profile, entry counts, filter size and disk use, one
"name: value" a line (or one JSON object with --json: profile, entries,
prefix_entries, filter_bits, filter_bytes, filter_bytes_per_entry,
disk_bytes, disk_bytes_per_entry, lsm_bytes, vlog_bytes, format_version,
expiring). Entries and prefix entries count live entries: expired ones
are not counted; "expiring entries" counts those of them with a TTL.
The counts are the recorded ones; the checksums of an index directory's
tables are checked first, and damage is reported as verify reports it,
with exit status 2.
`,
		example: `$ urlhash stats --db idx
profile: urlhash+sha256;unicode=17.0.0
entries: 30022
...
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			o := new(statsOptions)
			o.db.addFlags(fs)
			fs.BoolVar(&o.json, "json", false, "print one JSON object")
			return o.run
		},
	}
}

type statsOptions struct {
	db   dbFlags
	json bool
}

// statsOutput is the --json object of stats.
type statsOutput struct {
	Profile             string  `json:"profile"`
	Entries             int64   `json:"entries"`
	PrefixEntries       int64   `json:"prefix_entries"`
	FilterBits          int     `json:"filter_bits"`
	FilterBytes         uint64  `json:"filter_bytes"`
	FilterBytesPerEntry float64 `json:"filter_bytes_per_entry"`
	DiskBytes           int64   `json:"disk_bytes"`
	DiskBytesPerEntry   float64 `json:"disk_bytes_per_entry"`
	LSMBytes            int64   `json:"lsm_bytes"`
	VlogBytes           int64   `json:"vlog_bytes"`
	FormatVersion       int     `json:"format_version"`
	Expiring            int64   `json:"expiring"`
}

func (o *statsOptions) run(e *env, _ []string) error {
	st, err := o.db.openReader(e)
	if err != nil {
		return err
	}
	// Open's checks of the files are stats' (a table whose index does not
	// open, a missing one, a damaged log); the checksums of every block
	// are verify's, which reads every table (seconds at 10M entries).
	defer st.Close()
	out, err := statsOf(e.ctx, st)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	if o.json {
		if err := newJSONWriter(w).Encode(out); err != nil {
			return err
		}
		return w.Flush()
	}
	fmt.Fprintf(w, "profile: %s\nentries: %d\nprefix entries: %d\nfilter bits: %d\nfilter bytes: %d (%.2f per entry)\ndisk bytes: %d (%.2f per entry; lsm %d, vlog %d)\nformat version: %d\n",
		out.Profile, out.Entries, out.PrefixEntries, out.FilterBits, out.FilterBytes, out.FilterBytesPerEntry,
		out.DiskBytes, out.DiskBytesPerEntry, out.LSMBytes, out.VlogBytes, out.FormatVersion)
	// Last, so that the lines before keep their places.
	fmt.Fprintf(w, "expiring entries: %d\n", out.Expiring)
	return w.Flush()
}

// statsOf returns st's figures as stats prints them: those every backend
// answers, and the filter and file figures of an index directory, or of
// the index a server serves (zero for PostgreSQL).
func statsOf(ctx context.Context, st store.Backend) (statsOutput, error) {
	var s store.Stats
	var out statsOutput
	var err error
	switch db := st.(type) {
	case *index.DB:
		var d index.Stats
		d, err = db.DetailedStats(ctx)
		s, out.FilterBits, out.FilterBytes, out.LSMBytes, out.VlogBytes = d.Stats, d.FilterBits, d.FilterBytes, d.LSMBytes, d.VlogBytes
	case *remote.DB:
		var d wire.Stats
		d, err = db.ServerStats(ctx)
		s, out.FilterBits, out.FilterBytes, out.LSMBytes, out.VlogBytes = d.Store(), d.FilterBits, d.FilterBytes, d.LSMBytes, d.VlogBytes
	default:
		s, err = st.Stats(ctx)
	}
	if err != nil {
		return statsOutput{}, err
	}
	per := func(x float64) float64 {
		if n := s.Entries + s.PrefixEntries; n > 0 {
			return float64(int(x/float64(n)*100+0.5)) / 100
		}
		return 0
	}
	out.Profile, out.Entries, out.PrefixEntries, out.Expiring = s.Profile, s.Entries, s.PrefixEntries, s.Expiring
	out.FilterBytesPerEntry = per(float64(out.FilterBytes))
	out.DiskBytes, out.DiskBytesPerEntry, out.FormatVersion = s.DiskBytes, per(float64(s.DiskBytes)), s.FormatVersion
	return out, nil
}
