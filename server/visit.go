package server

import (
	"fmt"
	"net/http"

	"github.com/urlhash/urlhash/wire"
)

// visit is POST /v1/visit?revisit_after=DURATION: VisitBatch of the
// body's entries with revisitAfter DURATION (Go syntax, "24h"; absent or
// 0: never revisit; after, its alias, is read too), answered like
// /v1/add: one byte per entry, 1 when it is new. The server's backend
// clock decides, never the client's.
func (s *Server) visit(w http.ResponseWriter, r *http.Request) error {
	after, err := revisitArg(r)
	if err != nil {
		return err
	}
	return s.write(w, r, withWrite, func(r *http.Request, body []byte, g *recording) (answer, error) {
		if kw, ok := s.st.(keyWriter); ok {
			if a, ok, err := s.writeKeys(r.Context(), kw, body, g, after, true); ok {
				return a, err
			}
		}
		es, err := wire.DecodeEntries(body)
		if err != nil {
			return answer{}, err
		}
		return s.addEntries(r.Context(), es, g, boolsAnswer, after, true)
	})
}

// deletePrefix is POST /v1/delete-prefix?prefix=HEX[&bits=N]:
// DeletePrefix, answered {"full":N,"prefixes":N}. An empty prefix (no
// prefix, or bits=0) would delete the whole index: it is refused unless
// the request also says all=true, so that a forgotten or mistyped
// parameter never empties an index.
func (s *Server) deletePrefix(w http.ResponseWriter, r *http.Request) error {
	prefix, bits, err := prefixArgs(r)
	if err != nil {
		return err
	}
	if bits == 0 && r.URL.Query().Get(wire.ParamAll) != "true" {
		return fmt.Errorf("%w: an empty prefix deletes every entry; say so with prefix=&all=true", wire.ErrBadRequest)
	}
	return s.write(w, r, afterWrite, func(*http.Request, []byte, *recording) (answer, error) {
		full, prefixes, err := s.st.DeletePrefix(r.Context(), prefix, bits)
		return jsonAnswer(map[string]int64{"full": full, "prefixes": prefixes}), err
	})
}
