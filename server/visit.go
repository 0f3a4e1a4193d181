package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/urlhash/urlhash/store"
)

// visit is POST /v1/visit?after=DURATION: VisitBatch of the body's
// entries with revisitAfter DURATION (Go syntax, "24h"; absent or 0:
// never revisit), answered like /v1/add: one byte per entry, 1 when it is
// new. The server's backend clock decides, never the client's.
func (s *Server) visit(w http.ResponseWriter, r *http.Request) error {
	var after time.Duration
	if a := r.URL.Query().Get("after"); a != "" {
		var err error
		if after, err = time.ParseDuration(a); err != nil {
			return fmt.Errorf("%w: after %q", ErrBadRequest, a)
		}
	}
	return s.writeAnswered(w, r, func(es []store.Entry) ([]bool, error) { return s.st.VisitBatch(es, after) })
}

// deletePrefix is POST /v1/delete-prefix?prefix=HEX[&bits=N]:
// DeletePrefix, answered {"full":N,"prefixes":N}. An empty prefix (no
// prefix, or bits=0) would delete the whole index: it is refused unless
// the request also says all=true, so that a forgotten or mistyped
// parameter never empties an index.
func (s *Server) deletePrefix(w http.ResponseWriter, r *http.Request) error {
	if err := s.writable(); err != nil {
		return err
	}
	prefix, bits, err := prefixArgs(r)
	if err != nil {
		return err
	}
	if bits == 0 && r.URL.Query().Get("all") != "true" {
		return fmt.Errorf("%w: an empty prefix deletes every entry; say so with prefix=&all=true", ErrBadRequest)
	}
	full, prefixes, err := s.st.DeletePrefix(prefix, bits)
	if err != nil {
		return err
	}
	if err := s.commit.sync(); err != nil {
		return err
	}
	return writeJSON(w, map[string]int64{"full": full, "prefixes": prefixes})
}
