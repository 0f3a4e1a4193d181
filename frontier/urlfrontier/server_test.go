package urlfrontier_test

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/urlhash/urlhash/frontier"
	"github.com/urlhash/urlhash/frontier/urlfrontier"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

// serve serves a new frontier over an in-memory listener and returns a
// generated client of it.
func serve(t *testing.T) (urlfrontier.URLFrontierClient, *frontier.Frontier) {
	t.Helper()
	f, err := frontier.Open(filepath.Join(t.TempDir(), "frontier"), &frontier.Options{Node: "node-1:7071"})
	if err != nil {
		t.Fatal(err)
	}
	ln := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	urlfrontier.Register(gs, f)
	go gs.Serve(ln)
	conn, err := grpc.NewClient("passthrough:///bufnet", grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return ln.DialContext(ctx)
	}), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		gs.Stop()
		f.Close()
	})
	return urlfrontier.NewURLFrontierClient(conn), f
}

func discovered(crawl, key string, urls ...string) []*urlfrontier.URLItem {
	var out []*urlfrontier.URLItem
	for _, u := range urls {
		out = append(out, &urlfrontier.URLItem{Item: &urlfrontier.URLItem_Discovered{Discovered: &urlfrontier.DiscoveredURLItem{
			Info: &urlfrontier.URLInfo{Url: u, Key: key, CrawlID: crawl}}}})
	}
	return out
}

func known(crawl, u string, refetch uint64, md map[string]*urlfrontier.StringList) *urlfrontier.URLItem {
	return &urlfrontier.URLItem{Item: &urlfrontier.URLItem_Known{Known: &urlfrontier.KnownURLItem{
		Info: &urlfrontier.URLInfo{Url: u, CrawlID: crawl, Metadata: md}, RefetchableFromDate: refetch}}}
}

// put sends items on one PutURLs stream and returns the acks, in order.
func put(t *testing.T, c urlfrontier.URLFrontierClient, items ...*urlfrontier.URLItem) []string {
	t.Helper()
	s, err := c.PutURLs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if err := s.Send(it); err != nil {
			t.Fatal(err)
		}
	}
	s.CloseSend()
	var acks []string
	for {
		a, err := s.Recv()
		if err == io.EOF {
			return acks
		}
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, a.GetStatus().String()+" "+a.GetID())
	}
}

func get(t *testing.T, c urlfrontier.URLFrontierClient, p *urlfrontier.GetParams) []string {
	t.Helper()
	s, err := c.GetURLs(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		in, err := s.Recv()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, in.GetUrl()+" "+in.GetKey()+" "+in.GetCrawlID())
	}
}

func crawlID(id string) *urlfrontier.GetParams_CrawlID {
	return &urlfrontier.GetParams_CrawlID{CrawlID: id}
}

func check[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func checkList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestService drives every RPC of urlfrontier.proto through the generated
// client over a real (in-memory) connection.
func TestService(t *testing.T) {
	c, _ := serve(t)
	ctx := context.Background()

	// PutURLs: acks in order, per item; a spelling of a known URL and a
	// string that is not a URL are SKIPPED; the ID defaults to the URL.
	items := discovered("", "", "https://a.example/1", "HTTPS://A.EXAMPLE:443/1", "not a url", "https://a.example/2", "https://b.example/1")
	items[3].ID = "my-id"
	checkList(t, "PutURLs acks", put(t, c, items...), []string{
		"OK https://a.example/1", "SKIPPED HTTPS://A.EXAMPLE:443/1", "SKIPPED not a url", "OK my-id", "OK https://b.example/1"})

	// PutDiscovered: one ack a batch, statuses in order.
	pd, err := c.PutDiscovered(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, urls := range [][]string{{"https://c.example/1", "https://a.example/1", "mailto:x@example.com"}, {"https://c.example/2"}} {
		b := &urlfrontier.DiscoveredBatch{ID: []string{"page-1", "page-2"}[i], Items: []*urlfrontier.URLInfo{}}
		for _, u := range urls {
			b.Items = append(b.Items, &urlfrontier.URLInfo{Url: u, CrawlID: "crawl2"})
		}
		if err := pd.Send(b); err != nil {
			t.Fatal(err)
		}
	}
	pd.CloseSend()
	var batchAcks []string
	for {
		a, err := pd.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		s := a.GetID()
		for _, st := range a.GetStatuses() {
			s += " " + st.String()
		}
		batchAcks = append(batchAcks, s)
	}
	checkList(t, "PutDiscovered acks", batchAcks, []string{"page-1 OK OK SKIPPED", "page-2 OK"})

	// ListCrawls, ListQueues, GetStats.
	crawls, err := c.ListCrawls(ctx, &urlfrontier.Local{})
	if err != nil {
		t.Fatal(err)
	}
	checkList(t, "ListCrawls", crawls.GetValues(), []string{"DEFAULT", "crawl2"})
	ql, err := c.ListQueues(ctx, &urlfrontier.Pagination{CrawlID: "crawl2"})
	if err != nil {
		t.Fatal(err)
	}
	checkList(t, "ListQueues", ql.GetValues(), []string{"a.example", "c.example"})
	check(t, "ListQueues crawlID", ql.GetCrawlID(), "crawl2")
	ql, _ = c.ListQueues(ctx, &urlfrontier.Pagination{CrawlID: "crawl2", Start: 1, Size: 5})
	checkList(t, "ListQueues start 1", ql.GetValues(), []string{"c.example"})
	st, err := c.GetStats(ctx, &urlfrontier.QueueWithinCrawlParams{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "GetStats size", st.GetSize(), uint64(3))
	check(t, "GetStats queues", st.GetNumberOfQueues(), uint64(2))
	check(t, "GetStats crawlID", st.GetCrawlID(), "DEFAULT")

	// SetDelay (default and per queue), GetURLs with a crawl ID, limits
	// per queue and on queues, delay_requestable.
	if _, err := c.SetDelay(ctx, &urlfrontier.QueueDelayParams{DelayRequestable: 0}); err != nil {
		t.Fatal(err)
	}
	checkList(t, "GetURLs 1 per queue", get(t, c, &urlfrontier.GetParams{MaxUrlsPerQueue: 1, Item: crawlID(""), DelayRequestable: 1}),
		[]string{"https://a.example/1 a.example DEFAULT", "https://b.example/1 b.example DEFAULT"})
	checkList(t, "GetURLs while in transit", get(t, c, &urlfrontier.GetParams{MaxUrlsPerQueue: 1, Item: crawlID("")}), nil)
	checkList(t, "GetURLs of one queue", get(t, c, &urlfrontier.GetParams{Key: "a.example", Item: crawlID("")}),
		[]string{"https://a.example/2 a.example DEFAULT"})
	time.Sleep(1100 * time.Millisecond) // delay_requestable 1 s
	// The queues in turn from the last call's: a.example, whose first
	// URL's transit has ended (its second's goes on).
	checkList(t, "GetURLs after transit", get(t, c, &urlfrontier.GetParams{MaxQueues: 1, Item: crawlID("")}), []string{"https://a.example/1 a.example DEFAULT"})
	checkList(t, "GetURLs any crawl", get(t, c, &urlfrontier.GetParams{MaxUrlsPerQueue: 1, Item: &urlfrontier.GetParams_AnyCrawlID{AnyCrawlID: &urlfrontier.AnyCrawlID{}}}),
		// a.example of DEFAULT has URLs in transit (30 s), its cap of 1.
		[]string{"https://b.example/1 b.example DEFAULT", "https://c.example/1 c.example crawl2", "https://a.example/1 a.example crawl2"})

	// Known items: completed (no date) or due again; metadata kept.
	md := map[string]*urlfrontier.StringList{"status": {Values: []string{"200"}}}
	checkList(t, "PutURLs known", put(t, c, known("", "https://a.example/1", 0, md), known("", "https://b.example/1", uint64(time.Now().Add(time.Hour).Unix()), nil)),
		[]string{"OK https://a.example/1", "OK https://b.example/1"})
	it, err := c.GetURLStatus(ctx, &urlfrontier.URLStatusRequest{Url: "https://A.example/1"})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "GetURLStatus refetchable", it.GetKnown().GetRefetchableFromDate(), uint64(0))
	check(t, "GetURLStatus url", it.GetKnown().GetInfo().GetUrl(), "https://a.example/1")
	check(t, "GetURLStatus metadata", it.GetKnown().GetInfo().GetMetadata()["status"].GetValues()[0], "200")
	if it.GetCreationDate() == 0 {
		t.Error("GetURLStatus: no creation date")
	}
	_, err = c.GetURLStatus(ctx, &urlfrontier.URLStatusRequest{Url: "https://nowhere.example/"})
	check(t, "GetURLStatus of an unknown URL", status.Code(err), codes.NotFound)

	// ListURLs (filter, ignoreCase, paging), CountURLs.
	ls, err := c.ListURLs(ctx, &urlfrontier.ListUrlParams{Key: "a.example"})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for {
		it, err := ls.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, it.GetKnown().GetInfo().GetUrl())
	}
	checkList(t, "ListURLs", listed, []string{"https://a.example/2", "https://a.example/1"})
	filter, yes := "A.EXAMPLE", true
	n, err := c.CountURLs(ctx, &urlfrontier.CountUrlParams{Filter: &filter, IgnoreCase: &yes})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "CountURLs ignoreCase", n.GetValue(), uint64(2))
	n, _ = c.CountURLs(ctx, &urlfrontier.CountUrlParams{Filter: &filter})
	check(t, "CountURLs case sensitive", n.GetValue(), uint64(0))

	// SetCrawlLimit: a queue with its limit of completed URLs hands out
	// nothing; an unknown queue is NotFound.
	put(t, c, discovered("", "", "https://a.example/3")...)
	if _, err := c.SetCrawlLimit(ctx, &urlfrontier.CrawlLimitParams{Key: "a.example", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	checkList(t, "GetURLs past the limit", get(t, c, &urlfrontier.GetParams{Key: "a.example", Item: crawlID("")}), nil)
	_, err = c.SetCrawlLimit(ctx, &urlfrontier.CrawlLimitParams{Key: "nowhere", Limit: 1})
	check(t, "SetCrawlLimit unknown queue", status.Code(err), codes.NotFound)
	c.SetCrawlLimit(ctx, &urlfrontier.CrawlLimitParams{Key: "a.example", Limit: 0})

	// BlockQueueUntil: blocked until the time; 0 unblocks.
	if _, err := c.BlockQueueUntil(ctx, &urlfrontier.BlockQueueParams{Key: "a.example", Time: uint64(time.Now().Add(time.Hour).Unix())}); err != nil {
		t.Fatal(err)
	}
	checkList(t, "GetURLs blocked", get(t, c, &urlfrontier.GetParams{Key: "a.example", Item: crawlID("")}), nil)
	ql, _ = c.ListQueues(ctx, &urlfrontier.Pagination{})
	// b.example is active: its URL is not completed, though not due.
	checkList(t, "ListQueues without the blocked", ql.GetValues(), []string{"b.example"})
	ql, _ = c.ListQueues(ctx, &urlfrontier.Pagination{IncludeInactive: true})
	checkList(t, "ListQueues include_inactive", ql.GetValues(), []string{"a.example", "b.example"})
	c.BlockQueueUntil(ctx, &urlfrontier.BlockQueueParams{Key: "a.example", Time: 0})
	checkList(t, "GetURLs unblocked", get(t, c, &urlfrontier.GetParams{Key: "a.example", Item: crawlID("")}), []string{"https://a.example/3 a.example DEFAULT"})

	// SetActive, GetActive.
	if _, err := c.SetActive(ctx, &urlfrontier.Active{State: false}); err != nil {
		t.Fatal(err)
	}
	b, _ := c.GetActive(ctx, &urlfrontier.Local{})
	check(t, "GetActive", b.GetState(), false)
	put(t, c, discovered("", "", "https://d.example/1")...)
	checkList(t, "GetURLs inactive", get(t, c, &urlfrontier.GetParams{Item: crawlID("")}), nil)
	c.SetActive(ctx, &urlfrontier.Active{State: true})
	checkList(t, "GetURLs active", get(t, c, &urlfrontier.GetParams{Item: crawlID("")}), []string{"https://d.example/1 d.example DEFAULT"})

	// SetLogLevel, ListNodes.
	if _, err := c.SetLogLevel(ctx, &urlfrontier.LogLevelParams{Package: "crawlercommons", Level: urlfrontier.LogLevelParams_DEBUG}); err != nil {
		t.Fatal(err)
	}
	nodes, err := c.ListNodes(ctx, &urlfrontier.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	checkList(t, "ListNodes", nodes.GetValues(), []string{"node-1:7071"})

	// PurgeURLs (nothing older than a day), DeleteQueue, DeleteCrawl.
	n, err = c.PurgeURLs(ctx, &urlfrontier.PurgeUrlParams{Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "PurgeURLs", n.GetValue(), uint64(0))
	n, err = c.DeleteQueue(ctx, &urlfrontier.QueueWithinCrawlParams{Key: "c.example", CrawlID: "crawl2"})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "DeleteQueue", n.GetValue(), uint64(2))
	n, err = c.DeleteCrawl(ctx, &urlfrontier.DeleteCrawlMessage{Value: "crawl2"})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "DeleteCrawl", n.GetValue(), uint64(1))
	crawls, _ = c.ListCrawls(ctx, &urlfrontier.Local{})
	checkList(t, "ListCrawls after DeleteCrawl", crawls.GetValues(), []string{"DEFAULT"})
	n, _ = c.PurgeURLs(ctx, &urlfrontier.PurgeUrlParams{Days: 0})
	check(t, "PurgeURLs of every URL", n.GetValue(), uint64(5))
}

// TestStreamContext: a put stream whose client goes away ends the
// handler, and the server goes on serving others.
func TestStreamContext(t *testing.T) {
	c, _ := serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.PutURLs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Send(discovered("", "", "https://a.example/1")[0])
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	checkList(t, "a put after a cancelled stream", put(t, c, discovered("", "", "https://a.example/2")...), []string{"OK https://a.example/2"})
}
