package server

import (
	"context"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// statsOf returns st's figures as /v1/stats carries them: an index
// directory's (*index.DB) with its filter's and Badger's files', another
// backend's with those zero.
func statsOf(ctx context.Context, st store.Backend) (wire.Stats, error) {
	db, ok := st.(*index.DB)
	if !ok {
		s, err := st.Stats(ctx)
		return wire.StatsOf(s), err
	}
	s, err := db.DetailedStats(ctx)
	if err != nil {
		return wire.Stats{}, err
	}
	ws := wire.StatsOf(s.Stats)
	ws.FilterBits, ws.FilterBytes, ws.FilterMemBytes = s.FilterBits, s.FilterBytes, s.FilterMemBytes
	ws.FilterAbsent, ws.FilterFound, ws.FilterFalsePositives = s.FilterAbsent, s.FilterFound, s.FilterFalsePositives
	ws.LSMBytes, ws.VlogBytes, ws.Tables = s.LSMBytes, s.VlogBytes, s.Tables
	return ws, nil
}
