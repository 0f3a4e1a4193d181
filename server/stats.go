package server

import (
	"context"

	"github.com/urlhash/urlhash/index"
	"github.com/urlhash/urlhash/store"
	"github.com/urlhash/urlhash/wire"
)

// detailedStats is a backend with figures of its own beyond store.Stats
// (*index.DB: its filter's and Badger's files'), which /v1/stats and the
// metrics report.
type detailedStats interface {
	DetailedStats(ctx context.Context) (index.Stats, error)
}

var _ detailedStats = (*index.DB)(nil)

// statsOf returns st's figures as /v1/stats carries them: a backend's own
// figures zero unless it has them (detailedStats).
func statsOf(ctx context.Context, st store.Backend) (wire.Stats, error) {
	d, ok := st.(detailedStats)
	if !ok {
		s, err := st.Stats(ctx)
		return wire.StatsOf(s), err
	}
	s, err := d.DetailedStats(ctx)
	if err != nil {
		return wire.Stats{}, err
	}
	ws := wire.StatsOf(s.Stats)
	ws.FilterBits, ws.FilterBytes, ws.FilterMemBytes = s.FilterBits, s.FilterBytes, s.FilterMemBytes
	ws.FilterAbsent, ws.FilterFound, ws.FilterFalsePositives = s.FilterAbsent, s.FilterFound, s.FilterFalsePositives
	ws.LSMBytes, ws.VlogBytes, ws.Tables = s.LSMBytes, s.VlogBytes, s.Tables
	return ws, nil
}
