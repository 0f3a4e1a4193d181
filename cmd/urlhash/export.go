package main

import (
	"bufio"

	"github.com/urlhash/urlhash/store"
)

func exportCommand() *command {
	return &command{
		name:      "export",
		usageLine: "export --db DIR [--format hex|binary|json|jsonl]",
		short:     "write every entry of an index, in hash order",
		long: `Writes every entry of the index to standard output in key order: full
entries (by hash), then prefix entries.

Formats:
  hex     one line per entry: the hex key, then a tab and the stored text
          when there is one (default); "urlhash import --input-format
          hashes" reads it back when no text was stored
  binary  one record per entry: a length byte (32 for a full entry, 4..31
          for a prefix entry) then that many key bytes
  json    one object per entry: hash, prefix, text, data (hex)
  jsonl   lossless: a header naming the profile, then one object per
          entry: key (hex), text (or text_hex when it is not UTF-8),
          data (hex). "urlhash import --input-format jsonl" reads it back
          into any backend; export, import, export gives the same bytes
`,
		example: `$ urlhash export --db idx > idx.hex
$ urlhash import --db copy --input-format hashes idx.hex
$ urlhash export --db idx --format jsonl | urlhash import --db postgres://db/x --input-format jsonl -
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			o := new(exportOptions)
			o.db.addFlags(fs)
			fs.StringVar(&o.format, "format", "hex", "the output `FORMAT`: hex (default), binary, json or jsonl")
			fs.enum("format", "hex", "binary", "json", "jsonl")
			return o.run
		},
	}
}

type exportOptions struct {
	db     dbFlags
	format string
}

func (o *exportOptions) run(e *env, _ []string) error {
	switch o.format {
	case "hex", "binary", "json", "jsonl":
	default:
		return usagef("unknown --format %q (want hex, binary, json or jsonl)", o.format)
	}
	st, err := o.db.openReader(e)
	if err != nil {
		return err
	}
	defer st.Close()
	out := bufio.NewWriterSize(e.stdout, 256<<10)
	enc := newJSONWriter(out)
	var line []byte
	if o.format == "jsonl" {
		profile, err := st.Profile(e.ctx)
		if err != nil {
			return err
		}
		out.Write(store.AppendJSONLHeader(nil, profile))
	}
	err = st.Scan(e.ctx, nil, 0, 0, func(en store.Entry) error {
		switch o.format {
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
