//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urlhash/urlhash/index"
)

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
