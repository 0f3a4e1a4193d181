package threatlist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/internal/atomicfile"
	"github.com/urlhash/urlhash/store"
)

// Lists is the lists synced into one index: their saved state, and the
// index whose entries they are. It is not safe for concurrent use.
type Lists struct {
	db  store.Backend
	dir string
	st  state
}

// Open reads the state of the lists synced into db, an index in a
// directory (db.Path()). An update an earlier process left half applied
// is finished first.
func Open(ctx context.Context, db store.Backend) (*Lists, error) {
	dir := db.Path()
	if fi, err := os.Stat(dir); dir == "" || err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("threatlist: index %q is not a directory: lists are kept only in an index directory", dir)
	}
	ls := &Lists{db: db, dir: dir}
	st, err := readState(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, err
	}
	ls.st = st
	if Pending(dir) {
		next, err := readState(filepath.Join(dir, NextStateFile))
		if err != nil {
			return nil, err
		}
		if err := ls.commit(ctx, next, nil); err != nil {
			return nil, fmt.Errorf("threatlist: finishing the interrupted update: %w", err)
		}
	}
	return ls, nil
}

// ReadState returns the lists synced into the index directory dir, by
// name, without opening the index. It refuses (ErrState) a directory whose
// last update was interrupted.
func ReadState(dir string) (map[string]*ListState, error) {
	if Pending(dir) {
		return nil, fmt.Errorf("%w: %s: an update was interrupted; run urlhash sync to finish it", ErrState, dir)
	}
	return readState(filepath.Join(dir, StateFile))
}

// Names returns the names of the lists, sorted.
func (ls *Lists) Names() []string { return ls.st.names() }

// State returns the named list's state, or nil. It belongs to ls.
func (ls *Lists) State(name string) *ListState { return ls.st[name] }

// Version returns the version token held of the named list (empty: none,
// ask for a reset).
func (ls *Lists) Version(name string) []byte {
	if s := ls.st[name]; s != nil {
		return s.Version
	}
	return nil
}

// Apply applies updates (by list name) to the lists and the index, all or
// none. Each update is checked: the removals must index the current list,
// and the list it leads to must have the update's checksum. When one fails
// (an error wrapping ErrMalformed or ErrChecksum), nothing of the updates
// is applied, the index is as before, and the failed lists' versions are
// forgotten so that the next sync asks for a reset. A ctx done before Apply
// begins stops it; once begun, it runs to its end.
func (ls *Lists) Apply(ctx context.Context, updates map[string]*Update) error {
	if err := ctx.Err(); err != nil {
		return err // not begun; once begun, it finishes (see commit)
	}
	next := state{}
	for n, s := range ls.st {
		next[n] = s
	}
	var failed []string
	var errs []error
	changes := map[string]Change{}
	for name, u := range updates {
		cur := ls.st[name]
		if cur == nil {
			cur = &ListState{Name: name, List: &List{}}
		}
		s, ch, err := cur.apply(u)
		if err != nil {
			failed = append(failed, name)
			errs = append(errs, fmt.Errorf("list %s: %w", name, err))
			continue
		}
		next[name] = s
		changes[name] = ch
	}
	if len(failed) > 0 {
		forget := state{}
		for n, s := range ls.st {
			forget[n] = s
		}
		for _, n := range failed {
			if s := ls.st[n]; s != nil && len(s.Version) > 0 {
				c := *s
				c.Version = nil
				forget[n] = &c
			}
		}
		if err := writeFile(filepath.Join(ls.dir, StateFile), forget.marshal()); err != nil {
			errs = append(errs, err)
		} else {
			ls.st = forget
		}
		return errors.Join(errs...)
	}
	if err := writeFile(filepath.Join(ls.dir, NextStateFile), next.marshal()); err != nil {
		return err
	}
	return ls.commit(ctx, next, changes)
}

// apply returns the state after the update and the change to the list
// held, or an error when the update does not apply or its checksum does not
// match.
func (s *ListState) apply(u *Update) (*ListState, Change, error) {
	base := s.List
	if u.Reset {
		base = &List{}
	}
	if !u.Reset && len(u.Removals) == 0 && u.Additions.Len() == 0 && u.Checksum == nil {
		// v5: no checksum means the list did not change.
		c := *s
		c.Version = u.Version
		return &c, Change{}, nil
	}
	l, ch, err := base.Apply(u.Removals, u.Additions)
	if err != nil {
		return nil, Change{}, err
	}
	if u.Checksum == nil {
		return nil, Change{}, fmt.Errorf("%w: an update with no checksum", ErrMalformed)
	}
	if sum := l.Checksum(); !bytes.Equal(sum[:], u.Checksum) {
		return nil, Change{}, fmt.Errorf("%w: the updated list of %d entries has SHA-256 %x, the server sent %x", ErrChecksum, l.Len(), sum, u.Checksum)
	}
	if u.Reset {
		// The change from the list held, not from the empty one.
		ch = s.List.change(l)
	}
	return s.next(u.Version, l, ch), ch, nil
}

// loadAbove is the number of additions from which commit bulk-loads them
// (store.Backend.Load) rather than writing them in batches.
const loadAbove = 100_000

// batchDeleter is an index that deletes many entries at once
// (index.DB.DeleteBatch); other backends delete one at a time.
type batchDeleter interface {
	DeleteBatch(ctx context.Context, entries []store.Entry) (int, error)
}

// commit makes the index hold the lists of next, then makes next the saved
// state. It is idempotent, so that an interrupted commit can run again.
// changes holds the change of each list that changed, when known (else it
// is computed from the saved state).
func (ls *Lists) commit(ctx context.Context, next state, changes map[string]Change) error {
	// Once begun, a commit runs to its end rather than leave its half for
	// the next Open: ctx gives its values, not its cancellation.
	ctx = context.WithoutCancel(ctx)
	var del []store.Entry
	var added []*List
	nAdd := 0
	held := func(e []byte) bool {
		for _, s := range next {
			if s.List.Has(e) {
				return true
			}
		}
		return false
	}
	for name, s := range next {
		old := &List{}
		if o := ls.st[name]; o != nil {
			old = o.List
		}
		if old == s.List {
			continue
		}
		ch, ok := changes[name]
		if !ok {
			ch = old.change(s.List)
		}
		for e := range ch.Removed.All() {
			if !held(e) {
				del = append(del, entry(e))
			}
		}
		added = append(added, ch.Added)
		nAdd += ch.Added.Len()
	}
	additions := func(yield func(store.Entry) bool) {
		for _, l := range added {
			for e := range l.All() {
				if !yield(entry(e)) {
					return
				}
			}
		}
	}
	if bd, ok := ls.db.(batchDeleter); ok {
		if _, err := bd.DeleteBatch(ctx, del); err != nil {
			return err
		}
	} else {
		for _, e := range del {
			if err := ls.db.Delete(ctx, e); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	if nAdd >= loadAbove {
		// A bulk load writes sorted tables rather than a memtable entry
		// per key (add if absent: a key already stored stays as it is).
		if _, err := ls.db.Load(ctx, additions); err != nil {
			return err
		}
	} else {
		batch := make([]store.Entry, 0, min(nAdd, 1<<16))
		for e := range additions {
			batch = append(batch, e)
			if len(batch) == cap(batch) {
				if err := ls.db.PutBatch(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := ls.db.PutBatch(ctx, batch); err != nil {
			return err
		}
	}
	if err := ls.db.Sync(ctx); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(ls.dir, NextStateFile), filepath.Join(ls.dir, StateFile)); err != nil {
		return fmt.Errorf("threatlist: %w", err)
	}
	if err := atomicfile.SyncDir(ls.dir); err != nil {
		return fmt.Errorf("threatlist: %w", err)
	}
	ls.st = next
	return nil
}

// entry returns the index entry of a list entry: a prefix entry, or a full
// entry for a 32-byte hash.
func entry(e []byte) store.Entry {
	var h hashkey.Hash
	copy(h[:], e)
	return store.Entry{Hash: h, Len: len(e)}
}

// WebRiskName is the name under which a Web Risk threat type's list is
// kept ("webrisk/MALWARE").
func WebRiskName(threatType string) string { return "webrisk/" + threatType }

// SafeBrowsingName is the name under which a Safe Browsing v5 hash list
// is kept ("v5/se").
func SafeBrowsingName(list string) string { return "v5/" + list }

// SyncWebRisk asks c for the update of the req.ThreatType list from the
// version held (req.Version is filled in), applies it, and returns it.
func (ls *Lists) SyncWebRisk(ctx context.Context, c *Client, req DiffRequest) (*Update, error) {
	name := WebRiskName(req.ThreatType)
	req.Version = ls.Version(name)
	u, err := c.ComputeDiff(ctx, req)
	if err != nil {
		return nil, ls.forgetIfMalformed(err, name)
	}
	if err := ls.Apply(ctx, map[string]*Update{name: u}); err != nil {
		return nil, err
	}
	return u, nil
}

// SyncSafeBrowsing asks c for the updates of the v5 hash lists req.Names
// from the versions held (req.Versions is filled in), applies them, and
// returns them by list name.
func (ls *Lists) SyncSafeBrowsing(ctx context.Context, c *Client, req BatchGetRequest, now time.Time) (map[string]*Update, error) {
	req.Versions = map[string][]byte{}
	var names []string
	for _, n := range req.Names {
		req.Versions[n] = ls.Version(SafeBrowsingName(n))
		names = append(names, SafeBrowsingName(n))
	}
	us, err := c.BatchGet(ctx, req, now)
	if err != nil {
		return nil, ls.forgetIfMalformed(err, names...)
	}
	byName := map[string]*Update{}
	for n, u := range us {
		byName[SafeBrowsingName(n)] = u
	}
	if err := ls.Apply(ctx, byName); err != nil {
		return nil, err
	}
	return us, nil
}

// forgetIfMalformed forgets the versions of the lists when err says the
// answer was malformed, so that the next sync asks for a reset.
func (ls *Lists) forgetIfMalformed(err error, names ...string) error {
	if !errors.Is(err, ErrMalformed) {
		return err
	}
	forget := state{}
	changed := false
	for n, s := range ls.st {
		forget[n] = s
		if slices.Contains(names, n) && len(s.Version) > 0 {
			c := *s
			c.Version = nil
			forget[n] = &c
			changed = true
		}
	}
	if !changed {
		return err
	}
	if werr := writeFile(filepath.Join(ls.dir, StateFile), forget.marshal()); werr != nil {
		return errors.Join(err, werr)
	}
	ls.st = forget
	return err
}
