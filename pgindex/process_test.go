package pgindex

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/urlhash/urlhash/store"
)

// childEnv names the schema a child process of
// TestAddIfAbsentTwoProcesses adds keys to.
const childEnv = "URLHASH_PGINDEX_CHILD_SCHEMA"

const processKeys = 3000

// TestAddIfAbsentTwoProcesses runs two processes (this test binary again)
// that add the same keys to one index at the same time, as two crawler
// hosts deduplicating one frontier would: every key must be reported new
// by exactly one of them.
func TestAddIfAbsentTwoProcesses(t *testing.T) {
	if schema := os.Getenv(childEnv); schema != "" {
		addAsChild(t, schema)
		return
	}
	schema := newSchema(t)
	openSchema(t, &Options{Schema: schema}) // create it before the race
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAddIfAbsentTwoProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+schema, "URLHASH_PGINDEX_CHILD_SEED="+strconv.Itoa(i))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	count := make([]int, processKeys)
	perProcess := make([]int, len(cmds))
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			var k int
			if _, err := fmt.Sscanf(sc.Text(), "added %d", &k); err != nil {
				continue // test framework output
			}
			count[k]++
			perProcess[i]++
		}
	}
	for k, n := range count {
		if n != 1 {
			t.Fatalf("key %d reported new by %d processes", k, n)
		}
	}
	t.Logf("keys added per process: %v", perProcess)
}

// addAsChild adds processKeys keys, in an order of its own, in batches,
// and prints "added K" for each key it added.
func addAsChild(t *testing.T, schema string) {
	ctx := context.Background()
	db, err := Open(ctx, testURL(t), &Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hs := randHashes(rand.New(rand.NewPCG(42, 42)), processKeys)
	seed, _ := strconv.Atoi(os.Getenv("URLHASH_PGINDEX_CHILD_SEED"))
	order := rand.New(rand.NewPCG(uint64(seed), 1)).Perm(processKeys)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for start := 0; start < len(order); start += 100 {
		idx := order[start:min(start+100, len(order))]
		batch := make([]store.Entry, len(idx))
		for j, k := range idx {
			batch[j] = store.Entry{Hash: hs[k]}
		}
		added, err := db.AddBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for j, k := range idx {
			if added[j] {
				fmt.Fprintf(w, "added %d\n", k)
			}
		}
	}
}
