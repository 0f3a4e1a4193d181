package main

import (
	"bufio"

	"github.com/spf13/pflag"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

func scanCommand() *command {
	return &command{
		name:      "scan",
		usageLine: "scan --db DIR (--prefix HEX | --short H | --very-short H) [flags]",
		short:     "list the entries whose hash starts with a prefix",
		long: `Lists the stored entries whose hash starts with the prefix, in hash order:
one line per entry, the hex key first, then a tab and the stored text when
there is one. Full entries come first, then prefix entries at least as long
as the prefix. Exit status 0 if any entry matched, 1 if none.
`,
		example: `$ urlhash scan --db idx --prefix 0f1 --limit 2
0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7	https://example.com/
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			o := new(scanOptions)
			o.db.addFlags(fs)
			fs.StringVar(&o.prefix, "prefix", "", "`HEX`: 0..64 hex digits; an odd count is a half-byte prefix")
			fs.StringVar(&o.short, "short", "", "a short hash `H`: 32 hex digits or the decimal \"w0-w1\"")
			fs.StringVar(&o.veryShort, "very-short", "", "a very-short hash `H`: 16 hex digits or the decimal \"w0\"")
			fs.IntVar(&o.limit, "limit", 0, "at most `N` entries (default 0: all)")
			fs.BoolVar(&o.json, "json", false, "one object per entry: hash, prefix, text, data")
			o.fs = fs.FlagSet
			return o.run
		},
	}
}

type scanOptions struct {
	db                       dbFlags
	prefix, short, veryShort string
	limit                    int
	json                     bool
	fs                       *pflag.FlagSet
}

func (o *scanOptions) run(e *env, _ []string) error {
	var (
		key  []byte
		bits int
		err  error
		set  int
	)
	if o.fs.Changed("prefix") {
		set++
		if o.prefix != "" { // an empty prefix lists everything
			if key, bits, err = hashkey.ParsePrefix(o.prefix); err != nil {
				return usageError{err}
			}
		}
	}
	if o.short != "" {
		set++
		s, err := hashkey.ParseShort(o.short)
		if err != nil {
			return usageError{err}
		}
		key, bits = s[:], 8*hashkey.Size16
	}
	if o.veryShort != "" {
		set++
		v, err := hashkey.ParseVeryShort(o.veryShort)
		if err != nil {
			return usageError{err}
		}
		key, bits = v[:], 8*hashkey.Size8
	}
	if set != 1 {
		return usagef("give exactly one of --prefix, --short and --very-short")
	}
	st, err := o.db.openReader(e)
	if err != nil {
		return err
	}
	defer st.Close()
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	enc := newJSONWriter(out)
	n := 0
	err = st.Scan(e.ctx, key, bits, o.limit, func(en store.Entry) error {
		n++
		if o.json {
			return enc.Encode(newEntryOutput(&en))
		}
		return writeEntry(out, &en)
	})
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if n == 0 {
		return errNotFound
	}
	return nil
}
