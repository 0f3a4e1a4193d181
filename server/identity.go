package server

import (
	"fmt"
	"net/http"

	"github.com/urlhash/urlhash/wire"
)

// identified is a backend that keeps an identity (index.DB, pgindex.DB).
type identified interface{ Identity() string }

// identityOf returns the identity of st, or "" (a backend without
// one).
func identityOf(st any) string {
	if id, ok := st.(identified); ok {
		return id.Identity()
	}
	return ""
}

// admitIndexed is admit for a request that may name the index it means
// (wire.HeaderIndex): every answer names the index served, and a request
// meant for another is refused before anything of it is applied.
func (s *Server) admitIndexed(w http.ResponseWriter, rw http.ResponseWriter, r *http.Request, rt route) (release func(), err error) {
	if s.identity != "" {
		w.Header().Set(wire.HeaderIndex, s.identity)
	}
	if want := r.Header.Get(wire.HeaderIndex); want != "" && want != s.identity {
		served := s.identity
		if served == "" {
			served = "one without identity"
		}
		return nil, fmt.Errorf("%w: the request is meant for index %s, this server serves %s", wire.ErrIndexMismatch, want, served)
	}
	return s.admit(rw, r, rt)
}
