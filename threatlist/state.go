package threatlist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/urlhash/urlhash/internal/atomicfile"
)

// Files of the saved state in an index directory.
const (
	// StateFile holds the lists synced into the index.
	StateFile = "urlhash.threatlists"
	// NextStateFile holds the state an update is being applied towards;
	// it exists only while (or because) an update was interrupted.
	NextStateFile = StateFile + ".next"
)

// KeepVersions is how many previous versions of a list the state keeps, so
// that a server can send a DIFF to a client holding one of them.
const KeepVersions = 8

// stateMagic starts a state file; its last byte is the format version.
const stateMagic = "urlhash-threatlists\x01"

// Version is a previous version of a list: its token and what the next
// version changed.
type Version struct {
	Token  []byte
	Change Change
}

// ListState is one list synced into an index.
type ListState struct {
	// Name names the list: "webrisk/MALWARE", "v5/se".
	Name string
	// Version is the token of the version held; empty after a failed
	// update, so that the next sync asks for a reset.
	Version []byte
	// List is the entries.
	List *List
	// History holds up to KeepVersions previous versions, newest first.
	History []Version
}

// At returns the list as it was at version token, when kept.
func (s *ListState) At(token []byte) (*List, bool) {
	if len(token) == 0 {
		return nil, false
	}
	if bytes.Equal(token, s.Version) {
		return s.List, true
	}
	l := s.List
	for _, v := range s.History {
		l = l.revert(v.Change)
		if bytes.Equal(v.Token, token) {
			return l, true
		}
	}
	return nil, false
}

// Next returns the state of the list's next version: l, at version, with
// the version s holds kept as the newest previous one (KeepVersions at
// most), so that a server can send a DIFF to a client holding it.
func (s *ListState) Next(version []byte, l *List) *ListState {
	return s.next(version, l, s.List.change(l))
}

// next is Next given ch, the change from s.List to l.
func (s *ListState) next(version []byte, l *List, ch Change) *ListState {
	out := &ListState{Name: s.Name, Version: version, List: l}
	if len(s.Version) > 0 {
		out.History = append([]Version{{Token: s.Version, Change: ch}}, s.History...)
		if len(out.History) > KeepVersions {
			out.History = out.History[:KeepVersions]
		}
	}
	return out
}

// revert undoes a change: it removes what the change added and adds back
// what it removed.
func (l *List) revert(ch Change) *List {
	var removals []int32
	if ch.Added != nil && ch.Added.Len() > 0 {
		i := int32(0)
		l.walk(func(_, _ int, e []byte) bool {
			if ch.Added.Has(e) {
				removals = append(removals, i)
			}
			i++
			return true
		})
	}
	out, _, err := l.Apply(removals, ch.Removed)
	if err != nil {
		// The indices come from l itself.
		panic("threatlist: revert: " + err.Error())
	}
	return out
}

// state is every list synced into one index, by name.
type state map[string]*ListState

func (s state) names() []string {
	var ns []string
	for n := range s {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

func (s state) marshal() []byte {
	b := []byte(stateMagic)
	b = binary.AppendUvarint(b, uint64(len(s)))
	for _, n := range s.names() {
		ls := s[n]
		b = appendBytes(b, []byte(ls.Name))
		b = appendBytes(b, ls.Version)
		b = appendList(b, ls.List)
		b = binary.AppendUvarint(b, uint64(len(ls.History)))
		for _, v := range ls.History {
			b = appendBytes(b, v.Token)
			b = appendList(b, v.Change.Removed)
			b = appendList(b, v.Change.Added)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

func appendBytes(b, p []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(p))), p...)
}

func appendList(b []byte, l *List) []byte {
	if l == nil {
		l = &List{}
	}
	sizes := l.Sizes()
	b = binary.AppendUvarint(b, uint64(len(sizes)))
	for _, size := range sizes {
		b = append(b, byte(size))
		b = appendBytes(b, l.bySize[size])
	}
	return b
}

// stateReader reads a state file's fields; the first error sticks.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", ErrState, what, len(r.b))
	}
}

func (r *stateReader) uvarint(max uint64) uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > max {
		r.fail("bad count")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) bytes() []byte {
	n := r.uvarint(uint64(len(r.b)))
	if r.err != nil {
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *stateReader) list() *List {
	l := &List{}
	n := r.uvarint(MaxEntryLen)
	for range n {
		if len(r.b) == 0 {
			r.fail("truncated")
			return l
		}
		size := int(r.b[0])
		r.b = r.b[1:]
		raw := r.bytes()
		if r.err != nil {
			return l
		}
		if size < MinEntryLen || size > MaxEntryLen || len(raw)%size != 0 || l.bySize[size] != nil {
			r.fail(fmt.Sprintf("bad %d-byte entries", size))
			return l
		}
		for i := size; i < len(raw); i += size {
			if bytes.Compare(raw[i-size:i], raw[i:i+size]) >= 0 {
				r.fail("entries out of order")
				return l
			}
		}
		l.bySize[size] = raw
		l.n += len(raw) / size
	}
	return l
}

func unmarshalState(b []byte) (state, error) {
	if len(b) < len(stateMagic)+4 || !bytes.HasPrefix(b, []byte(stateMagic[:len(stateMagic)-1])) {
		return nil, fmt.Errorf("%w: not a state file", ErrState)
	}
	if b[len(stateMagic)-1] != stateMagic[len(stateMagic)-1] {
		return nil, fmt.Errorf("%w: format %d, this program reads %d", ErrState, b[len(stateMagic)-1], stateMagic[len(stateMagic)-1])
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrState)
	}
	r := &stateReader{b: body[len(stateMagic):]}
	s := state{}
	n := r.uvarint(1 << 20)
	for range n {
		ls := &ListState{Name: string(r.bytes())}
		ls.Version = r.bytes()
		ls.List = r.list()
		h := r.uvarint(KeepVersions)
		for range h {
			v := Version{Token: r.bytes()}
			v.Change.Removed = r.list()
			v.Change.Added = r.list()
			ls.History = append(ls.History, v)
		}
		if r.err != nil {
			return nil, r.err
		}
		s[ls.Name] = ls
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	return s, r.err
}

// readState reads a state file; a missing one is an empty state.
func readState(path string) (state, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("threatlist: %w", err)
	}
	s, err := unmarshalState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// writeFile replaces the file path with b durably (atomicfile).
func writeFile(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("threatlist: %w", err)
	}
	return nil
}

// Pending reports whether an update of the lists in the index directory
// dir was interrupted (a crash after its commit point): the index may hold
// a mix of two versions until the next Sync finishes it, so readers should
// refuse it.
func Pending(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, NextStateFile))
	return err == nil
}
