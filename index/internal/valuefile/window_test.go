package valuefile

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// countingFile counts the reads of a memFile.
type countingFile struct {
	*memFile
	reads int
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.memFile.ReadAt(p, off)
}

// TestWindow: a window of ordinals in random order decodes each block
// it needs once (one frame read a block), answers each value, keeps
// nothing across Reset, and refuses an ordinal it did not plan.
func TestWindow(t *testing.T) {
	vs := testValues(5000, 7)
	m, _ := write(t, vs, Options{NoTrain: true, BlockSize: 1024})
	cf := &countingFile{memFile: m}
	r, err := Open(cf, int64(len(m.b)), "x.values", NewCache(0))
	if err != nil {
		t.Fatal(err)
	}
	if r.Blocks() < 50 {
		t.Fatalf("%d blocks: want many", r.Blocks())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	w := r.NewWindow()
	for round := range 3 {
		ords := rng.Perm(len(vs))[:1500+round*1000]
		blocks := map[int]bool{}
		var planned int64
		for _, o := range ords {
			if planned, err = w.Plan(uint32(o)); err != nil {
				t.Fatal(err)
			}
			i, _ := r.blockOf(uint32(o))
			blocks[i] = true
		}
		var raw int64
		for i := range blocks {
			raw += int64(r.blocks[i].rawLen)
		}
		if planned != raw || w.Planned() != raw {
			t.Fatalf("round %d: planned %d decoded bytes, the blocks hold %d", round, planned, raw)
		}
		cf.reads = 0
		if err := w.Load(); err != nil {
			t.Fatal(err)
		}
		if cf.reads != len(blocks) {
			t.Fatalf("round %d: %d reads for %d blocks", round, cf.reads, len(blocks))
		}
		for _, o := range ords {
			v, err := w.Value(uint32(o))
			if err != nil || !bytes.Equal(v, vs[o]) {
				t.Fatalf("round %d: value %d = %q, %v; want %q", round, o, v, err, vs[o])
			}
		}
		w.Reset()
		if w.Planned() != 0 {
			t.Fatalf("after Reset: %d bytes planned", w.Planned())
		}
		if _, err := w.Value(uint32(ords[0])); err == nil {
			t.Fatal("a value read after Reset, not planned again")
		}
	}
	if _, err := w.Plan(uint32(len(vs))); err == nil {
		t.Fatal("an ordinal past the file's values was planned")
	}
}
