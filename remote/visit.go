package remote

import (
	"fmt"
	"net/url"
	"time"

	"github.com/urlhash/urlhash/store"
)

// VisitBatch implements store.Backend: the server's clock decides which
// entries are due; durable on return.
func (db *DB) VisitBatch(es []store.Entry, revisitAfter time.Duration) ([]bool, error) {
	b, err := entryBody(es)
	if err != nil {
		return nil, err
	}
	var out []byte
	path := "/v1/visit?after=" + url.QueryEscape(revisitAfter.String())
	if err := db.call(nil, "POST", path, b, &out); err != nil {
		return nil, err
	}
	if len(out) != len(es) {
		return nil, fmt.Errorf("remote: %d answers for %d entries", len(out), len(es))
	}
	visited := make([]bool, len(es))
	for i, v := range out {
		visited[i] = v == 1
	}
	return visited, nil
}

// DeletePrefix implements store.Backend; durable on return.
func (db *DB) DeletePrefix(prefix []byte, bits int) (full, prefixes int64, err error) {
	if bits < 0 || bits > 256 || len(prefix)*8 < bits {
		return 0, 0, fmt.Errorf("%w: %d bits of a %d-byte prefix", store.ErrPrefixLength, bits, len(prefix))
	}
	var c struct{ Full, Prefixes int64 }
	err = db.call(nil, "POST", fmt.Sprintf("/v1/delete-prefix?prefix=%x&bits=%d", prefix, bits), nil, &c)
	return c.Full, c.Prefixes, err
}
