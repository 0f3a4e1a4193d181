package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/urlhash/urlhash/wire"
)

// probedMethods are the methods noEndpoint tries a path with to list the
// ones it is served with (the endpoints use GET and POST; GET serves
// HEAD too).
var probedMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// noEndpoint answers a request no endpoint matches, as every error is
// answered ({"error","kind"}), where net/http's mux would answer in
// plain text: 405 method_not_allowed with an Allow header when the path is
// served with other methods, else 404 no_endpoint. It is the handler of
// the pattern "/", which the mux picks only when no endpoint's pattern
// matches the method and the path.
func (s *Server) noEndpoint(w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, m := range probedMethods {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host}
		if _, pattern := s.mux.Handler(probe); pattern != "/" {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	if len(allow) == 0 {
		return fmt.Errorf("%w: %s %s", wire.ErrNoEndpoint, r.Method, r.URL.Path)
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	return fmt.Errorf("%w: %s %s (allowed: %s)", wire.ErrMethodNotAllowed, r.Method, r.URL.Path, strings.Join(allow, ", "))
}
