package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/urlhash/urlhash/backend"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/remote"
)

func backupCommand() *command {
	return &command{
		name:    "backup",
		summary: "write a full or incremental backup of an index",
		usage: `Usage: urlhash backup --db DIR|http://HOST:PORT [--since VERSION] > FILE

Writes a backup of the index to standard output: every entry (full), or
with --since the changes after VERSION (incremental: added, replaced and
deleted entries). The last line on stderr names the version to pass as
--since to the next backup of the chain. It opens the index read-only:
it runs beside other readers and on read-only media, and a killed backup
leaves the index as it was; an index a writer holds (urlhash serve) is
backed up through the writer, with --db http://HOST:PORT. The file is checksummed:
"urlhash restore" refuses a cut or damaged one. For a postgres:// index
use PostgreSQL's own tools (pg_dump). With --db http://HOST:PORT it
backs up the index a "urlhash serve" owns, while it serves.

Flags:
      --db DIR           the index directory
      --since VERSION    write only the changes after VERSION (default 0:
                         a full backup)
      --state FILE       keep the chain in FILE: read --since from it when
                         it exists, write the next one to it after the
                         backup is written
      --wait DURATION    queue behind another urlhash using the index

Example:
  $ urlhash backup --db idx > full.bak
  urlhash: backup: full, profile urlhash+sha256; next: --since 48213
  $ urlhash backup --db idx --since 48213 > incr1.bak
  $ urlhash restore --db copy full.bak incr1.bak
  $ urlhash backup --db idx --state idx.chain > "$(date +%s).bak"  # cron
`,
		run: runBackup,
	}
}

func runBackup(e *env, args []string) error {
	flags := newFlags("backup")
	var db dbFlags
	db.addFlags(flags)
	since := flags.Uint64("since", 0, "changes after this version")
	state := flags.String("state", "", "file that keeps the chain's next --since")
	if err := parseFlagsOnly(flags, args); err != nil {
		return err
	}
	if *state != "" {
		b, err := os.ReadFile(*state)
		switch {
		case err == nil:
			if flags.Changed("since") {
				return usagef("--since and an existing --state file both say where to start")
			}
			if *since, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
				return fmt.Errorf("%s: not a backup version: %w", *state, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
	}
	out, ok := e.stdout.(*os.File)
	if !ok || isTerminal(out) {
		return usagef("redirect standard output to the backup file")
	}
	if backend.IsPostgres(db.dir) {
		return usagef("backup works on an index directory; back up PostgreSQL with its own tools (pg_dump)")
	}
	if db.compression != "" {
		return usagef("--compression does not apply: backup writes no tables")
	}
	// A backup only reads: a read-only open works on read-only media, runs
	// beside other readers, and a killed backup leaves nothing to recover.
	st, err := db.openStore(e, &backend.Options{MustExist: true, ReadOnly: true, Wait: db.wait})
	if err != nil {
		return err
	}
	defer st.Close()
	var info index.BackupInfo
	switch b := st.(type) {
	case *index.DB:
		info, err = b.Backup(out, *since)
	case *remote.DB:
		// The server's index, while the server runs.
		info = index.BackupInfo{Profile: b.Profile(), Since: *since}
		info.Until, err = b.Backup(out, *since)
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
	if *state != "" {
		// The backup is written; only now may the chain move on.
		if err := writeFileSync(*state, []byte(strconv.FormatUint(info.Until, 10)+"\n")); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "urlhash: backup: %s, profile %s; next: --since %d\n", kind, info.Profile, info.Until)
	return nil
}

// writeFileSync replaces name with data durably: a temporary file, fsync,
// rename.
func writeFileSync(name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, name)
}

// isPipeOrDevice reports whether f cannot be fsynced meaningfully.
func isPipeOrDevice(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && !fi.Mode().IsRegular()
}

func restoreCommand() *command {
	return &command{
		name:    "restore",
		summary: "restore an index from backups",
		usage: `Usage: urlhash restore --db DIR FILE...

Restores the backups, in the order given, into the index, creating it: a
full backup first (into an index with no entries), then the incremental
backups of its chain in the order they were taken; a gap in the chain is
refused. A cut or damaged backup is an error, and the entries before the
damage stay in DIR: restore into a new directory. Until a restore ends
well (not cut, refused or killed), DIR holds the file urlhash.restoring
and every command refuses it: remove DIR and restore the chain again.

Flags:
      --db DIR           the index directory to restore into

Example:
  $ urlhash restore --db copy full.bak incr1.bak incr2.bak
  urlhash: restore: full.bak: full, up to 48213
`,
		run: runRestore,
	}
}

func runRestore(e *env, args []string) error {
	fs := newFlags("restore")
	var db dbFlags
	db.addFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("no backup files")
	}
	if db.dir == "" || backend.IsPostgres(db.dir) || remote.IsLocation(db.dir) {
		return usagef("--db DIR, an index directory, is required (restore into a directory, then serve it)")
	}
	st, err := db.openStore(e, &backend.Options{Wait: db.wait})
	if err != nil {
		return err
	}
	defer st.Close()
	b := st.(*index.DB)
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		info, err := b.Restore(bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		kind := "full"
		if info.Since > 0 {
			kind = fmt.Sprintf("changes after %d", info.Since)
		}
		fmt.Fprintf(e.stderr, "urlhash: restore: %s: %s, up to %d\n", name, kind, info.Until)
	}
	return st.Close()
}
