package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
)

// The valuelog scenario's writer, a child process: batches of entries
// written to an index whose Badger keeps values from 4 KiB in its value
// log (as an index of format 1 keeps long values), each batch synced and
// then printed. Small memtables and value-log files make Badger flush
// memtables and start value logs within a round.
const (
	valueLogWriterEnv = "URLHASH_TEST_VALUELOG_WRITER" // the index directory
	valueLogFromEnv   = "URLHASH_TEST_VALUELOG_FROM"   // the first batch number
	valueLogBatches   = 40                             // a round's batches
	valueLogKeys      = 600                            // keys, rewritten round after round
	valueLogBatch     = 150                            // entries a batch
)

// valueLogOptions are the writer's index options on dir.
func valueLogOptions(dir string) *index.Options {
	bo := badger.DefaultOptions(dir).WithLogger(nil)
	bo.MemTableSize = 1 << 20
	bo.ValueThreshold = 4 << 10
	bo.ValueLogFileSize = 1 << 20
	bo.BaseTableSize = 256 << 10
	bo.NumVersionsToKeep = 1
	bo.DetectConflicts = false
	return &index.Options{NoKeyTable: true, Badger: &bo}
}

// valueLogEntry is batch b's entry of key k: its data says b and k, and is
// long (the value log) for a quarter of them.
func valueLogEntry(b, k int) store.Entry {
	n := 2000
	if (b+k)%4 == 0 {
		n = 6000
	}
	d := make([]byte, n)
	binary.BigEndian.PutUint64(d, uint64(b))
	binary.BigEndian.PutUint64(d[8:], uint64(k))
	for i := 16; i < n; i++ {
		d[i] = byte(b + k + i)
	}
	return store.FullEntry(valueLogKey(k), store.Value{Data: d})
}

func valueLogKey(k int) hashkey.Hash { return hashkey.Sum([]byte("valuelog " + strconv.Itoa(k))) }

// valueLogKeysOf returns the keys batch b writes.
func valueLogKeysOf(b int) []int {
	ks := make([]int, valueLogBatch)
	for i := range ks {
		ks[i] = (b*valueLogBatch + i*7) % valueLogKeys
	}
	return ks
}

// runValueLogWriter is the child: it writes and prints batches until it
// is killed or has written a round's.
func runValueLogWriter(dir string) {
	from, err := strconv.Atoi(os.Getenv(valueLogFromEnv))
	if err == nil {
		err = writeValueLog(dir, from, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func writeValueLog(dir string, from int, out io.Writer) error {
	ctx := context.Background()
	db, err := index.Open(dir, valueLogOptions(dir))
	if err != nil {
		return err
	}
	defer db.Close()
	for b := from; b < from+valueLogBatches; b++ {
		var es []store.Entry
		for _, k := range valueLogKeysOf(b) {
			es = append(es, valueLogEntry(b, k))
		}
		if err := db.PutBatch(ctx, es); err != nil {
			return err
		}
		if err := db.Sync(ctx); err != nil {
			return err
		}
		fmt.Fprintln(out, b)
	}
	return db.Close()
}
