package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/remote"
)

func restoreCommand() *command {
	return &command{
		name:      "restore",
		usageLine: "restore --db DIR FILE...",
		short:     "restore an index from backups",
		long: `Restores the backups, in the order given, into the index, creating it: a
full backup first (into an index with no entries), then the incremental
backups of its chain in the order they were taken; a gap in the chain is
refused. A cut or damaged backup is an error, and the entries before the
damage stay in DIR: restore into a new directory. Until a restore ends
well (not cut, refused or killed), DIR holds the file urlhash.restoring
and every command refuses it: remove DIR and restore the chain again.
`,
		example: `$ urlhash restore --db copy full.bak incr1.bak incr2.bak
urlhash: restore: full.bak: full, up to 48213
`,
		setFlags: func(fs *flagSet) runFunc {
			o := new(restoreOptions)
			fs.StringVar(&o.db.dir, "db", "", "the index directory `DIR` to restore into (required)")
			o.db.addCompression(fs)
			o.db.addKeyTable(fs)
			return o.run
		},
	}
}

type restoreOptions struct{ db dbFlags }

func (o *restoreOptions) run(e *env, files []string) error {
	if len(files) == 0 {
		return usagef("no backup files")
	}
	if o.db.dir == "" || backend.IsPostgres(o.db.dir) || remote.IsLocation(o.db.dir) {
		return usagef("--db DIR, an index directory, is required (restore into a directory, then serve it)")
	}
	// Every file opened before the index is created (a name that is not
	// one leaves no directory behind), read through Restore's own buffer.
	rs := make([]io.Reader, len(files))
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		rs[i] = f
	}
	st, err := o.db.openStore(e, &backend.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	// One chain, one restoring mark: a cut between two files must not
	// leave the files before it looking like the whole chain.
	b := st.(*index.DB)
	infos, err := b.RestoreChain(rs...)
	for i, info := range infos {
		kind := "full"
		if info.Since > 0 {
			kind = fmt.Sprintf("changes after %d", info.Since)
		}
		fmt.Fprintf(e.stderr, "urlhash: restore: %s: %s, up to %d\n", files[i], kind, info.Until)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", files[len(infos)], err)
	}
	return st.Close()
}
