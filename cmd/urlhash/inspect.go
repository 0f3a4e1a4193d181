package main

import (
	"bufio"
	"encoding/hex"
	"fmt"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// entryOutput is the --json object of scan and export.
type entryOutput struct {
	Hash   string  `json:"hash"`
	Prefix bool    `json:"prefix,omitempty"`
	Text   *string `json:"text,omitempty"`
	Data   string  `json:"data,omitempty"`
	// Times in RFC 3339, when the entry records them.
	FirstSeen string `json:"first_seen,omitempty"`
	LastSeen  string `json:"last_seen,omitempty"`
	Expires   string `json:"expires,omitempty"`
}

func scanCommand() *command {
	return &command{
		name:    "scan",
		summary: "list the entries whose hash starts with a prefix",
		usage: `Usage: urlhash scan --db DIR (--prefix HEX | --short H | --very-short H) [flags]

Lists the stored entries whose hash starts with the prefix, in hash order:
one line per entry, the hex key first, then a tab and the stored text when
there is one. Full entries come first, then prefix entries at least as long
as the prefix. Exit status 0 if any entry matched, 1 if none.

Flags:
      --db DIR           the index directory, or a postgres:// connection
                         string (with --schema NAME, default "urlhash")
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --prefix HEX       0..64 hex digits; an odd count is a half-byte prefix
      --short H          a short hash: 32 hex digits or the decimal "w0-w1"
      --very-short H     a very-short hash: 16 hex digits or the decimal "w0"
      --limit N          at most N entries (default 0: all)
      --json             one object per entry: hash, prefix, text, data

Example:
  $ urlhash scan --db idx --prefix 0f1 --limit 2
  0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7	https://example.com/
`,
		run: runScan,
	}
}

func runScan(e *env, args []string) error {
	fs := newFlags("scan")
	var db dbFlags
	db.addFlags(fs)
	prefix := fs.String("prefix", "", "hex prefix")
	short := fs.String("short", "", "short hash")
	veryShort := fs.String("very-short", "", "very-short hash")
	limit := fs.Int("limit", 0, "maximum entries")
	asJSON := fs.Bool("json", false, "JSON output")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	var (
		key  []byte
		bits int
		err  error
		set  int
	)
	if fs.Changed("prefix") {
		set++
		if *prefix != "" { // an empty prefix lists everything
			if key, bits, err = hashkey.ParsePrefix(*prefix); err != nil {
				return usageError{err}
			}
		}
	}
	if *short != "" {
		set++
		s, err := hashkey.ParseShort(*short)
		if err != nil {
			return usageError{err}
		}
		key, bits = s[:], 8*hashkey.Size16
	}
	if *veryShort != "" {
		set++
		v, err := hashkey.ParseVeryShort(*veryShort)
		if err != nil {
			return usageError{err}
		}
		key, bits = v[:], 8*hashkey.Size8
	}
	if set != 1 {
		return usagef("give exactly one of --prefix, --short and --very-short")
	}
	// These commands compute no identity: they open the store itself, so
	// that they also read an index of another profile or other tables.
	st, err := db.openReader(e)
	if err != nil {
		return err
	}
	defer st.Close()
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	defer out.Flush()
	enc := newJSONWriter(out)
	n := 0
	err = st.Scan(key, bits, *limit, func(en store.Entry) error {
		n++
		if *asJSON {
			return enc.Encode(newEntryOutput(&en))
		}
		return writeEntry(out, &en)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return errNotFound
	}
	return nil
}

func newEntryOutput(en *store.Entry) entryOutput {
	o := entryOutput{Hash: hexKey(en), Prefix: en.IsPrefix(), Data: hex.EncodeToString(en.Value.Data),
		FirstSeen: timeText(en.Value.FirstSeen), LastSeen: timeText(en.Value.LastSeen), Expires: timeText(en.Value.Expires)}
	if en.Value.Text != nil {
		t := string(en.Value.Text)
		o.Text = &t
	}
	return o
}

func writeEntry(out *bufio.Writer, en *store.Entry) error {
	var buf [2 * hashkey.Size]byte
	out.Write(hex.AppendEncode(buf[:0], en.Key()))
	if len(en.Value.Text) > 0 {
		out.WriteByte('\t')
		out.Write(en.Value.Text)
	}
	return out.WriteByte('\n')
}

func exportCommand() *command {
	return &command{
		name:    "export",
		summary: "write every entry of an index, in hash order",
		usage: `Usage: urlhash export --db DIR [--format hex|binary|json|jsonl]

Writes every entry of the index to standard output in key order: full
entries (by hash), then prefix entries.

Formats:
  hex     one line per entry: the hex key, then a tab and the stored text
          when there is one (default); "urlhash import --format hashes"
          reads it back when no text was stored
  binary  one record per entry: a length byte (32 for a full entry, 4..31
          for a prefix entry) then that many key bytes
  json    one object per entry: hash, prefix, text, data (hex)
  jsonl   lossless: a header naming the profile, then one object per
          entry: key (hex), text (or text_hex when it is not UTF-8),
          data (hex). "urlhash import --format jsonl" reads it back into
          any backend; export, import, export gives the same bytes

Example:
  $ urlhash export --db idx > idx.hex
  $ urlhash import --db copy --format hashes idx.hex
  $ urlhash export --db idx --format jsonl | urlhash import --db postgres://db/x --format jsonl -
`,
		run: runExport,
	}
}

func runExport(e *env, args []string) error {
	fs := newFlags("export")
	var db dbFlags
	db.addFlags(fs)
	format := fs.String("format", "hex", "hex, binary, json or jsonl")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	switch *format {
	case "hex", "binary", "json", "jsonl":
	default:
		return usagef("unknown --format %q (want hex, binary, json or jsonl)", *format)
	}
	// These commands compute no identity: they open the store itself, so
	// that they also read an index of another profile or other tables.
	st, err := db.openReader(e)
	if err != nil {
		return err
	}
	defer st.Close()
	out := bufio.NewWriterSize(e.stdout, 256<<10)
	enc := newJSONWriter(out)
	var line []byte
	if *format == "jsonl" {
		out.Write(store.AppendJSONLHeader(nil, st.Profile()))
	}
	err = st.Scan(nil, 0, 0, func(en store.Entry) error {
		switch *format {
		case "jsonl":
			line = store.AppendJSONL(line[:0], &en)
			_, err := out.Write(line)
			return err
		case "binary":
			k := en.Key()
			out.WriteByte(byte(len(k)))
			_, err := out.Write(k)
			return err
		case "json":
			return enc.Encode(newEntryOutput(&en))
		}
		return writeEntry(out, &en)
	})
	if err != nil {
		return err
	}
	return out.Flush()
}

func statsCommand() *command {
	return &command{
		name:    "stats",
		summary: "print an index's counts and sizes",
		usage: `Usage: urlhash stats --db DIR [--json]

Prints the index's profile, entry counts, filter size and disk use, one
"name: value" a line (or one JSON object with --json: profile, entries,
prefix_entries, filter_bits, filter_bytes, filter_bytes_per_entry,
disk_bytes, disk_bytes_per_entry, lsm_bytes, vlog_bytes, format_version,
expiring). Entries and prefix entries count live entries: expired ones
are not counted; "expiring entries" counts those of them with a TTL.

Example:
  $ urlhash stats --db idx
  profile: urlhash+sha256
  entries: 30022
  ...
`,
		run: runStats,
	}
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

func runStats(e *env, args []string) error {
	fs := newFlags("stats")
	var db dbFlags
	db.addFlags(fs)
	asJSON := fs.Bool("json", false, "JSON output")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	// These commands compute no identity: they open the store itself, so
	// that they also read an index of another profile or other tables.
	st, err := db.openReader(e)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := st.Stats()
	if err != nil {
		return err
	}
	per := func(x float64) float64 {
		if n := s.Entries + s.PrefixEntries; n > 0 {
			return float64(int(x/float64(n)*100+0.5)) / 100
		}
		return 0
	}
	o := statsOutput{
		Profile: s.Profile, Entries: s.Entries, PrefixEntries: s.PrefixEntries,
		FilterBits: s.FilterBits, FilterBytes: s.FilterBytes, FilterBytesPerEntry: per(float64(s.FilterBytes)),
		DiskBytes: s.DiskBytes, DiskBytesPerEntry: per(float64(s.DiskBytes)),
		LSMBytes: s.LSMBytes, VlogBytes: s.VlogBytes, FormatVersion: s.FormatVersion, Expiring: s.Expiring,
	}
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	if *asJSON {
		return newJSONWriter(out).Encode(o)
	}
	fmt.Fprintf(out, "profile: %s\nentries: %d\nprefix entries: %d\nfilter bits: %d\nfilter bytes: %d (%.2f per entry)\ndisk bytes: %d (%.2f per entry; lsm %d, vlog %d)\nformat version: %d\n",
		o.Profile, o.Entries, o.PrefixEntries, o.FilterBits, o.FilterBytes, o.FilterBytesPerEntry,
		o.DiskBytes, o.DiskBytesPerEntry, o.LSMBytes, o.VlogBytes, o.FormatVersion)
	// Last, so that the lines before keep their places.
	fmt.Fprintf(out, "expiring entries: %d\n", o.Expiring)
	return nil
}

func verifyCommand() *command {
	return &command{
		name:    "verify",
		summary: "check an index's keys, values, filter and metadata",
		usage: `Usage: urlhash verify --db DIR

Reads the whole index and checks that every key is well formed, every value
decodes, the filter covers every key and the counts and metadata agree.
Prints "ok" and exits 0, or reports the first problem and exits 2.

Example:
  $ urlhash verify --db idx
  ok: 30022 entries, 0 prefix entries
`,
		run: runVerify,
	}
}

func runVerify(e *env, args []string) error {
	fs := newFlags("verify")
	var db dbFlags
	db.addFlags(fs)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	// These commands compute no identity: they open the store itself, so
	// that they also read an index of another profile or other tables.
	st, err := db.openReader(e)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Verify(); err != nil {
		return err
	}
	s, err := st.Stats()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "ok: %d entries, %d prefix entries\n", s.Entries, s.PrefixEntries)
	return nil
}
