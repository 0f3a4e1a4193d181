package keytable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/urlhash/urlhash/index/internal/valuefile"
	"github.com/urlhash/urlhash/store"
)

// Salvage reads a damaged key table for a copy (index's Recover), never
// through Open alone, which refuses a table at its first problem: every
// key file, value file and log segment is read on its own, so that no
// damaged file drops the others, and only what a checksum verifies is
// kept. What is kept is written, as a clean table, into memory, and read
// back with Open: the records mean there what they mean in the table
// (tombstones, records written over older rows, values kept, expiry).
// Nothing is written to the table's directory.

// Salvaged is what Salvage read of a key table.
type Salvaged struct {
	// Entries are the table's live entries that were read, in key order:
	// those of the key files (the newest file holding a key decides),
	// then the log records on top, as Open would have them. Values are
	// copies.
	Entries []Entry
	// Opaque holds the opaque bytes of the log records read (see
	// Batch.Opaque), in log order.
	Opaque [][]byte
	// Files is what became of each file, MANIFEST and SYNCED first, then
	// in name order.
	Files []SalvageFile
}

// SalvageFile is what Salvage made of one file of the table.
type SalvageFile struct {
	// Name is the file's name in the table's directory.
	Name string
	// Kind is "manifest", "synced mark", "key file", "value file", "log
	// segment", "log records" (records missing between two read ones) or
	// "acknowledged records" (records SYNCED says a sync acknowledged, in
	// the segment named, and not read).
	Kind string
	// Keys counts the rows and tombstones read and verified (a key file),
	// the values read (a value file), or the keys the records read add,
	// delete and set (a log segment).
	Keys int64
	// Records counts a log segment's records read whole.
	Records int64
	// Lost counts what the file held and was not kept: a key file's rows
	// and tombstones its checksums do not verify, a value file's values
	// (their keys kept without them), a log's records.
	Lost int64
	// LostUnknown says that something acknowledged was lost and its
	// amount is not known (a file missing, a segment unreadable from some
	// offset on).
	LostUnknown bool
	// Problem says what could not be read ("" when the file was read
	// whole), and what that means for the copy.
	Problem string
}

// lost reports whether f records a loss.
func (f *SalvageFile) lost() bool { return f.Lost > 0 || f.LostUnknown }

// Salvage reads the key table in dir (see Salvaged). Its MANIFEST, when
// it reads, says which key files hold the table, oldest first, and which
// log segments are not yet merged into them; key and value files it does
// not list are reported and not read (copies a merge left: an input it
// replaced, or an output a crash kept it from recording). Without a
// readable MANIFEST every key file is read, oldest (lowest number) first,
// and every log segment replayed: a key deleted in a file or segment that
// is gone may come back. A key file of version 2 is read page by page
// (each page of rows has its checksum), its tombstones whole; one of
// version 1 is kept whole or not at all (its keys and tombstones have one
// checksum). A value that does not read loses only itself: its key is
// kept. A log segment is read record by record; a damaged record is
// skipped when its length field still frames it, and ends the segment
// when not; records missing between two read ones are counted by their
// numbers, and against SYNCED, which names the last record a sync
// acknowledged. The error is for a directory that cannot be listed, or a
// clean copy that does not read back (a bug).
func Salvage(dir string) (*Salvaged, error) {
	disk := osFS{}
	names, err := disk.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("keytable: %w", err)
	}
	s := &Salvaged{}
	var keyNums, logNums, valueNums []uint64
	for _, name := range names {
		switch num, kind := parseName(name); kind {
		case "keys":
			keyNums = append(keyNums, num)
		case "log":
			logNums = append(logNums, num)
		case "values":
			valueNums = append(valueNums, num)
		}
	}
	slices.Sort(keyNums)
	slices.Sort(logNums)

	man := SalvageFile{Name: manifestName, Kind: "manifest"}
	m, ok, err := readManifest(disk, dir)
	switch {
	case err != nil:
		man.Problem = fmt.Sprintf("unreadable (%v): every key file read, oldest first, and every log segment replayed; a key deleted in a file or segment that is gone may come back", errors.Unwrap(err))
	case !ok && (len(keyNums) > 0 || len(logNums) > 0):
		man.Problem = "missing: every key file read, oldest first, and every log segment replayed; a key deleted in a file or segment that is gone may come back"
	}
	if err != nil || !ok {
		m = manifest{files: keyNums}
		if len(logNums) > 0 {
			m.logStart = logNums[0]
		}
	}
	s.Files = append(s.Files, man)
	head := 1

	mark := SalvageFile{Name: SyncedName, Kind: "synced mark"}
	markSeg, markSeq, err := readMark(disk, dir)
	if err != nil {
		mark.Problem = "damaged: the log's acknowledged records are not checked against it"
		markSeq = 0
	}
	if _, err := os.Stat(filepath.Join(dir, SyncedName)); err == nil || mark.Problem != "" {
		s.Files = append(s.Files, mark)
		head++
	}
	if markSeg < m.logStart {
		markSeq = 0 // a merged segment: nothing of the log to check (as Open)
	}

	// The clean copy, in memory.
	const clean = "/salvaged"
	mem := newSalvageFS()
	cache := valuefile.NewCache(8 << 20) // the damaged table's value files
	defer cache.Close()
	cm := manifest{logStart: m.logStart, nextNum: 1}
	for _, num := range m.files {
		fs, kept := salvageKeyFile(disk, dir, mem, clean, num, cache)
		s.Files = append(s.Files, fs...)
		if kept {
			cm.files = append(cm.files, num)
		}
		cm.nextNum = max(cm.nextNum, num+1)
	}
	for _, num := range keyNums {
		if !slices.Contains(m.files, num) {
			s.Files = append(s.Files, SalvageFile{Name: filepath.Base(fileName(dir, num)), Kind: "key file",
				Problem: "not listed in MANIFEST (a copy a merge left): not read"})
		}
		cm.nextNum = max(cm.nextNum, num+1)
	}
	for _, num := range valueNums {
		if !slices.Contains(m.files, num) {
			s.Files = append(s.Files, SalvageFile{Name: filepath.Base(valuesName(dir, num)), Kind: "value file",
				Problem: "its key file is not listed in MANIFEST (a copy a merge left): not read"})
		}
	}

	// The log, in order.
	r := logSalvage{dir: dir, markSeg: markSeg, markSeq: markSeq, mem: mem, clean: clean}
	var need []uint64
	for _, n := range logNums {
		if n >= m.logStart {
			need = append(need, n)
		}
	}
	for i, n := range need {
		if i > 0 && n != need[i-1]+1 {
			for gap := need[i-1] + 1; gap < n; gap++ {
				r.missing = append(r.missing, gap)
			}
		}
		s.Files = append(s.Files, r.segment(n, i == len(need)-1))
	}
	if len(need) > 0 && need[0] > m.logStart && ok {
		for gap := m.logStart; gap < need[0]; gap++ {
			r.missing = append(r.missing, gap)
		}
	}
	s.Files = append(s.Files, r.finish()...)
	slices.SortStableFunc(s.Files[head:], func(a, b SalvageFile) int { return strings.Compare(a.Name, b.Name) })

	// Read the clean copy back as the table it is.
	if cm.logStart == 0 {
		cm.logStart = cm.nextNum
	}
	if err := writeManifest(mem, clean, &cm); err != nil {
		return nil, err
	}
	t, err := Open(clean, &Options{ReadOnly: true, IgnoreSynced: true, fs: mem, noMerge: true, Replay: func(opaque []byte) error {
		s.Opaque = append(s.Opaque, bytes.Clone(opaque))
		return nil
	}})
	if err != nil {
		return nil, fmt.Errorf("keytable: salvage: the copy of what was read does not open: %w", err)
	}
	err = t.ScanEntries(nil, 0, ScanOptions{Values: true}, func(e *Entry) error {
		c := *e
		c.Value = bytes.Clone(e.Value)
		s.Entries = append(s.Entries, c)
		return nil
	})
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("keytable: salvage: the copy of what was read: %w", err)
	}
	return s, nil
}

// A salvaged row: its key, columns and value (nil: none).
type salvagedRow struct {
	k     Key
	cols  Cols
	value []byte
}

// salvageKeyFile reads the key file num of dir, and its value file: the
// rows and tombstones their checksums verify, and the values that read,
// written as a clean key file num (and value file) of the clean table
// into mem. kept says whether it wrote one (it held something verified).
func salvageKeyFile(disk fsys, dir string, mem *salvageFS, clean string, num uint64, cache *valuefile.Cache) (reports []SalvageFile, kept bool) {
	name := fileName(dir, num)
	f := SalvageFile{Name: filepath.Base(name), Kind: "key file"}
	rows, dead, vf := readKeyFileParts(disk, name, &f, cache)
	reports = append(reports, f)
	if vf != nil {
		reports = append(reports, *vf)
	}
	if len(rows) == 0 && len(dead) == 0 {
		return reports, false
	}
	var span colRange
	values := false
	for i := range rows {
		span.add(&rows[i].cols)
		values = values || len(rows[i].value) > 0
	}
	out, err := mem.OpenFile(fileName(clean, num), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		panic(err) // memory
	}
	var vw *valuefile.Writer
	var vout file
	pair := uint64(0)
	if values {
		pair = num*2 | 1
		vout, _ = mem.OpenFile(valuesName(clean, num), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		vw = valuefile.NewWriter(vout, valueOptions(pair, DefaultValueBlockSize, false))
	}
	fw := newFileWriter(out, uint64(len(rows)), layoutOf(span, values), vw, pair)
	for i := range rows {
		fw.add(&rows[i].k, &rows[i].cols, rows[i].value)
	}
	for i := range dead {
		fw.tombstone(&dead[i])
	}
	_, _, err = fw.finish()
	if err == nil && vw != nil {
		_, err = vw.Close()
	}
	if err != nil && vw != nil {
		vw.Abort()
	}
	if err != nil {
		// Rows that were verified, in order: a writer that refuses them
		// is a bug; the file is reported lost rather than the copy
		// failed.
		reports[0].Problem = joinProblems(append(strings.Split(reports[0].Problem, "; "), "could not be copied: "+err.Error()))
		reports[0].Lost += reports[0].Keys
		reports[0].Keys = 0
		mem.Remove(fileName(clean, num))
		mem.Remove(valuesName(clean, num))
		return reports, false
	}
	return reports, true
}

// readKeyFileParts reads what the checksums of the key file name verify:
// its rows (with their values, from its value file) and tombstones. f is
// its report; the value file's, when it has one, is returned.
func readKeyFileParts(disk fsys, name string, f *SalvageFile, cache *valuefile.Cache) (rows []salvagedRow, dead []Key, vf *SalvageFile) {
	data, err := disk.ReadFile(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			f.Problem = "listed in MANIFEST, missing: its keys are lost (how many is not recorded)"
		} else {
			f.Problem = "unreadable: " + err.Error()
		}
		f.LostUnknown = true
		return nil, nil, nil
	}
	if len(data) < headerSize1 {
		f.Problem = fmt.Sprintf("%d bytes, shorter than a header: its keys are lost (how many is not recorded)", len(data))
		f.LostUnknown = true
		return nil, nil, nil
	}
	switch v := data[8]; {
	case v == fileVersion1 || v != fileVersion && string(data[:8]) != fileMagic:
		// Version 1 (or a damaged version byte: the keys' checksum decides).
		rows, dead = readVersion1(data, f)
		return rows, dead, nil
	case v > fileVersion:
		f.Problem = fmt.Sprintf("key file version %d, this program reads up to %d: not read", v, fileVersion)
		f.LostUnknown = true
		return nil, nil, nil
	}
	return readVersion2(disk, name, data, f, cache)
}

// readVersion1 reads a version 1 key file: whole, when the checksum of
// its keys and tombstones (one for both) verifies them. The header's
// counts are read even when the header's own checksum (which covers the
// bucket array, not needed here) fails: the keys' checksum then verifies
// them too.
func readVersion1(data []byte, f *SalvageFile) (rows []salvagedRow, dead []Key) {
	hb := data[:headerSize1]
	count := binary.LittleEndian.Uint64(hb[16:])
	deleted := binary.LittleEndian.Uint64(hb[24:])
	dataCRC := binary.LittleEndian.Uint32(hb[32:])
	body := uint64(len(data)) - headerSize1
	if count > body/KeySize || deleted > body/KeySize || KeySize*(count+deleted) > body {
		if h, err := decodeHeader(hb); err == nil {
			f.Problem = fmt.Sprintf("cut: %d bytes, the header says %d: none of its %d keys and %d tombstones can be verified, none copied", len(data), h.size(), h.count, h.deleted)
			f.Lost = int64(h.count + h.deleted)
		} else {
			f.Problem = fmt.Sprintf("header damaged (%s), %d bytes: its keys are lost (about %d)", strings.TrimPrefix(err.Error(), store.ErrCorrupt.Error()+": "), len(data), body/KeySize)
			f.Lost = int64(body / KeySize)
		}
		return nil, nil
	}
	keys := data[headerSize1 : headerSize1+KeySize*(count+deleted)]
	if crc32.Checksum(keys, castagnoli) != dataCRC {
		f.Problem = fmt.Sprintf("key checksum mismatch: none of its %d keys and %d tombstones can be verified (version 1: one checksum for all), none copied", count, deleted)
		if deleted > 0 {
			f.Problem += "; keys its tombstones deleted from older files may come back"
		}
		f.Lost = int64(count + deleted)
		return nil, nil
	}
	ks := keysOf(keys)
	live, dels := ks[:count:count], ks[count:]
	if !ascending(live) || !ascending(dels) {
		f.Problem = "keys out of order (the checksum matched): none copied"
		f.Lost = int64(count + deleted)
		return nil, nil
	}
	f.Keys = int64(count + deleted)
	h, herr := decodeHeader(hb)
	switch {
	case herr != nil:
		f.Problem = "header damaged (its keys verified by their checksum): nothing lost"
	case uint64(len(data)) != h.size():
		f.Problem = fmt.Sprintf("%d bytes, the header says %d (its keys verified by their checksum): nothing lost", len(data), h.size())
	case h.indexSum(hb, data[h.size()-h.bucketBytes():]) != h.indexCRC:
		f.Problem = "bucket array damaged (its keys verified by their checksum): nothing lost"
	}
	rows = make([]salvagedRow, len(live))
	for i := range live {
		rows[i].k = live[i]
	}
	return rows, dels
}

// readVersion2 reads a version 2 key file page by page: the rows of each
// page its checksum verifies, the tombstones when theirs does, the values
// of the rows from the value file, each block checked. The header must
// decode (it gives the layout); its checksum covers the bucket array too,
// not needed here, so a mismatch alone loses nothing the pages verify.
func readVersion2(disk fsys, name string, data []byte, f *SalvageFile, cache *valuefile.Cache) (rows []salvagedRow, dead []Key, vf *SalvageFile) {
	if len(data) < headerSize {
		f.Problem, f.LostUnknown = fmt.Sprintf("%d bytes, shorter than a header: its keys are lost (how many is not recorded)", len(data)), true
		return nil, nil, nil
	}
	h, err := decodeHeader(data[:headerSize])
	if err != nil {
		f.Problem = fmt.Sprintf("header damaged (%s): its rows cannot be framed, none copied", strings.TrimPrefix(err.Error(), store.ErrCorrupt.Error()+": "))
		f.LostUnknown = true
		return nil, nil, nil
	}
	var problems []string
	size := uint64(len(data))
	if size != h.size() {
		problems = append(problems, fmt.Sprintf("%d bytes, the header says %d", size, h.size()))
	} else if h.indexSum(data[:headerSize], data[size-h.bucketBytes():]) != h.indexCRC {
		problems = append(problems, "header or bucket array checksum mismatch (the pages checked each on their own)")
	}
	// The value file, when the rows refer to one.
	var vals *valuefile.Reader
	if h.values > 0 {
		vname := valueName(name)
		vf = &SalvageFile{Name: filepath.Base(vname), Kind: "value file"}
		vals = openSalvageValues(disk, vname, &h, vf, cache)
		if vals != nil {
			defer cache.Forget(vals)
		}
	}
	// The pages.
	rw := uint64(h.lay.rw)
	badPages, lostRows := 0, uint64(0)
	for p := range h.pages() {
		n := min(h.pageRows(), h.count-p*h.pageRows())
		off := uint64(h.pageOff(p))
		end := off + n*rw + 4
		if end > size {
			lostRows += h.count - p*h.pageRows()
			problems = append(problems, fmt.Sprintf("cut at page %d of %d", p, h.pages()))
			break
		}
		page := data[off : off+n*rw]
		if pageSum(p, page) != binary.LittleEndian.Uint32(data[off+n*rw:]) {
			badPages++
			lostRows += n
			continue
		}
		for i := range n {
			row := page[i*rw : (i+1)*rw]
			r := salvagedRow{k: Key(row[:KeySize]), cols: h.lay.cols(row)}
			if ref := h.lay.ref(row); ref != 0 {
				r.value = salvageValue(vals, ref-1, vf)
			}
			if len(rows) > 0 && bytes.Compare(rows[len(rows)-1].k[:], r.k[:]) >= 0 {
				badPages++ // out of order although verified: not trusted
				lostRows += n
				rows = rows[:len(rows)-int(i)]
				break
			}
			rows = append(rows, r)
		}
	}
	if badPages > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d pages fail their checksum", badPages, h.pages()))
	}
	// The tombstones.
	tombOff := h.hsize() + h.rowsBytes()
	switch tomb := tombOff + KeySize*h.deleted; {
	case h.deleted == 0:
	case tomb > size:
		problems = append(problems, fmt.Sprintf("its %d tombstones cut off: keys they deleted from older files may come back", h.deleted))
		lostRows += h.deleted
	case crc32.Checksum(data[tombOff:tomb], castagnoli) != h.tombCRC || !ascending(keysOf(data[tombOff:tomb])):
		problems = append(problems, fmt.Sprintf("its %d tombstones fail their checksum: keys they deleted from older files may come back", h.deleted))
		lostRows += h.deleted
	default:
		dead = keysOf(data[tombOff:tomb])
	}
	f.Keys = int64(len(rows) + len(dead))
	f.Lost = int64(lostRows)
	f.Problem = joinProblems(problems)
	if f.Lost > 0 && f.Problem != "" {
		f.Problem += fmt.Sprintf(": %d rows and tombstones not copied", f.Lost)
	}
	return rows, dead, vf
}

// openSalvageValues opens the value file vname of a key file of header h,
// or reports why its values are lost (their keys kept).
func openSalvageValues(disk fsys, vname string, h *fileHeader, vf *SalvageFile, cache *valuefile.Cache) *valuefile.Reader {
	fail := func(why string) *valuefile.Reader {
		vf.Problem = why + ": its values are lost, their keys kept"
		vf.Lost = int64(h.values)
		return nil
	}
	b, err := disk.ReadFile(vname)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail("missing")
		}
		return fail("unreadable: " + err.Error())
	}
	vals, err := valuefile.Open(bytes.NewReader(b), int64(len(b)), vname, cache)
	if err != nil {
		return fail(strings.TrimPrefix(err.Error(), store.ErrCorrupt.Error()+": "))
	}
	if vals.Pair() != h.pair {
		return fail(fmt.Sprintf("pairing %d, its key file's %d (another file's values)", vals.Pair(), h.pair))
	}
	return vals
}

// salvageValue reads value ord, or counts it lost in vf (nil: the
// value file did not open, its loss counted whole).
func salvageValue(vals *valuefile.Reader, ord uint32, vf *SalvageFile) []byte {
	if vals == nil {
		return nil
	}
	v, err := vals.Value(ord, nil)
	if err != nil {
		vf.Lost++
		if vf.Problem == "" {
			vf.Problem = strings.TrimPrefix(err.Error(), store.ErrCorrupt.Error()+": ")
		}
		return nil
	}
	vf.Keys++
	return bytes.Clone(v)
}

// logSalvage reads log segments record by record and copies the records
// read whole into the clean table's segments.
type logSalvage struct {
	dir              string
	markSeg, markSeq uint64 // from SYNCED (markSeq 0: none)
	mem              *salvageFS
	clean            string
	seq              uint64 // the last record number read (0: none yet)
	// skipped counts the damaged records skipped since the last one read
	// (each counted lost in its segment), so that the numbers' gap after
	// them is not counted twice.
	skipped uint64
	gaps    int64 // records missing between two read ones, not skipped
	missing []uint64
}

// segment reads the segment n (newest: the newest one, where a tail a
// crash tore is no loss) and returns what it made of it.
func (r *logSalvage) segment(n uint64, newest bool) SalvageFile {
	name := logName(r.dir, n)
	f := SalvageFile{Name: filepath.Base(name), Kind: "log segment"}
	data, err := os.ReadFile(name)
	if err != nil {
		f.Problem, f.LostUnknown = "unreadable: "+err.Error(), true
		return f
	}
	if len(data) < logHeader || string(data[:7]) != logMagic {
		if len(data) < logHeader && (allZero(data) || string(data) == logMagic[:len(data)]) {
			return f // created, its header not (durably) written: no record (see readLog)
		}
		f.Problem, f.LostUnknown = "header damaged: its records are lost", true
		return f
	}
	version := data[7]
	if version == 0 || version > logVersion {
		f.Problem, f.LostUnknown = fmt.Sprintf("log version %d, this program reads 1 to %d: not read", version, logVersion), true
		return f
	}
	out := slices.Clone(data[:logHeader])
	var problems []string
	for off := int64(logHeader); off < int64(len(data)); {
		rest := data[off:]
		n := int64(0)
		if len(rest) >= 8 {
			n = int64(binary.LittleEndian.Uint32(rest))
		}
		framed := n > 0 && n <= maxRecord && n <= int64(len(rest))-8
		if framed && crc32.Checksum(rest[8:8+n], castagnoli) == binary.LittleEndian.Uint32(rest[4:]) {
			if rec, err := decodePayload(rest[8:8+n], version); err == nil {
				r.record(&rec, &f)
				out = append(out, rest[:8+n]...)
				off += 8 + n
				continue
			}
		}
		if allZero(rest) {
			break // the zeros after the last record
		}
		// As readLog: at the end of the newest segment, a record cut
		// short or failing its checksum and followed only by zeros is a
		// write a crash tore (no loss, unless SYNCED says otherwise).
		hard := len(rest) >= 8 && (n == 0 || n > maxRecord)
		end := int64(len(rest))
		if framed {
			end = 8 + n
		}
		if newest && !hard && allZero(rest[end:]) {
			// Lost only if acknowledged: see finish.
			problems = append(problems, fmt.Sprintf("ends in a record cut short at offset %d", off))
			break
		}
		if !framed {
			problems = append(problems, fmt.Sprintf("damaged record at offset %d, the %d bytes from there unread: its records are lost", off, len(rest)))
			f.LostUnknown = true
			break
		}
		problems = append(problems, fmt.Sprintf("a damaged record at offset %d skipped", off))
		f.Lost++
		r.skipped++
		off += end
	}
	f.Problem = joinProblems(problems)
	w, err := r.mem.OpenFile(logName(r.clean, n), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = w.Write(out)
	}
	if err != nil {
		panic(err) // memory
	}
	return f
}

// record counts one record read whole.
func (r *logSalvage) record(rec *record, f *SalvageFile) {
	switch {
	case rec.seq == 0: // version 1: unnumbered
		r.seq++
	default:
		if r.seq != 0 && rec.seq > r.seq+1+r.skipped {
			r.gaps += int64(rec.seq - r.seq - 1 - r.skipped)
		}
		r.seq = rec.seq
	}
	r.skipped = 0
	f.Records++
	f.Keys += int64(len(rec.added) + len(rec.deleted) + len(rec.sets))
}

// finish reports what the log as a whole lost: segments missing, records
// missing between two read ones, and records SYNCED says were
// acknowledged beyond the last one read.
func (r *logSalvage) finish() []SalvageFile {
	var out []SalvageFile
	for _, n := range r.missing {
		out = append(out, SalvageFile{Name: filepath.Base(logName(r.dir, n)), Kind: "log segment",
			Problem: "missing (later segments exist): its records are lost", LostUnknown: true})
	}
	if r.gaps > 0 {
		out = append(out, SalvageFile{Name: "log", Kind: "log records", Lost: r.gaps,
			Problem: fmt.Sprintf("%d records missing between the records read (they are numbered)", r.gaps)})
	}
	if r.markSeq > r.seq {
		f := SalvageFile{Name: filepath.Base(logName(r.dir, r.markSeg)), Kind: "acknowledged records"}
		if lost := int64(r.markSeq - r.seq - r.skipped); r.seq > 0 && lost > 0 {
			f.Lost = lost
			f.Problem = fmt.Sprintf("SYNCED says records up to %d were acknowledged durable, the log read ends at record %d: %d acknowledged records lost", r.markSeq, r.seq, lost)
		} else if r.seq == 0 {
			f.LostUnknown = true
			f.Problem = fmt.Sprintf("SYNCED says records up to %d were acknowledged durable, and no record of the log was read: those not merged into the key files are lost (how many is not known)", r.markSeq)
		}
		if f.Problem != "" {
			out = append(out, f)
		}
	}
	return out
}

// joinProblems joins a file's problems, the first few of many.
func joinProblems(ps []string) string {
	ps = slices.DeleteFunc(ps, func(p string) bool { return p == "" })
	if len(ps) > 3 {
		return fmt.Sprintf("%s; %s; ... (%d in all)", ps[0], ps[1], len(ps))
	}
	return strings.Join(ps, "; ")
}

// salvageFS is an fsys in memory: the clean copy Salvage reads back.
type salvageFS struct {
	mu    sync.Mutex
	files map[string]*salvageFile
}

func newSalvageFS() *salvageFS { return &salvageFS{files: map[string]*salvageFile{}} }

// salvageFile is a file of a salvageFS, open or not (its handles share it).
type salvageFile struct {
	mu   sync.Mutex
	name string
	b    []byte
}

type salvageHandle struct {
	*salvageFile
	off int64
}

func (m *salvageFS) OpenFile(name string, flag int, _ os.FileMode) (file, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[name]
	switch {
	case !ok && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case ok && flag&os.O_EXCL != 0:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case !ok:
		f = &salvageFile{name: name}
		m.files[name] = f
	case flag&os.O_TRUNC != 0:
		f.b = nil
	}
	return &salvageHandle{salvageFile: f}, nil
}

func (m *salvageFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	f, ok := m.files[name]
	m.mu.Unlock()
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.b), nil
}

func (m *salvageFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for name := range m.files {
		if filepath.Dir(name) == dir {
			names = append(names, filepath.Base(name))
		}
	}
	slices.Sort(names)
	return names, nil
}

func (m *salvageFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, name)
	return nil
}

func (m *salvageFS) Rename(from, to string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[from]
	if !ok {
		return &fs.PathError{Op: "rename", Path: from, Err: fs.ErrNotExist}
	}
	delete(m.files, from)
	f.name = to
	m.files[to] = f
	return nil
}

func (m *salvageFS) Truncate(name string, size int64) error {
	m.mu.Lock()
	f, ok := m.files[name]
	m.mu.Unlock()
	if !ok {
		return &fs.PathError{Op: "truncate", Path: name, Err: fs.ErrNotExist}
	}
	return (&salvageHandle{salvageFile: f}).Truncate(size)
}

func (m *salvageFS) MkdirAll(string) error { return nil }
func (m *salvageFS) SyncDir(string) error  { return nil }

func (h *salvageHandle) ReadAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if off >= int64(len(h.b)) {
		return 0, io.EOF
	}
	n := copy(p, h.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (h *salvageHandle) WriteAt(p []byte, off int64) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(h.b)) {
		h.b = append(h.b, make([]byte, end-int64(len(h.b)))...)
	}
	return copy(h.b[off:], p), nil
}

func (h *salvageHandle) Write(p []byte) (int, error) {
	n, err := h.WriteAt(p, h.off)
	h.off += int64(n)
	return n, err
}

func (h *salvageHandle) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += h.off
	case io.SeekEnd:
		size, _ := h.Size()
		off += size
	}
	h.off = off
	return off, nil
}

func (h *salvageHandle) Truncate(size int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if size <= int64(len(h.b)) {
		h.b = h.b[:size]
	} else {
		h.b = append(h.b, make([]byte, size-int64(len(h.b)))...)
	}
	return nil
}

func (h *salvageHandle) Size() (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return int64(len(h.b)), nil
}

func (h *salvageHandle) Close() error { return nil }
func (h *salvageHandle) Sync() error  { return nil }
func (h *salvageHandle) Name() string { return h.name }
