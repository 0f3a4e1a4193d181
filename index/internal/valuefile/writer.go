package valuefile

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"
)

// DefaultBlockSize is the decoded size a block is cut at: the unit a
// single read decodes. URLs of the Debian corpus (38 bytes on average),
// with a 16 KiB dictionary, compress to 0.38 of their bytes in 4 KiB
// blocks, 0.36 in 8 KiB and 0.35 in 16 KiB; decoding costs 473 ns a value
// in 4 KiB blocks (51 µs a block), 314 in 8 KiB (68 µs), 378 in 16 KiB
// (163 µs), on a loaded machine: 8 KiB serves sorted batches best, for a
// third more than 4 KiB a single read.
//
// Blocks are compressed at zstd's fastest level: with a dictionary, each
// block starts from the dictionary's tables, which the default level's
// are four times as large to copy (4 KiB blocks of the corpus, a loaded
// machine: 217 µs a block and 0.379 of the bytes at the fastest level,
// 971 µs and 0.382 at the default).
const DefaultBlockSize = 8 << 10

// Dictionary training: a writer without a dictionary buffers up to
// trainBytes of its first values and trains a dictionary of at most
// dictSize bytes on them, when they are at least minTrainBytes in
// minTrainValues values (else it writes without one). On the corpus a
// dictionary took 0.5 s to train on 580 KB of URLs (a loaded machine), and
// cut 4 KiB blocks from 0.42 of their bytes to 0.38.
const (
	trainBytes     = 256 << 10
	minTrainBytes  = 16 << 10
	minTrainValues = 64
	dictSize       = 16 << 10
)

// Options configures a Writer. The zero value trains a dictionary.
type Options struct {
	// Dict is the zstd dictionary to compress with (Reader.Dict of another
	// file, to share what it learnt). Default nil: train one on the first
	// values, unless NoTrain.
	Dict []byte
	// NoTrain writes without a dictionary when Dict is nil. Default false.
	NoTrain bool
	// BlockSize is the decoded size a block is cut at. Default
	// DefaultBlockSize.
	BlockSize int
	// Pair is recorded in the header, for the file that refers to this
	// one to check (Reader.Pair). Default 0.
	Pair uint64
	// Stored writes the blocks Add fills as they are, uncompressed (Dict
	// and NoTrain then do not apply): a single read of a value costs a
	// pread and a checksum instead of a decode (BenchmarkReadOne, 4 KiB
	// blocks of corpus URLs: 4-5 µs against 22-25 µs), for values read
	// one at a time from random places, at about twice the bytes.
	// Default false.
	Stored bool
}

// storedBlock is the dictionary field of a stored block's index entry:
// its frame is the decoded block itself.
const storedBlock = ^uint32(0)

// A Writer writes a value file. It is not safe for concurrent use.
type Writer struct {
	w       io.WriterAt
	o       Options
	dicts   [][]byte // the file's dictionaries; a block names one by number + 1
	dictNum map[[sha256.Size]byte]uint32
	own     uint32 // the dictionary of the blocks Add writes (0: none)
	enc     *zstd.Encoder
	buf     []byte // values of the block being filled, or buffered to train
	lens    []uint32
	// Blocks are compressed in the background while Add fills the next,
	// up to maxInflight at once, and written in order (on two cores zstd
	// was a fifth of import --store-url's CPU, in line with the merge that
	// feeds the writer, and one block at a time left it behind): jobs are
	// those in flight, oldest first, whose goroutines alone use off,
	// index and blocks until the last is waited for; spare holds the
	// buffers of jobs done (a job itself is not reused: the one after it
	// reads it).
	jobs   []*blockJob
	spare  [][2][]byte // raw, frame
	off    int64       // where the next block goes
	index  []byte
	values uint64
	bytes  int64 // the values' bytes
	blocks uint32
	added  bool // Add was called: CopyBlocks no longer can
	stored bool // a stored block was written: the file is version 2
	// training: values buffered before a dictionary is chosen
	training bool
	trained  uint32
	err      error
}

// NewWriter returns a writer of a value file to w, written from offset 0.
func NewWriter(w io.WriterAt, o Options) *Writer {
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	vw := &Writer{w: w, o: o, off: HeaderSize, dictNum: map[[sha256.Size]byte]uint32{}}
	switch {
	case o.Stored:
		vw.own = storedBlock
	case o.Dict == nil && !o.NoTrain:
		vw.training = true
	default:
		vw.start(o.Dict)
	}
	return vw
}

// dictionary returns the number + 1 of dictionary d in the file (0 for
// none), adding it.
func (w *Writer) dictionary(d []byte) (uint32, error) {
	if d == nil {
		return 0, nil
	}
	k := sha256.Sum256(d)
	if n, ok := w.dictNum[k]; ok {
		return n, nil
	}
	if len(w.dicts) == maxDicts {
		return 0, fmt.Errorf("valuefile: more than %d dictionaries in one file", maxDicts)
	}
	w.dicts = append(w.dicts, d)
	w.dictNum[k] = uint32(len(w.dicts))
	return uint32(len(w.dicts)), nil
}

// start sets the dictionary of the blocks Add writes (nil: none) and the
// encoder.
func (w *Writer) start(d []byte) {
	w.training = false
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(maxInflight),
		zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true)}
	var enc *zstd.Encoder
	var err error
	if d != nil {
		if enc, err = zstd.NewWriter(nil, append(opts, zstd.WithEncoderDict(d))...); err != nil {
			// A dictionary zstd does not take (damaged, or from a newer
			// format): without one.
			d = nil
		}
	}
	if d == nil {
		enc, err = zstd.NewWriter(nil, opts...)
	}
	if err == nil {
		w.own, err = w.dictionary(d)
	}
	if err != nil {
		w.err = fmt.Errorf("valuefile: %w", err)
		return
	}
	w.enc = enc
}

// CopyBlocks copies every block of r as it is (compressed, with its
// dictionary: nothing is decoded), checking each against its checksum,
// and returns the ordinal its first value has here: r's value i is this
// file's base+i. It must come before the first Add.
func (w *Writer) CopyBlocks(r *Reader) (base uint32, err error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.added {
		return 0, errors.New("valuefile: CopyBlocks after Add")
	}
	if w.values+r.hdr.values > MaxValues {
		return 0, fmt.Errorf("valuefile: more than %d values in one file", uint64(MaxValues))
	}
	base = uint32(w.values)
	nums := make([]uint32, len(r.dicts)+1)
	for i, d := range r.dicts {
		if nums[i+1], err = w.dictionary(d); err != nil {
			return 0, err
		}
	}
	var fb []byte
	for i := range r.blocks {
		b := &r.blocks[i]
		if fb, err = r.frame(i, fb); err != nil {
			return 0, err
		}
		n := len(fb) - 4
		binary.LittleEndian.PutUint32(fb[n:], blockCRC(w.blocks, fb[:n]))
		if _, err := w.w.WriteAt(fb, w.off); err != nil {
			w.err = fmt.Errorf("valuefile: %w", err)
			return 0, w.err
		}
		dict := storedBlock
		if b.dict != storedBlock {
			dict = nums[b.dict]
		}
		w.appendIndex(uint32(n), b.rawLen, b.count, dict)
		w.values += uint64(b.count)
	}
	w.bytes += r.raw()
	return base, nil
}

// appendIndex records a block of n frame bytes just written at w.off, and
// moves past it.
func (w *Writer) appendIndex(n, rawLen, count, dict uint32) {
	w.index = binary.LittleEndian.AppendUint64(w.index, uint64(w.off))
	w.index = binary.LittleEndian.AppendUint32(w.index, n)
	w.index = binary.LittleEndian.AppendUint32(w.index, rawLen)
	w.index = binary.LittleEndian.AppendUint32(w.index, count)
	w.index = binary.LittleEndian.AppendUint32(w.index, dict)
	w.stored = w.stored || dict == storedBlock
	w.off += int64(n) + 4
	w.blocks++
}

// Add appends v and returns its ordinal. v may be reused when Add returns.
func (w *Writer) Add(v []byte) (uint32, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.values >= MaxValues {
		return 0, fmt.Errorf("valuefile: more than %d values in one file", uint64(MaxValues))
	}
	if len(v) > maxBlock-16 {
		return 0, fmt.Errorf("valuefile: a value of %d bytes exceeds the %d-byte limit", len(v), maxBlock-16)
	}
	w.added = true
	ord := uint32(w.values)
	w.values++
	w.bytes += int64(len(v))
	w.buf = append(w.buf, v...)
	w.lens = append(w.lens, uint32(len(v)))
	if w.training {
		if len(w.buf) >= trainBytes {
			w.train()
		}
		return ord, w.err
	}
	if len(w.buf) >= w.o.BlockSize {
		w.flush(len(w.lens))
	}
	return ord, w.err
}

// train trains a dictionary on the buffered values (or chooses none when
// they are too few or training fails), then writes them in blocks.
func (w *Writer) train() {
	var d []byte
	if len(w.buf) >= minTrainBytes && len(w.lens) >= minTrainValues {
		samples := make([][]byte, len(w.lens))
		off := 0
		for i, n := range w.lens {
			samples[i] = w.buf[off : off+int(n)]
			off += int(n)
		}
		d = buildDict(samples)
		if d != nil {
			w.trained = uint32(len(samples))
		}
	}
	w.start(d)
	// The buffered values, a block at a time.
	buf, lens := w.buf, w.lens
	w.buf, w.lens = nil, nil
	off := 0
	for _, n := range lens {
		w.buf = append(w.buf, buf[off:off+int(n)]...)
		w.lens = append(w.lens, n)
		off += int(n)
		if len(w.buf) >= w.o.BlockSize {
			w.flush(len(w.lens))
		}
	}
}

// buildDict trains a dictionary on samples, or returns nil when the
// builder cannot (it may fail on small or uniform input; a panic of it is
// taken as such a failure: the file is then written without one).
func buildDict(samples [][]byte) (d []byte) {
	defer func() {
		if recover() != nil {
			d = nil
		}
	}()
	// A dictionary number derived from the samples (zstd reserves numbers
	// below 32,768); decoders are chosen by the dictionary's bytes, not
	// its number.
	id := crc32.Checksum(nil, castagnoli)
	for _, s := range samples {
		id = crc32.Update(id, castagnoli, s)
	}
	d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: dictSize, HashBytes: 6,
		ZstdDictID: 1<<15 + id%(1<<30), ZstdLevel: zstd.SpeedFastest})
	if err != nil || len(d) > maxDict {
		return nil
	}
	return d
}

// maxInflight is how many blocks a writer compresses at once.
const maxInflight = 2

// A blockJob is a block compressed and written in the background.
type blockJob struct {
	raw, frame []byte
	written    chan struct{} // closed once written, or failed (err)
	err        error
}

// flush writes the first n buffered values as a block: it hands the
// block to a goroutine that compresses it and writes it once the block
// before is written.
func (w *Writer) flush(n int) {
	if len(w.jobs) == maxInflight {
		w.waitOldest()
	}
	if w.err != nil || n == 0 {
		return
	}
	j := &blockJob{written: make(chan struct{})}
	if k := len(w.spare); k > 0 {
		j.raw, j.frame = w.spare[k-1][0], w.spare[k-1][1]
		w.spare = w.spare[:k-1]
	}
	raw := binary.AppendUvarint(j.raw[:0], uint64(n))
	size := 0
	for _, l := range w.lens[:n] {
		raw = binary.AppendUvarint(raw, uint64(l))
		size += int(l)
	}
	j.raw = append(raw, w.buf[:size]...)
	var prev *blockJob
	if k := len(w.jobs); k > 0 {
		prev = w.jobs[k-1]
	}
	w.jobs = append(w.jobs, j)
	go func() {
		defer close(j.written)
		if w.o.Stored {
			j.frame = append(j.frame[:0], j.raw...)
		} else {
			j.frame = w.enc.EncodeAll(j.raw, j.frame[:0])
		}
		if prev != nil {
			if <-prev.written; prev.err != nil {
				j.err = prev.err // nothing after a block that failed
				return
			}
		}
		j.err = w.writeFrame(j, uint32(n))
	}()
	w.buf = append(w.buf[:0], w.buf[size:]...)
	w.lens = append(w.lens[:0], w.lens[n:]...)
}

// writeFrame writes j's compressed block of n values at w.off.
func (w *Writer) writeFrame(j *blockJob, n uint32) error {
	fn := len(j.frame)
	j.frame = binary.LittleEndian.AppendUint32(j.frame, blockCRC(w.blocks, j.frame))
	if _, err := w.w.WriteAt(j.frame, w.off); err != nil {
		return fmt.Errorf("valuefile: %w", err)
	}
	w.appendIndex(uint32(fn), uint32(len(j.raw)), n, w.own)
	return nil
}

// waitOldest waits for the oldest block in flight to be written.
func (w *Writer) waitOldest() {
	j := w.jobs[0]
	<-j.written
	if j.err != nil && w.err == nil {
		w.err = j.err
	}
	w.jobs = append(w.jobs[:0], w.jobs[1:]...)
	w.spare = append(w.spare, [2][]byte{j.raw, j.frame})
}

// wait waits for every block in flight to be written.
func (w *Writer) wait() {
	for len(w.jobs) > 0 {
		w.waitOldest()
	}
}

// Abort waits for the block being written, if any, for a caller that
// drops the writer without Close (before it closes or removes the file).
// The writer must not be used after.
func (w *Writer) Abort() {
	w.wait()
	if w.err == nil {
		w.err = errors.New("valuefile: writer aborted")
	}
}

// Info describes a value file written.
type Info struct {
	Values, Blocks uint64
	// Bytes is the file's size, Raw the values' bytes (of blocks copied,
	// their decoded bytes).
	Bytes, Raw int64
	// Dict is the dictionary of the blocks Add wrote (nil: none), Trained
	// the values it was trained on in this file (0: given, or none).
	Dict    []byte
	Trained int
}

// Close writes the last block, the index, the dictionaries and the header
// (it does not sync: the caller syncs the file before anything refers to
// it).
func (w *Writer) Close() (Info, error) {
	if w.training {
		w.train()
	}
	w.flush(len(w.lens))
	if w.wait(); w.err != nil {
		return Info{}, w.err
	}
	if w.enc != nil {
		w.enc.Close()
	}
	tail := w.index
	for _, d := range w.dicts {
		tail = binary.LittleEndian.AppendUint32(tail, uint32(len(d)))
		tail = append(tail, d...)
	}
	tail = binary.LittleEndian.AppendUint32(tail, crc32.Checksum(tail, castagnoli))
	h := header{version: versionCompressed, values: w.values, blocks: uint64(w.blocks), dicts: uint32(len(w.dicts)), index: uint64(w.off), pair: w.o.Pair}
	if w.stored {
		h.version = versionStored
	}
	hb := h.appendTo(make([]byte, 0, HeaderSize))
	if err := errors.Join(writeAll(w.w, tail, w.off), writeAll(w.w, hb, 0)); err != nil {
		return Info{}, fmt.Errorf("valuefile: %w", err)
	}
	info := Info{Values: w.values, Blocks: uint64(w.blocks), Bytes: w.off + int64(len(tail)), Raw: w.bytes, Trained: int(w.trained)}
	if w.own != 0 && w.own != storedBlock {
		info.Dict = w.dicts[w.own-1]
	}
	return info, nil
}

func writeAll(w io.WriterAt, p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	_, err := w.WriteAt(p, off)
	return err
}
