package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/urlhash/urlhash/index"
)

// TestKeyTableDamage is the damage matrix of the key table: every file of
// an index's key table (testdata/keytable-damage.txt names them by role),
// flipped, cut and deleted, under has, export, verify, stats, a writing
// open (add) and recover, run as an operator would. The rule: no wrong
// answer and no silent loss in any cell. Each cell says what it must do:
//
//   - answer: the right answer, exit 0 (add: and the index then answers
//     every key, the new ones too, or names the file);
//   - error: exit 2 with an error naming the damaged file;
//   - either: one of those two;
//   - whole: recover exits 0 and the copy holds every key;
//   - lost: recover exits 1, its report naming the file as lost, and the
//     copy holds no key that was not stored.
//
// With -v the test logs every cell's outcome. (The 8 cells of flipped
// keys under has, export, stats and add failed until the key table
// checked its keys' pages on the read path and in merges: issue 34,
// items 1-2.)
func TestKeyTableDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 20,300 keys and runs 90 commands")
	}
	rows := readDamageMatrix(t, "testdata/keytable-damage.txt")
	src := buildDamageSource(t)
	var mu sync.Mutex
	var table []string
	for _, row := range rows {
		t.Run(row.file+"/"+row.damage, func(t *testing.T) {
			t.Parallel()
			for i, cmd := range damageCommands {
				want := row.expect[i]
				dir := filepath.Join(t.TempDir(), "idx")
				copyTreeT(t, src.dir, dir)
				name := damageFile(t, dir, row.file, row.damage)
				got := cmd.run(t, src, dir, name)
				cell := row.file + " " + row.damage + " " + cmd.name
				ok := got == want || want == "either" && (got == "answer" || got == "error")
				if !ok {
					t.Errorf("%s: %s, want %s", cell, got, want)
				}
				mu.Lock()
				table = append(table, fmt.Sprintf("%-12s %-8s %-8s %-7s %s", row.file, row.damage, cmd.name, want, got))
				mu.Unlock()
			}
		})
	}
	t.Cleanup(func() {
		slices.Sort(table)
		t.Logf("file         damage   command  expect  outcome\n%s", strings.Join(table, "\n"))
	})
}

// A damageRow is a line of the matrix: a file, a damage, and what each of
// damageCommands must do.
type damageRow struct {
	file, damage string
	expect       []string
}

func readDamageMatrix(t *testing.T, path string) []damageRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []damageRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2+len(damageCommands) {
			t.Fatalf("%s:%d: %d fields, want file, damage and %d outcomes", path, n, len(fields), len(damageCommands))
		}
		for _, e := range fields[2:] {
			if !slices.Contains([]string{"answer", "error", "either", "whole", "lost"}, e) {
				t.Fatalf("%s:%d: unknown outcome %q", path, n, e)
			}
		}
		if !slices.Contains([]string{"flipped", "cut", "deleted"}, fields[1]) {
			t.Fatalf("%s:%d: unknown damage %q", path, n, fields[1])
		}
		rows = append(rows, damageRow{fields[0], fields[1], fields[2:]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// damageSource is the undamaged index the matrix copies, and its answers.
type damageSource struct {
	dir       string
	urls      string // a file of every URL stored
	news      string // a file of URLs the add cell adds
	export    string // export of the index
	exportAdd string // export after the add cell's add
	entries   string // stats' "entries: N" line
}

// buildDamageSource builds an index whose key table has an old key file
// (20,000 keys imported), a newer one (200 added, merged at the next
// open) and a log segment (100 added), as an operator's CLI leaves it:
// an add's open merges the log with the newer file.
func buildDamageSource(t *testing.T) *damageSource {
	t.Helper()
	tmp := t.TempDir()
	s := &damageSource{dir: filepath.Join(tmp, "src"), urls: filepath.Join(tmp, "all.txt"), news: filepath.Join(tmp, "new.txt")}
	var all []string
	part := func(name string, from, n int) string {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			u := fmt.Sprintf("https://site%d.example/page/%d", i%97, i)
			b.WriteString(u + "\n")
			all = append(all, u)
		}
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	steps := [][]string{
		{"import", "--db", s.dir, part("a.txt", 0, 20000)},
		{"add", "--db", s.dir, "--from", part("b.txt", 20000, 200)},
		{"add", "--db", s.dir, "--from", part("c.txt", 20200, 100)},
	}
	for _, args := range steps {
		if code, _, errs := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	if err := os.WriteFile(s.urls, []byte(strings.Join(all, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	all = all[:0]
	part("new.txt", 30000, 100)
	for _, role := range []string{"keys:oldest", "keys:newest", "log", "MANIFEST", "SYNCED"} {
		roleFile(t, s.dir, role)
	}
	if keys, _ := filepath.Glob(filepath.Join(s.dir, "keytable", "*.keys")); len(keys) != 2 {
		t.Fatalf("the source's key table has %d key files, want 2", len(keys))
	}
	var errs string
	var code int
	if code, s.export, errs = runCLI(t, "", "export", "--db", s.dir); code != exitOK {
		t.Fatalf("export: %s", errs)
	}
	_, stats, _ := runCLI(t, "", "stats", "--db", s.dir)
	s.entries = statsEntries(stats)
	if s.entries != "entries: 20300" {
		t.Fatalf("stats of the source: %q", s.entries)
	}
	after := filepath.Join(tmp, "after")
	copyTreeT(t, s.dir, after)
	if code, _, errs := runCLI(t, "", "add", "--db", after, "--from", s.news); code != exitOK {
		t.Fatalf("add: %s", errs)
	}
	if code, s.exportAdd, errs = runCLI(t, "", "export", "--db", after); code != exitOK {
		t.Fatalf("export: %s", errs)
	}
	return s
}

func statsEntries(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "entries: ") {
			return l
		}
	}
	return ""
}

// roleFile returns the path of the key-table file of the index in dir
// that role names: keys:oldest and keys:newest (the key files with the
// lowest and highest number), log (the newest segment), MANIFEST, SYNCED.
func roleFile(t *testing.T, dir, role string) string {
	t.Helper()
	kt := filepath.Join(dir, "keytable")
	pick := func(pattern string, newest bool) string {
		names, _ := filepath.Glob(filepath.Join(kt, pattern))
		if len(names) == 0 {
			t.Fatalf("no %s in %s", pattern, kt)
		}
		slices.Sort(names)
		if newest {
			return names[len(names)-1]
		}
		return names[0]
	}
	switch role {
	case "keys:oldest":
		return pick("*.keys", false)
	case "keys:newest":
		return pick("*.keys", true)
	case "log":
		return pick("*.log", true)
	case "MANIFEST", "SYNCED":
		p := filepath.Join(kt, role)
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Fatalf("unknown file %q", role)
	return ""
}

// damageFile damages the file role names in the index in dir and returns
// the name an error must give it ("keytable/NAME"). flipped: the last
// byte of 64 keys spread over a key file, one byte in the middle of any
// other file; cut: the second half removed; deleted: removed.
func damageFile(t *testing.T, dir, role, damage string) string {
	t.Helper()
	path := roleFile(t, dir, role)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch damage {
	case "flipped":
		if strings.HasPrefix(role, "keys:") {
			n := int(binary.LittleEndian.Uint64(b[16:])) // the header's row count
			for i := range 64 {
				b[keyByte(b, i*n/64)] ^= 0xff
			}
		} else {
			b[len(b)/2] ^= 0x20
		}
		err = os.WriteFile(path, b, 0o644)
	case "cut":
		err = os.WriteFile(path, b[:len(b)/2], 0o644)
	case "deleted":
		err = os.Remove(path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return "keytable/" + filepath.Base(path)
}

// keyByte returns the offset of the last byte of row r's key in the key
// file b: version 1, keys after a 64-byte header; version 2, rows (the
// key, then the columns and value reference the header's widths give)
// in pages of 2^shift rows, each followed by its 4-byte checksum, after a
// 128-byte header.
func keyByte(b []byte, r int) int {
	if b[8] == 1 {
		return 64 + 32*r + 31
	}
	shift := int(b[10])
	rw := 32 + int(b[12]) + int(b[13]) + int(b[14]) + int(b[15])
	page := (1<<shift)*rw + 4
	return 128 + (r>>shift)*page + (r&(1<<shift-1))*rw + 31
}

// A damageCommand runs one command on a damaged index and classifies
// what it did: answer, error (named), whole, lost, or a line starting
// with WRONG or UNNAMED.
type damageCommand struct {
	name string
	run  func(t *testing.T, s *damageSource, dir, file string) string
}

// named classifies a failed command: exit 2 naming the file, or not.
func named(code int, errs, file string) string {
	switch {
	case code == exitError && strings.Contains(errs, file):
		return "error"
	case code == exitError:
		return "UNNAMED: " + firstLine(errs)
	}
	return fmt.Sprintf("WRONG: exit %d: %s", code, firstLine(errs))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(l) > 160 {
		l = l[:160] + "..."
	}
	return l
}

var damageCommands = []damageCommand{
	{"has", func(t *testing.T, s *damageSource, dir, file string) string {
		code, out, errs := runCLI(t, "", "has", "--db", dir, "--from", s.urls)
		if code == exitOK {
			return "answer"
		}
		if code == exitNotFound {
			return fmt.Sprintf("WRONG: %d stored URLs answered absent, exit 1, no error", strings.Count(out, "absent\t"))
		}
		return named(code, errs, file)
	}},
	{"export", func(t *testing.T, s *damageSource, dir, file string) string {
		code, out, errs := runCLI(t, "", "export", "--db", dir)
		switch {
		case code == exitOK && out == s.export:
			return "answer"
		case code == exitOK:
			missing, foreign := diffLines(s.export, out)
			return fmt.Sprintf("WRONG: exit 0 without %d stored keys, with %d never stored", missing, foreign)
		}
		return named(code, errs, file)
	}},
	{"verify", func(t *testing.T, s *damageSource, dir, file string) string {
		code, _, errs := runCLI(t, "", "verify", "--db", dir)
		if code == exitOK {
			return "answer"
		}
		return named(code, errs, file)
	}},
	{"stats", func(t *testing.T, s *damageSource, dir, file string) string {
		code, out, errs := runCLI(t, "", "stats", "--db", dir)
		switch {
		case code == exitOK && statsEntries(out) == s.entries:
			return "answer"
		case code == exitOK:
			return fmt.Sprintf("WRONG: exit 0, %q, want %q", statsEntries(out), s.entries)
		}
		return named(code, errs, file)
	}},
	{"add", func(t *testing.T, s *damageSource, dir, file string) string {
		code, _, errs := runCLI(t, "", "add", "--db", dir, "--from", s.news)
		if code != exitOK {
			return named(code, errs, file)
		}
		// The add answered; the index must then answer every key, the
		// new ones too, or still name the damage (not launder it in a
		// merge) and hold the new keys.
		code, out, errs := runCLI(t, "", "export", "--db", dir)
		switch {
		case code == exitOK && out == s.exportAdd:
			return "answer"
		}
		vcode, _, verrs := runCLI(t, "", "verify", "--db", dir)
		if code == exitOK {
			missing, foreign := diffLines(s.exportAdd, out)
			verified := "verify names the file"
			if vcode == exitOK {
				verified = "verify passes (the damage laundered)"
			}
			return fmt.Sprintf("WRONG: add exit 0, then export exit 0 without %d keys, with %d never stored; %s", missing, foreign, verified)
		}
		hcode, _, _ := runCLI(t, "", "has", "--db", dir, "--from", s.news)
		if named(vcode, verrs, file) == "error" && hcode == exitOK {
			return "answer" // the damage still named
		}
		return fmt.Sprintf("WRONG: add exit 0, then export exit %d and verify: %s", code, named(vcode, verrs, file))
	}},
	{"recover", func(t *testing.T, s *damageSource, dir, file string) string {
		to := filepath.Join(t.TempDir(), "new")
		code, out, errs := runCLI(t, "", "recover", "--db", dir, "--to", to, "--json")
		if code == exitError {
			return named(code, errs, file)
		}
		var rep index.RecoverReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			return fmt.Sprintf("WRONG: recover exit %d, its report: %v", code, err)
		}
		ecode, export, eerrs := runCLI(t, "", "export", "--db", to)
		if ecode != exitOK {
			return fmt.Sprintf("WRONG: recover exit %d, then export of the copy: %s", code, firstLine(eerrs))
		}
		_, foreign := diffLines(s.export, export)
		named := false
		for _, f := range rep.Files {
			named = named || f.Name == file && (f.Lost > 0 || f.LostUnknown)
		}
		switch {
		case foreign > 0:
			return fmt.Sprintf("WRONG: recover exit %d copied %d keys never stored", code, foreign)
		case code == exitOK && export == s.export:
			return "whole"
		case code == exitOK:
			return fmt.Sprintf("WRONG: recover exit 0, %d of %d keys copied", strings.Count(export, "\n"), strings.Count(s.export, "\n"))
		case code == exitNotFound && named:
			return "lost"
		}
		return fmt.Sprintf("WRONG: recover exit %d, its report does not name %s as lost", code, file)
	}},
}

// diffLines returns how many lines of want got lacks, and how many of got
// want lacks.
func diffLines(want, got string) (missing, foreign int) {
	w := map[string]bool{}
	for _, l := range lines(want) {
		w[l] = true
	}
	g := map[string]bool{}
	for _, l := range lines(got) {
		g[l] = true
		if !w[l] {
			foreign++
		}
	}
	for l := range w {
		if !g[l] {
			missing++
		}
	}
	return missing, foreign
}

// copyTreeT copies the directory src to dst, recursively.
func copyTreeT(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lines splits s into its lines, without the last newline (none for "").
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
