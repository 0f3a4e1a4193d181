package index

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/dgraph-io/badger/v4/table"
)

// releaseTablePages takes the pages of the complete tables of the index
// out of the process's resident set. Badger maps every table file it
// writes or reads (MAP_SHARED) and the pages it touched stay mapped:
// without this, a load's resident set would grow by the size of every
// table it writes (about 40 bytes an entry). The pages stay in the page
// cache (dirty ones too: the mapping is shared, and Badger's msync writes
// them back by file range), and a later read faults them in again.
//
// Only while a StreamWriter is open (compactions stopped): a table
// unmapped between the read of /proc/self/maps and the madvise could
// leave its range to an anonymous mapping, whose pages MADV_DONTNEED
// would zero.
func (db *DB) releaseTablePages() {
	dir, err := filepath.Abs(db.path)
	if err != nil {
		return
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	done := map[uint64]bool{}
	for _, t := range db.st.bdb.Tables() {
		done[t.ID] = true
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 6 || len(fields[1]) < 4 || fields[1][3] != 's' {
			continue
		}
		path := string(fields[5])
		id, ok := table.ParseFileID(path)
		if !ok || filepath.Dir(path) != dir || filepath.Ext(path) != ".sst" || !done[id] {
			continue
		}
		lo, hi, ok := bytes.Cut(fields[0], []byte{'-'})
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}
