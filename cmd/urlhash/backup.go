package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/internal/atomicfile"
	"github.com/urlhash/urlhash/remote"
)

func backupCommand() *command {
	return &command{
		name:      "backup",
		usageLine: "backup --db DIR|http://HOST:PORT [--since VERSION] > FILE",
		short:     "write a full or incremental backup of an index",
		long: `Writes a backup of the index to standard output: every entry (full), or
with --since the changes after VERSION (incremental: added, replaced and
deleted entries). The last line on stderr names the version to pass as
--since to the next backup of the chain. It opens the index read-only:
it runs beside other readers and on read-only media, and a killed backup
leaves the index as it was; an index a writer holds (urlhash serve) is
backed up through the writer, with --db http://HOST:PORT. The file is checksummed:
"urlhash restore" refuses a cut or damaged one. For a postgres:// index
use PostgreSQL's own tools (pg_dump). With --db http://HOST:PORT it
backs up the index a "urlhash serve" owns, while it serves.
`,
		example: `$ urlhash backup --db idx > full.bak
urlhash: backup: full, profile urlhash+sha256; next: --since 48213
$ urlhash backup --db idx --since 48213 > incr1.bak
$ urlhash restore --db copy full.bak incr1.bak
$ urlhash backup --db idx --state idx.chain > "$(date +%s).bak"  # cron
`,
		flagsOnly: true,
		setFlags: func(fs *flagSet) runFunc {
			o := new(backupOptions)
			o.db.addFlags(fs)
			fs.Uint64Var(&o.since, "since", 0, "write only the changes after `VERSION` (default 0: a full backup)")
			fs.StringVar(&o.state, "state", "", "keep the chain in `FILE`: read --since from it when it exists, write the next one to it after the backup is written")
			o.fs = fs
			return o.run
		},
	}
}

type backupOptions struct {
	db    dbFlags
	since uint64
	state string
	fs    *flagSet
}

func (o *backupOptions) run(e *env, _ []string) error {
	since := o.since
	if o.state != "" {
		b, err := os.ReadFile(o.state)
		switch {
		case err == nil:
			if o.fs.Changed("since") {
				return usagef("--since and an existing --state file both say where to start")
			}
			if since, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
				return fmt.Errorf("%s: not a backup version: %w", o.state, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
	}
	out, ok := e.stdout.(*os.File)
	if !ok || isTerminal(out) {
		return usagef("redirect standard output to the backup file")
	}
	if backend.IsPostgres(o.db.dir) {
		return usagef("backup works on an index directory; back up PostgreSQL with its own tools (pg_dump)")
	}
	// A backup only reads: a read-only open works on read-only media, runs
	// beside other readers, and a killed backup leaves nothing to recover.
	st, err := o.db.openStore(e, &backend.Options{MustExist: true, ReadOnly: true, Wait: o.db.wait})
	if err != nil {
		return err
	}
	defer st.Close()
	var info index.BackupInfo
	switch b := st.(type) {
	case *index.DB:
		info, err = b.Backup(out, since)
	case *remote.DB:
		// The server's index, while the server runs.
		info = index.BackupInfo{Since: since}
		if info.Profile, err = b.Profile(e.ctx); err == nil {
			info.Until, err = b.Backup(e.ctx, out, since)
		}
	default:
		return usagef("backup works on an index directory or a urlhash server")
	}
	if err != nil {
		return err
	}
	if err := out.Sync(); err != nil && !isPipeOrDevice(out) {
		return err
	}
	kind := "full"
	if info.Since > 0 {
		kind = fmt.Sprintf("changes after %d", info.Since)
	}
	if o.state != "" {
		// The backup is written; only now may the chain move on.
		if err := atomicfile.WriteFile(o.state, []byte(strconv.FormatUint(info.Until, 10)+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "urlhash: backup: %s, profile %s; next: --since %d\n", kind, info.Profile, info.Until)
	return nil
}

// isPipeOrDevice reports whether f cannot be fsynced meaningfully.
func isPipeOrDevice(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && !fi.Mode().IsRegular()
}
