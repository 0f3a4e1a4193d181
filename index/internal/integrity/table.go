package integrity

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/dgraph-io/ristretto/v2/z"
)

// A Table is a table the MANIFEST lists.
type Table struct {
	ID          uint64
	path        string
	Compression options.CompressionType
	encrypted   bool
	left, right []byte // smallest and biggest key, without Badger's version suffix
	verified    bool   // every block checked
}

// Name returns the table's file name, for messages.
func (t *Table) Name() string { return table.IDToFilename(t.ID) }

// openTables opens the index of every table (and, when verify is set,
// checks every block) in the calling goroutines, where a panic can be
// recovered (inside badger.Open a truncated table kills the process), and
// records each table's key range. It returns one problem per table that
// does not open.
func openTables(tables []Table, blockSize int, verify bool) []string {
	problems := make([]string, len(tables))
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(tables); i += workers {
				if err := openTable(&tables[i], blockSize, verify); err != nil {
					problems[i] = fmt.Sprintf("%s: %v", tables[i].Name(), err)
				}
			}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(problems, func(p string) bool { return p == "" })
}

// openTable opens t read-only, records its key range and, when
// verify is set, checks every block's checksum. It never writes to the
// file and turns Badger's panics into errors. It opens as Badger will,
// with block checksums on: opening a table reads its last block (the
// biggest key), and a damaged last block that still decompressed passed
// here without them, then failed badger.Open with an error that is not
// store.ErrCorrupt (TestTableTailDamageNamed).
func openTable(t *Table, blockSize int, verify bool) error {
	if t.encrypted {
		return nil // needs the key registry: Badger checks it
	}
	return WithTable(t.path, t.Compression, blockSize, options.OnBlockRead, func(tb *table.Table) error {
		t.left = userKey(tb.Smallest())
		t.right = userKey(tb.Biggest())
		if verify {
			t.verified = true
			return tb.VerifyChecksum()
		}
		return nil
	})
}

// WithTable opens the table file at path read-only and calls fn with it,
// turning a panic of Badger's table code into an error.
//
// The table is read through a memory map: a file cut short under it (by
// Badger deleting a table a compaction replaced, in a writable index)
// faults, and the fault is turned into a panic, recovered here, rather
// than killing the process.
func WithTable(path string, comp options.CompressionType, blockSize int, mode options.ChecksumVerificationMode, fn func(*table.Table) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.ErrNotExist
		}
		return errors.New(FirstLine(err.Error()))
	}
	var tb *table.Table
	defer func() {
		if p := recover(); p != nil {
			msg := FirstLine(fmt.Sprint(p))
			if strings.Contains(msg, "initIndex") {
				msg = "footer or index unreadable (truncated?)"
			}
			err = fmt.Errorf("damaged: %s", msg)
		}
		if tb != nil {
			tb.Close(-1) // never DecrRef: at zero references it deletes the file
		} else {
			mf.Close(-1)
		}
	}()
	tb, err = table.OpenTable(mf, table.Options{
		ReadOnly:    true,
		ChkMode:     mode,
		Compression: comp,
		BlockSize:   blockSize,
	})
	if err != nil {
		tb = nil
		return fmt.Errorf("damaged: %s", FirstLine(err.Error()))
	}
	if err := fn(tb); err != nil {
		return fmt.Errorf("damaged: %s", FirstLine(err.Error()))
	}
	return nil
}

// FirstLine returns the first non-empty line of s (Badger's panics carry
// multi-line dumps).
func FirstLine(s string) string {
	s = strings.TrimLeft(s, "\n =")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// userKey strips Badger's 8-byte version suffix from an internal key.
func userKey(k []byte) []byte {
	if len(k) < 8 {
		return nil
	}
	return slices.Clone(k[:len(k)-8])
}

// ReadBlocks reads every block of tb that passes its checksum.
func ReadBlocks(tb *table.Table) (recs []Record, blocks, bad int) {
	// KeySplits with more parts than blocks returns every block's first
	// key (the table's index, already verified by OpenTable).
	starts := tb.KeySplits(math.MaxInt32, nil)
	for i, start := range starts {
		var end []byte
		if i+1 < len(starts) {
			end = []byte(starts[i+1])
		}
		got, ok := readBlock(tb, []byte(start), end)
		if !ok {
			bad++
			continue
		}
		recs = append(recs, got...)
	}
	return recs, len(starts), bad
}

// readBlock reads the records from start (a block's first key) up to end
// (the next block's, nil for the last block). It reports false when the
// block cannot be read.
func readBlock(tb *table.Table, start, end []byte) (recs []Record, ok bool) {
	defer func() {
		if recover() != nil {
			recs, ok = nil, false
		}
	}()
	it := tb.NewIterator(table.NOCACHE)
	defer it.Close()
	it.Seek(start)
	if !it.Valid() || !bytes.Equal(it.Key(), start) {
		return nil, false
	}
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if end != nil && y.CompareKeys(k, end) >= 0 {
			break
		}
		v := it.ValueCopy()
		recs = append(recs, Record{
			Key:       bytes.Clone(y.ParseKey(k)),
			Version:   y.ParseTs(k),
			Meta:      v.Meta,
			ExpiresAt: v.ExpiresAt,
			Value:     v.Value,
		})
	}
	// Stopped before end: the next block failed (its own turn says so).
	return recs, true
}

// A Record is one version of a key, from any file.
type Record struct {
	Key       []byte // the index's key, without Badger's version
	Version   uint64
	Meta      byte // Badger's record flags (BitDelete, ...)
	ExpiresAt uint64
	Value     []byte // a value-log pointer when Meta has BitValuePointer
}

// VerifyBlocks checks the checksum of every block of tb (opened with
// OnBlockRead). When one fails (Badger's VerifyChecksum then panics) it
// counts the blocks that fail.
func VerifyBlocks(tb *table.Table) error {
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%v", p)
			}
		}()
		return tb.VerifyChecksum()
	}()
	if err == nil {
		return nil
	}
	if _, blocks, bad := ReadBlocks(tb); bad > 0 {
		return fmt.Errorf("%d of %d blocks fail their checksum", bad, blocks)
	}
	return err
}
