package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// valueFlags are the flags that give every entry a command writes its
// data and expiry: --data and --ttl.
type valueFlags struct {
	data string
	ttl  time.Duration
}

const valueUsage = `      --data TEXT        attach TEXT's bytes to each entry (get shows
                         them as hex, export --format jsonl as "data")
      --ttl DURATION     each entry expires DURATION after now (this
                         machine's clock), e.g. 24h; from then on every
                         command treats it as absent (default 0: never)
`

func (v *valueFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&v.data, "data", "", "caller bytes to attach")
	fs.DurationVar(&v.ttl, "ttl", 0, "expire entries after this long")
}

func (v *valueFlags) check() error {
	if v.ttl < 0 {
		return usagef("--ttl must be 0 (never expire) or more, have %v", v.ttl)
	}
	if v.ttl > 0 && v.ttl < time.Second {
		return usagef("--ttl must be at least 1s (times are whole seconds), have %v", v.ttl)
	}
	return nil
}

// isSet reports whether the flags change the entries.
func (v *valueFlags) isSet() bool { return v.data != "" || v.ttl > 0 }

// apply sets the data and expiry of each entry that has none of its own
// (an imported jsonl entry may).
func (v *valueFlags) apply(entries []store.Entry, now time.Time) {
	set := v.setter(now)
	for i := range entries {
		set(&entries[i])
	}
}

// setter returns apply for one entry, with the data's bytes and the
// expiry computed once: the entries share them (backends only read them).
func (v *valueFlags) setter(now time.Time) func(*store.Entry) {
	var exp time.Time
	if v.ttl > 0 {
		exp = store.Unix(now.Add(v.ttl).Unix())
	}
	data := []byte(v.data)
	return func(e *store.Entry) {
		if len(data) > 0 && len(e.Value.Data) == 0 {
			e.Value.Data = data
		}
		if e.Value.Expires.IsZero() {
			e.Value.Expires = exp
		}
	}
}

func putCommand() *command {
	return &command{
		name:    "put",
		summary: "store URLs (or hashes and prefixes), replacing stored values",
		usage: `Usage: urlhash put --db DIR [flags] [URL|HASH...]

Stores each URL's identity (or, with --hashes, each full hash or 4..31-byte
hex prefix entry) with the value the flags give, replacing what an entry
stored before: its text, data, seen times and expiry (add, by contrast,
keeps a stored entry as it is). Creates the index if needed. Everything
is durable when the command exits 0. Prints nothing unless --json.

Flags:
      --db DIR           the index directory, a postgres:// connection
                         string (with --schema NAME) or http://HOST:PORT
      --wait DURATION    queue behind another urlhash using the index
                         (default 0: fail at once)
      --hashes           inputs are hex: 64 digits a full entry, an even
                         8..62 digits a prefix entry
      --store-url        keep each URL's text in its entry
` + valueUsage + `      --json             one object per input: input, hash
` + inputUsage + `      --profile, --digest, --drop-fragment
                         the identity of a new index (default urlhash,
                         sha256); an existing index keeps the one it records

Example:
  $ urlhash put --db idx --store-url --data 'etag "abc"' --ttl 24h https://example.com/
`,
		run: func(e *env, args []string) error { return runAdd(e, "put", args) },
	}
}

// timeText formats a stored time for output ("" for none).
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// valueFields returns get's extra output fields for v: tab-separated
// data=HEX, first_seen=, last_seen= and expires= (RFC 3339), each only
// when set, so that a plain set entry prints as it always did.
func valueFields(v *store.Value) string {
	var s string
	if len(v.Data) > 0 {
		s += "\tdata=" + hex.EncodeToString(v.Data)
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"first_seen", v.FirstSeen}, {"last_seen", v.LastSeen}, {"expires", v.Expires}} {
		if !f.t.IsZero() {
			s += "\t" + f.name + "=" + timeText(f.t)
		}
	}
	return s
}

// deletePrefix is delete --prefix: every entry under a hex prefix.
func deletePrefix(e *env, st store.Backend, prefix string, asJSON bool) error {
	p, bits, err := hashkey.ParsePrefix(prefix)
	if err != nil {
		return usagef("--prefix %q: %v", prefix, err)
	}
	full, prefixes, err := st.DeletePrefix(p, bits)
	if err != nil {
		return err
	}
	if err := syncWrites(st); err != nil {
		return err
	}
	if asJSON {
		out := bufio.NewWriter(e.stdout)
		newJSONWriter(out).Encode(deleteSummary{Deleted: full + prefixes, Full: &full, Prefixes: &prefixes})
		if err := out.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "urlhash: delete: %d deleted (%d entries, %d prefix entries)\n", full+prefixes, full, prefixes)
	if full+prefixes == 0 {
		return errNotFound
	}
	return nil
}

// deleteSummary is delete's --json summary: one object, on stdout.
type deleteSummary struct {
	Deleted  int64  `json:"deleted"`
	Full     *int64 `json:"full,omitempty"`
	Prefixes *int64 `json:"prefixes,omitempty"`
}
