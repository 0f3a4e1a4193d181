package urlfrontier

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/urlhash/urlhash/frontier"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server is the URLFrontier service of a frontier.Frontier: each RPC
// translates its messages and calls the frontier, which holds the
// semantics.
type Server struct {
	UnimplementedURLFrontierServer
	f *frontier.Frontier
}

var _ URLFrontierServer = (*Server)(nil)

// NewServer returns the service of f.
func NewServer(f *frontier.Frontier) *Server { return &Server{f: f} }

// Register registers the service of f on s.
func Register(s grpc.ServiceRegistrar, f *frontier.Frontier) {
	RegisterURLFrontierServer(s, NewServer(f))
}

// maxBatch bounds the stream messages put in one frontier.Put: those
// already received when a put starts join it, so that a busy stream
// shares an fsync between many messages.
const maxBatch = 512

// toStatus turns the frontier's errors into gRPC statuses.
func toStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, frontier.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, frontier.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, frontier.ErrClosed):
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func infoOf(u *frontier.URLInfo) *URLInfo {
	in := &URLInfo{Url: u.URL, Key: u.Key, CrawlID: u.Crawl}
	if len(u.Metadata) > 0 {
		in.Metadata = make(map[string]*StringList, len(u.Metadata))
		for k, vs := range u.Metadata {
			in.Metadata[k] = &StringList{Values: vs}
		}
	}
	return in
}

func fromInfo(in *URLInfo) frontier.URLInfo {
	u := frontier.URLInfo{URL: in.GetUrl(), Key: in.GetKey(), Crawl: in.GetCrawlID()}
	if md := in.GetMetadata(); len(md) > 0 {
		u.Metadata = make(map[string][]string, len(md))
		for k, vs := range md {
			u.Metadata[k] = vs.GetValues()
		}
	}
	return u
}

// ackStatus is the ack of a put's answer: OK for a URL created or
// updated; SKIPPED for a discovered URL already known (as the reference)
// and for an item that is not a URL, has no host to queue it by, or a key
// too long (resending it would not help).
func ackStatus(r frontier.PutResult) AckMessage_Status {
	if r.Status == frontier.PutNew || r.Status == frontier.PutUpdated {
		return AckMessage_OK
	}
	return AckMessage_SKIPPED
}

// received is a message of a client stream, or the end of the stream.
type received[T any] struct {
	msg *T
	err error
}

// batches reads a client stream in a goroutine and calls fn with the
// messages received so far (at least one, at most maxBatch), in order,
// until the stream ends (nil for io.EOF) or fn fails.
func batches[T any](ctx context.Context, recv func() (*T, error), fn func([]*T) error) error {
	ch := make(chan received[T], maxBatch)
	go func() {
		for {
			m, err := recv()
			select {
			case ch <- received[T]{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var batch []*T
	for {
		var r received[T]
		select {
		case r = <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		end := r.err
		if end == nil {
			batch = append(batch[:0], r.msg)
		more:
			for len(batch) < maxBatch {
				select {
				case r = <-ch:
					if r.err != nil {
						end = r.err
						break more
					}
					batch = append(batch, r.msg)
				default:
					break more
				}
			}
		} else {
			batch = batch[:0]
		}
		if len(batch) > 0 {
			if err := fn(batch); err != nil {
				return err
			}
		}
		if end == io.EOF {
			return nil
		}
		if end != nil {
			return end
		}
	}
}

// PutURLs puts each item (discovered or known) and acks each in the order
// received, once durable; a failure of the frontier acks FAIL (resend).
func (s *Server) PutURLs(stream grpc.BidiStreamingServer[URLItem, AckMessage]) error {
	ctx := stream.Context()
	return batches(ctx, stream.Recv, func(msgs []*URLItem) error {
		items := make([]frontier.Item, 0, len(msgs))
		idx := make([]int, len(msgs)) // item of each message, -1 when none
		for i, m := range msgs {
			idx[i] = -1
			switch it := m.GetItem().(type) {
			case *URLItem_Discovered:
				idx[i] = len(items)
				items = append(items, frontier.Item{Info: fromInfo(it.Discovered.GetInfo())})
			case *URLItem_Known:
				var refetch time.Time
				if sec := it.Known.GetRefetchableFromDate(); sec > 0 {
					refetch = time.Unix(int64(min(sec, 1<<40)), 0)
				}
				idx[i] = len(items)
				items = append(items, frontier.Item{Info: fromInfo(it.Known.GetInfo()), Known: true, Refetch: refetch})
			}
		}
		res, err := s.f.Put(ctx, items)
		for i, m := range msgs {
			id := m.GetID()
			st := AckMessage_SKIPPED
			if idx[i] >= 0 {
				if id == "" {
					id = items[idx[i]].Info.URL
				}
				switch {
				case err != nil:
					st = AckMessage_FAIL
				default:
					st = ackStatus(res[idx[i]])
				}
			}
			if serr := stream.Send(&AckMessage{ID: id, Status: st}); serr != nil {
				return serr
			}
		}
		if errors.Is(err, frontier.ErrClosed) || ctx.Err() != nil {
			return toStatus(err)
		}
		return nil
	})
}

// PutDiscovered puts each batch's URLs as discovered and acks each batch
// as a whole, in order, once durable.
func (s *Server) PutDiscovered(stream grpc.BidiStreamingServer[DiscoveredBatch, BatchAck]) error {
	ctx := stream.Context()
	return batches(ctx, stream.Recv, func(msgs []*DiscoveredBatch) error {
		n := 0
		for _, m := range msgs {
			n += len(m.GetItems())
		}
		items := make([]frontier.Item, 0, n)
		for _, m := range msgs {
			for _, in := range m.GetItems() {
				items = append(items, frontier.Item{Info: fromInfo(in)})
			}
		}
		res, err := s.f.Put(ctx, items)
		k := 0
		for _, m := range msgs {
			ack := &BatchAck{ID: m.GetID(), Statuses: make([]AckMessage_Status, len(m.GetItems()))}
			for j := range ack.Statuses {
				if err != nil {
					ack.Statuses[j] = AckMessage_FAIL
				} else {
					ack.Statuses[j] = ackStatus(res[k])
				}
				k++
			}
			if serr := stream.Send(ack); serr != nil {
				return serr
			}
		}
		if errors.Is(err, frontier.ErrClosed) || ctx.Err() != nil {
			return toStatus(err)
		}
		return nil
	})
}

// GetURLs streams the URLs the frontier hands out. Without a crawl ID
// (neither crawlID nor anyCrawlID set) any crawl's, as the reference.
func (s *Server) GetURLs(p *GetParams, stream grpc.ServerStreamingServer[URLInfo]) error {
	gp := frontier.GetParams{MaxPerQueue: int(p.GetMaxUrlsPerQueue()), MaxQueues: int(p.GetMaxQueues()), Key: p.GetKey(),
		Transit: time.Duration(p.GetDelayRequestable()) * time.Second}
	switch it := p.GetItem().(type) {
	case *GetParams_CrawlID:
		gp.Crawl = it.CrawlID
	default:
		gp.AnyCrawl = true
	}
	hs, err := s.f.GetURLs(stream.Context(), gp)
	if err != nil {
		return toStatus(err)
	}
	for i := range hs {
		if err := stream.Send(infoOf(&hs[i].Info)); err != nil {
			return err // the rest stays in transit until it expires
		}
	}
	return nil
}

// ListNodes answers this node.
func (s *Server) ListNodes(context.Context, *Empty) (*StringList, error) {
	return &StringList{Values: s.f.Nodes()}, nil
}

// ListCrawls answers the crawls that have queues.
func (s *Server) ListCrawls(context.Context, *Local) (*StringList, error) {
	return &StringList{Values: s.f.Crawls()}, nil
}

// DeleteCrawl deletes a crawl and answers how many URLs not completed it held.
func (s *Server) DeleteCrawl(ctx context.Context, m *DeleteCrawlMessage) (*Long, error) {
	n, err := s.f.DeleteCrawl(ctx, m.GetValue())
	return &Long{Value: uint64(n.Active)}, toStatus(err)
}

// ListQueues answers a page of a crawl's queues, in key order.
func (s *Server) ListQueues(_ context.Context, p *Pagination) (*QueueList, error) {
	l := s.f.ListQueues(p.GetCrawlID(), int(p.GetStart()), int(p.GetSize()), p.GetIncludeInactive())
	return &QueueList{Values: l.Keys, Start: uint32(l.Start), Size: uint32(len(l.Keys)), CrawlID: l.Crawl}, nil
}

// GetStats answers a queue's or a crawl's counts (zero for an unknown
// queue, as the reference).
func (s *Server) GetStats(_ context.Context, p *QueueWithinCrawlParams) (*Stats, error) {
	st, err := s.f.Stats(p.GetCrawlID(), p.GetKey())
	if err != nil && !errors.Is(err, frontier.ErrNotFound) {
		return nil, toStatus(err)
	}
	return &Stats{Size: uint64(st.Size), InProcess: uint32(st.InTransit), NumberOfQueues: uint64(st.Queues), CrawlID: st.Crawl,
		Counts: map[string]uint64{"completed": uint64(st.Completed), "active_queues": uint64(st.ActiveQueues)}}, nil
}

// DeleteQueue deletes a queue and answers how many URLs not completed it
// held (0 for an unknown queue).
func (s *Server) DeleteQueue(ctx context.Context, p *QueueWithinCrawlParams) (*Long, error) {
	n, err := s.f.DeleteQueue(ctx, p.GetCrawlID(), p.GetKey())
	if errors.Is(err, frontier.ErrNotFound) {
		err = nil
	}
	return &Long{Value: uint64(n.Active)}, toStatus(err)
}

// BlockQueueUntil blocks a queue until a time (0 unblocks); an unknown
// queue is ignored, as the reference does.
func (s *Server) BlockQueueUntil(ctx context.Context, p *BlockQueueParams) (*Empty, error) {
	var t time.Time
	if p.GetTime() > 0 {
		t = time.Unix(int64(min(p.GetTime(), 1<<40)), 0)
	}
	err := s.f.BlockQueueUntil(ctx, p.GetCrawlID(), p.GetKey(), t)
	if errors.Is(err, frontier.ErrNotFound) {
		err = nil
	}
	return &Empty{}, toStatus(err)
}

// SetActive sets whether GetURLs hands out anything.
func (s *Server) SetActive(ctx context.Context, a *Active) (*Empty, error) {
	return &Empty{}, toStatus(s.f.SetActive(ctx, a.GetState()))
}

// GetActive answers whether GetURLs hands out anything.
func (s *Server) GetActive(context.Context, *Local) (*Boolean, error) {
	return &Boolean{State: s.f.IsActive()}, nil
}

// SetDelay sets a queue's delay, or the crawl's default with an empty
// key; an unknown queue is ignored, as the reference does.
func (s *Server) SetDelay(ctx context.Context, p *QueueDelayParams) (*Empty, error) {
	err := s.f.SetDelay(ctx, p.GetCrawlID(), p.GetKey(), time.Duration(p.GetDelayRequestable())*time.Second)
	if errors.Is(err, frontier.ErrNotFound) {
		err = nil
	}
	return &Empty{}, toStatus(err)
}

// SetLogLevel sets the level of the server's log lines (the package is
// only logged: Go has no per-package loggers).
func (s *Server) SetLogLevel(_ context.Context, p *LogLevelParams) (*Empty, error) {
	return &Empty{}, toStatus(s.f.SetLogLevel(p.GetPackage(), p.GetLevel().String()))
}

// SetCrawlLimit sets a queue's limit of completed URLs; NotFound for an
// unknown queue, as the reference.
func (s *Server) SetCrawlLimit(ctx context.Context, p *CrawlLimitParams) (*Empty, error) {
	return &Empty{}, toStatus(s.f.SetCrawlLimit(ctx, p.GetCrawlID(), p.GetKey(), uint64(p.GetLimit())))
}

func itemOf(it *frontier.URLItem) *URLItem {
	var refetch uint64
	if !it.IsCompleted() {
		refetch = uint64(max(1, it.Refetch.Unix()))
	}
	return &URLItem{Item: &URLItem_Known{Known: &KnownURLItem{Info: infoOf(&it.Info), RefetchableFromDate: refetch}},
		CreationDate: uint64(max(0, it.Created.Unix()))}
}

// GetURLStatus answers what the frontier knows of a URL in a crawl (its
// key is not needed: a URL is known per crawl); NotFound when nothing.
func (s *Server) GetURLStatus(ctx context.Context, r *URLStatusRequest) (*URLItem, error) {
	it, err := s.f.URLStatus(ctx, r.GetCrawlID(), r.GetUrl())
	if err != nil {
		return nil, toStatus(err)
	}
	return itemOf(&it), nil
}

// ListURLs streams a page of a crawl's (or a queue's) URLs.
func (s *Server) ListURLs(p *ListUrlParams, stream grpc.ServerStreamingServer[URLItem]) error {
	lp := frontier.ListParams{Crawl: p.GetCrawlID(), Key: p.GetKey(), Start: int(p.GetStart()), Size: int(p.GetSize()),
		Filter: p.GetFilter(), IgnoreCase: p.GetIgnoreCase()}
	return toStatus(s.f.ListURLs(stream.Context(), lp, func(it frontier.URLItem) error { return stream.Send(itemOf(&it)) }))
}

// CountURLs counts a crawl's (or a queue's) URLs that match the filter.
func (s *Server) CountURLs(ctx context.Context, p *CountUrlParams) (*Long, error) {
	n, err := s.f.CountURLs(ctx, frontier.ListParams{Crawl: p.GetCrawlID(), Key: p.GetKey(), Filter: p.GetFilter(), IgnoreCase: p.GetIgnoreCase()})
	return &Long{Value: uint64(n)}, toStatus(err)
}

// PurgeURLs deletes the URLs first stored more than the days given ago.
func (s *Server) PurgeURLs(ctx context.Context, p *PurgeUrlParams) (*Long, error) {
	n, err := s.f.PurgeURLs(ctx, p.GetCrawlID(), p.GetKey(), int(p.GetDays()))
	return &Long{Value: uint64(n)}, toStatus(err)
}
