package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

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

// valueLogScenario: entries with long values in Badger's value log and
// short ones in its tree, rewritten batch after batch, each batch synced
// and then acknowledged, the power cut after a random batch. After the
// loss the index opens, and every key holds the value of the last batch
// acknowledged for it or of a later one, whole.
func valueLogScenario() powerScenario {
	return powerScenario{name: "valuelog", setup: func(p *powerTest) *powerState {
		dir := filepath.Join(p.dir, "idx")
		acked := map[int]int{} // key: the last batch acknowledged for it
		next := 0
		return &powerState{round: func(p *powerTest, r *powerRound, st *powerStats) {
			from := next
			next += valueLogBatches
			cut := p.cut(r, valueLogBatches)
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), valueLogWriterEnv+"="+dir, fmt.Sprintf("%s=%d", valueLogFromEnv, from))
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				p.t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			started, err := r.start(cmd)
			if err != nil {
				p.t.Fatal(err)
			}
			if started {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					b, err := strconv.Atoi(sc.Text())
					if err != nil {
						p.t.Fatalf("round %d: the writer printed %q", st.rounds, sc.Text())
					}
					for _, k := range valueLogKeysOf(b) {
						acked[k] = b
					}
					st.acked += valueLogBatch
					cut()
				}
				if err := cmd.Wait(); err != nil && !r.isLost() {
					p.t.Errorf("round %d: writer: %v: %s", st.rounds, err, stderr.String())
				}
			}
			r.end()
			r.cycle()
			db, err := index.Open(dir, valueLogOptions(dir))
			if err != nil {
				st.firstOpenFailed++
				p.t.Errorf("round %d: the first open after the power loss failed: %v", st.rounds, err)
				return
			}
			defer db.Close()
			for k, b := range acked {
				v, err := db.Get(context.Background(), valueLogKey(k))
				if err != nil {
					st.lost++
					p.t.Errorf("round %d: key %d (acknowledged in batch %d): %v", st.rounds, k, b, err)
					continue
				}
				got := -1
				if len(v.Data) >= 16 {
					got = int(binary.BigEndian.Uint64(v.Data))
				}
				if got < b || got >= next || !bytes.Equal(valueLogEntry(got, k).Value.Data, v.Data) {
					st.lost++
					p.t.Errorf("round %d: key %d (acknowledged in batch %d): %d bytes of batch %d", st.rounds, k, b, len(v.Data), got)
				}
			}
			if err := db.Verify(context.Background()); err != nil {
				p.t.Errorf("round %d: verify after the power loss: %v", st.rounds, err)
			}
		}}
	}}
}
