package query

import (
	"context"
	"time"

	"github.com/urlhash/urlhash/hashkey"
	"github.com/urlhash/urlhash/store"
)

// Visit records a sighting of rawURL and reports whether it is new:
// absent (or expired), stored without seen times, or last reported new
// revisitAfter or longer ago by the backend's clock (revisitAfter <= 0:
// never again). Among concurrent callers, in this process or through a
// shared backend, exactly one sees true per revisit. See
// store.Backend.VisitBatch.
func (ix *Index) Visit(ctx context.Context, rawURL string, revisitAfter time.Duration) (bool, error) {
	h, err := ix.profile.Hash(rawURL)
	if err != nil {
		return false, err
	}
	isNew, err := ix.st.VisitBatch(ctx, []store.Entry{ix.entry(h, rawURL)}, revisitAfter)
	if err != nil {
		return false, err
	}
	return isNew[0], nil
}

// VisitBatch is Visit for every URL of urls, atomically per URL; OK is
// whether the URL is new. A URL repeated within the batch is new at most
// once.
func (ix *Index) VisitBatch(ctx context.Context, urls []string, revisitAfter time.Duration) ([]Result, error) {
	rs := ix.HashBatch(urls)
	entries, pos := ix.entries(urls, rs)
	isNew, err := ix.st.VisitBatch(ctx, entries, revisitAfter)
	if err != nil {
		return nil, err
	}
	for i, p := range pos {
		rs[p].OK = isNew[i]
	}
	return rs, nil
}

// DeletePrefix removes every stored identity that starts with the hex prefix
// (1..64 digits, an odd count ending in a half byte) and returns how many
// full and prefix entries it removed.
func (ix *Index) DeletePrefix(ctx context.Context, hexPrefix string) (full, prefixes int64, err error) {
	p, bits, err := hashkey.ParsePrefix(hexPrefix)
	if err != nil {
		return 0, 0, err
	}
	return ix.st.DeletePrefix(ctx, p, bits)
}
