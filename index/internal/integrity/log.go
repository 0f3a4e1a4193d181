package integrity

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
	"strings"

	"github.com/dgraph-io/ristretto/v2/z"
)

// castagnoli is the CRC-32C table of Badger's log records.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Badger's record flags (value.go in Badger; unexported there).
const (
	// BitDelete marks a deletion.
	BitDelete = 1 << 0
	// BitValuePointer marks a value that points into the value log.
	BitValuePointer = 1 << 1
	// BitTxn marks a record of a transaction.
	BitTxn = 1 << 6
	// BitFinTxn marks the commit record of a transaction.
	BitFinTxn = 1 << 7
	// LogHeaderSize is the header of a log file: a key id and an IV.
	LogHeaderSize = 20
)

// CheckLog returns what is wrong with a memtable log or a value log (""
// when its records end at its end or at zeros, or, when torn is set, at a
// record a crash tore, or when all that cannot be read are records whose
// keys isCache accepts: see OnlyKeys).
func CheckLog(path string, torn bool, isCache func(key []byte) bool) string {
	if info, err := os.Stat(path); err == nil && info.Size() == 0 {
		return ""
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return FirstLine(err.Error())
	}
	defer mf.Close(-1)
	// The hole after the last data extent reads as zeros: no need to.
	data := mf.Data[:dataEnd(mf.Fd, int64(len(mf.Data)))]
	off, end := LogRecords(data, torn, func([]byte, []byte, byte, uint64) bool { return true })
	if end > off && !OnlyKeys(data, off, end, isCache) {
		return fmt.Sprintf("damaged record at offset %d, followed by %d bytes", off, end-off)
	}
	return ""
}

// lastValueLog returns the name of the value log with the highest number
// ("" if none).
func lastValueLog(names []string) string {
	var last string
	var maxID uint64
	for _, n := range names {
		id, err := strconv.ParseUint(strings.TrimSuffix(n, ".vlog"), 10, 32)
		if err == nil && (last == "" || id > maxID) {
			last, maxID = n, id
		}
	}
	return last
}

// LogRecords calls fn for each whole record of a log file (a memtable log
// or a value log) until fn returns false or a record is torn or damaged.
// It returns the offset where reading stopped and the end of the non-zero
// data after it (equal when nothing but zeros, or nothing, follows). When
// torn is set (the file may end in a record a crash tore), a stop at such
// a record, whose bytes end early and only zeros follow, counts as the end.
func LogRecords(data []byte, torn bool, fn func(k, v []byte, meta byte, expiresAt uint64) bool) (off, end int) {
	off = LogHeaderSize
	for off < len(data) {
		n, k, v, meta, expiresAt, ok := LogRecord(data[off:])
		if !ok || !fn(k, v, meta, expiresAt) {
			break
		}
		off += n
	}
	off = min(off, len(data))
	end = len(data)
	for end > off && data[end-1] == 0 {
		end--
	}
	// A torn record is a prefix of one: the copy into the log stopped
	// before its end (its checksum), and zeros follow. A whole record
	// that fails its checksum is damage.
	if torn && end > off && end < off+TornRecordLen(data[off:]) {
		end = off
	}
	return off, end
}

// LogRecord decodes one log record: header (meta, user meta, uvarint key
// length, value length, expiry), key, value, CRC-32C of all of it.
func LogRecord(b []byte) (n int, k, v []byte, meta byte, expiresAt uint64, ok bool) {
	if len(b) < 2 {
		return 0, nil, nil, 0, 0, false
	}
	meta = b[0]
	h := 2
	klen, w := binary.Uvarint(b[h:])
	if w <= 0 {
		return
	}
	h += w
	vlen, w := binary.Uvarint(b[h:])
	if w <= 0 {
		return
	}
	h += w
	expiresAt, w = binary.Uvarint(b[h:])
	if w <= 0 {
		return
	}
	h += w
	if klen == 0 || klen > 1<<16 || vlen > uint64(len(b)) || h+int(klen)+int(vlen)+4 > len(b) {
		return
	}
	n = h + int(klen) + int(vlen)
	if crc32.Checksum(b[:n], castagnoli) != binary.BigEndian.Uint32(b[n:]) {
		return
	}
	return n + 4, b[h : h+int(klen)], b[h+int(klen) : n], meta, expiresAt, true
}

// TornRecordLen is the length of the record at the start of b as its
// header announces it, or a header's length when the header does not
// decode.
func TornRecordLen(b []byte) int {
	h, klen, vlen, ok := RecordHeader(b)
	if !ok {
		return maxRecordHeader
	}
	return h + klen + vlen + 4
}

// maxRecordHeader is the longest header of a log record.
const maxRecordHeader = 22

// RecordHeader decodes the header of the log record at the start of b.
func RecordHeader(b []byte) (hlen, klen, vlen int, ok bool) {
	if len(b) < 2 {
		return 0, 0, 0, false
	}
	h := 2
	var x [3]uint64
	for i := range x {
		v, w := binary.Uvarint(b[h:])
		if w <= 0 {
			return 0, 0, 0, false
		}
		x[i] = v
		h += w
	}
	if x[0] > 1<<16 || x[1] > 1<<31 {
		return 0, 0, 0, false
	}
	return h, int(x[0]), int(x[1]), true
}

// OnlyKeys reports whether the records of data (a log file) from off to
// end all have keys (with Badger's version) that match accepts, as their
// headers say: the index passes the keys of its filter snapshot chunks,
// a cache rebuilt at the next Open, whose damage costs nothing. A nil
// match accepts none.
func OnlyKeys(data []byte, off, end int, match func(key []byte) bool) bool {
	for off < end {
		h, klen, vlen, ok := RecordHeader(data[off:])
		n := h + klen + vlen + 4
		if !ok || off+n > len(data) || match == nil {
			return false
		}
		if !match(data[off+h : off+h+klen]) {
			return false
		}
		off += n
	}
	return true
}
