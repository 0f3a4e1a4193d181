package keytable

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios runs the scripts of testdata/scenarios (cockroachdb/
// datadriven): writes, lookups, scans, merges, reopenings and crashes of
// one table, with the table's clock set by the script. Keys are named by
// numbers (keyOf). -update rewrites the expected outputs (datadriven's
// -rewrite).
func TestScenarios(t *testing.T) {
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
	datadriven.Walk(t, filepath.Join("testdata", "scenarios"), func(t *testing.T, path string) {
		s := &scenario{dir: t.TempDir()}
		defer s.close()
		datadriven.RunTest(t, path, s.run)
	})
}

type scenario struct {
	dir   string
	opts  Options
	tb    *Table
	now   int64
	names map[Key]int
	mu    sync.Mutex
	drops []ExpiryCount // reported by merges, not yet printed
}

func (s *scenario) close() {
	if s.tb != nil {
		s.tb.Close()
		s.tb = nil
	}
}

// key returns the key named n.
func (s *scenario) key(t testing.TB, word string) Key {
	n, err := strconv.Atoi(word)
	if err != nil {
		t.Fatalf("key %q: %v", word, err)
	}
	k := keyOf(uint64(n))
	if s.names == nil {
		s.names = map[Key]int{}
	}
	s.names[k] = n
	return k
}

func (s *scenario) name(k Key) string {
	if n, ok := s.names[k]; ok {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%x", k[:4])
}

func (s *scenario) open(t testing.TB) string {
	s.opts.Now = func() int64 { return s.now }
	s.opts.Expired = func(d []ExpiryCount) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.drops = append(s.drops, d...)
	}
	tb, err := Open(s.dir, &s.opts)
	if err != nil {
		return fmt.Sprintf("error: %v", strings.ReplaceAll(err.Error(), s.dir, "DIR"))
	}
	s.tb = tb
	return ""
}

func (s *scenario) keysOf(t testing.TB, td *datadriven.TestData) []Key {
	var keys []Key
	for _, a := range td.CmdArgs {
		if a.Key == "keys" {
			for _, v := range a.Vals {
				keys = append(keys, s.key(t, v))
			}
		}
	}
	for _, w := range strings.Fields(td.Input) {
		keys = append(keys, s.key(t, w))
	}
	return keys
}

func colsString(c Cols) string {
	var b strings.Builder
	for _, f := range []struct {
		name string
		v    int64
	}{{"first", c.First}, {"last", c.Last}, {"expires", c.Expires}} {
		if f.v != 0 {
			fmt.Fprintf(&b, " %s=%d", f.name, f.v)
		}
	}
	return b.String()
}

func prevString(p Prev) string {
	var ws []string
	if p.Live {
		ws = append(ws, "was live")
	}
	if p.Removed {
		w := "removed"
		if p.Expires != 0 {
			w += fmt.Sprintf(" expires=%d", p.Expires)
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return "nothing"
	}
	return strings.Join(ws, ", ")
}

func (s *scenario) run(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "open":
		s.close()
		s.opts = Options{}
		td.MaybeScanArgs(t, "delta", &s.opts.DeltaKeys)
		s.opts.ReadOnly = td.HasArg("readonly")
		s.opts.noMerge = td.HasArg("nomerge")
		return s.open(t)
	case "reopen":
		s.close()
		return s.open(t)
	case "crash":
		// The files as a killed process leaves them (no Close), opened
		// from a copy.
		if s.tb != nil {
			s.tb.mergeWG.Wait()
		}
		dir := crashCopy(t, s.dir)
		s.close()
		s.dir = dir
		return s.open(t)
	case "clock":
		td.ScanArgs(t, "now", &s.now)
		return ""
	case "write":
		return s.write(t, td)
	case "has":
		keys := s.keysOf(t, td)
		found := make([]bool, len(keys))
		if _, err := s.tb.HasBatch(keys, found); err != nil {
			return "error: " + err.Error()
		}
		var b strings.Builder
		for i := range keys {
			ok, _, err := s.tb.Has(&keys[i])
			if err != nil {
				return "error: " + err.Error()
			}
			if ok != found[i] {
				t.Fatalf("%s: Has %v, HasBatch %v", s.name(keys[i]), ok, found[i])
			}
			fmt.Fprintf(&b, "%s: %v\n", s.name(keys[i]), map[bool]string{true: "live", false: "absent"}[ok])
		}
		return b.String()
	case "get":
		keys := s.keysOf(t, td)
		found := make([]Found, len(keys))
		vals := make([][]byte, len(keys))
		if _, err := s.tb.GetBatch(keys, found, func(i int, v []byte) error {
			vals[i] = slices.Clone(v)
			return nil
		}); err != nil {
			return "error: " + err.Error()
		}
		var b strings.Builder
		for i := range keys {
			fd, v, err := s.tb.Get(&keys[i], nil, true)
			if err != nil {
				return "error: " + err.Error()
			}
			if fd.Live != found[i].Live || fd.Cols != found[i].Cols || string(v) != string(vals[i]) {
				t.Fatalf("%s: Get %+v %q, GetBatch %+v %q", s.name(keys[i]), fd, v, found[i], vals[i])
			}
			if !fd.Live {
				fmt.Fprintf(&b, "%s: absent\n", s.name(keys[i]))
				continue
			}
			fmt.Fprintf(&b, "%s: live%s", s.name(keys[i]), colsString(fd.Cols))
			if fd.HasValue {
				fmt.Fprintf(&b, " value=%s", v)
			}
			b.WriteString("\n")
		}
		return b.String()
	case "scan":
		o := ScanOptions{Values: td.HasArg("values"), Expired: td.HasArg("expired")}
		var b strings.Builder
		err := s.tb.ScanEntries(nil, 0, o, func(e *Entry) error {
			fmt.Fprintf(&b, "%s%s", s.name(e.Key), colsString(e.Cols))
			if e.HasValue {
				if o.Values {
					fmt.Fprintf(&b, " value=%s", e.Value)
				} else {
					b.WriteString(" (value)")
				}
			}
			if e.Expired {
				b.WriteString(" expired")
			}
			b.WriteString("\n")
			return nil
		})
		if err != nil {
			return "error: " + err.Error()
		}
		return b.String()
	case "len":
		return fmt.Sprintf("%d\n", s.tb.Len())
	case "merge":
		waitMerges(s.tb)
		s.mu.Lock()
		defer s.mu.Unlock()
		var b strings.Builder
		for _, d := range s.drops {
			fmt.Fprintf(&b, "dropped %d expiring at %d\n", d.Count, d.Expires)
		}
		s.drops = nil
		return b.String()
	case "files":
		var b strings.Builder
		s.tb.mu.RLock()
		defer s.tb.mu.RUnlock()
		for _, f := range s.tb.files {
			h := &f.hdr
			fmt.Fprintf(&b, "%s v%d rows=%d tombstones=%d widths=%v values=%d", filepath.Base(f.name), h.version, h.count, h.deleted, h.lay.width, h.values)
			if f.vals != nil {
				fmt.Fprintf(&b, " of %d", f.vals.Len())
			}
			b.WriteString("\n")
		}
		return b.String()
	case "verify":
		if err := s.tb.Verify(); err != nil {
			return "error: " + err.Error()
		}
		return "ok\n"
	}
	t.Fatalf("unknown command %q", td.Cmd)
	return ""
}

// write runs a batch of the input's lines: "add K...", "delete K...",
// "set K [first=N] [last=N] [expires=N] [value=S] [keep]", "opaque S".
func (s *scenario) write(t *testing.T, td *datadriven.TestData) string {
	var b Batch
	for _, line := range strings.Split(td.Input, "\n") {
		ws := strings.Fields(line)
		if len(ws) == 0 {
			continue
		}
		switch ws[0] {
		case "add":
			for _, w := range ws[1:] {
				b.Added = append(b.Added, s.key(t, w))
			}
		case "delete":
			for _, w := range ws[1:] {
				b.Deleted = append(b.Deleted, s.key(t, w))
			}
		case "opaque":
			b.Opaque = []byte(ws[1])
		case "set":
			st := Set{Key: s.key(t, ws[1])}
			for _, w := range ws[2:] {
				name, v, _ := strings.Cut(w, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				switch name {
				case "first":
					st.Cols.First = n
				case "last":
					st.Cols.Last = n
				case "expires":
					st.Cols.Expires = n
				case "value":
					st.Value = []byte(v)
				case "keep":
					st.KeepValue = true
				default:
					t.Fatalf("set: unknown %q", w)
				}
			}
			b.Set = append(b.Set, st)
		default:
			t.Fatalf("write: unknown line %q", line)
		}
	}
	r := Result{Added: make([]Prev, len(b.Added)), Deleted: make([]Prev, len(b.Deleted)), Set: make([]Prev, len(b.Set))}
	seq, err := s.tb.Write(&b, &r)
	if err == nil {
		err = s.tb.SyncTo(seq)
	}
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), s.dir, "DIR")
	}
	var out strings.Builder
	for i, p := range r.Added {
		fmt.Fprintf(&out, "add %s: %s (%s)\n", s.name(b.Added[i]), map[bool]string{true: "present", false: "added"}[p.Live], prevString(p))
	}
	for i, p := range r.Deleted {
		fmt.Fprintf(&out, "delete %s: %s (%s)\n", s.name(b.Deleted[i]), map[bool]string{true: "deleted", false: "absent"}[p.Live], prevString(p))
	}
	for i, p := range r.Set {
		fmt.Fprintf(&out, "set %s: %s\n", s.name(b.Set[i].Key), prevString(p))
	}
	return out.String()
}
