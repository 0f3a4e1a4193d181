package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urlhash/urlhash/frontier/urlfrontier"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// frontierActions are what "urlhash frontier" does, its first argument.
var frontierActions = []string{"put", "get", "status", "list", "count", "queues", "crawls", "stats", "delete",
	"purge", "delay", "block", "limit", "active", "nodes", "log-level"}

func frontierCommand() *command {
	return &command{
		name: "frontier",
		usageLine: `frontier put [--known [--refetch UNIX]] [--key K] [URL...]
frontier get [--max-queues N] [--max-urls-per-queue N] [--key K] [--delay-requestable S]
frontier status URL | list [--key K] [--filter F] | count [--key K] [--filter F]
frontier queues [--include-inactive] | crawls | stats [--key K] | nodes
frontier delete --key K | delete --whole-crawl | purge --days N
frontier delay --seconds S [--key K] | block --until UNIX --key K | limit --limit N --key K
frontier active [true|false] | log-level LEVEL`,
		short: "talk to a crawl frontier's gRPC service (urlhash serve --frontier), for debugging",
		long: `Calls the URL Frontier gRPC service at --addr (crawler-commons'
urlfrontier.proto, which "urlhash serve --frontier ADDR" serves), as the
reference service's client does, and prints the answer, one item a line:

  put        puts the URLs (arguments, or standard input one a line) as
             discovered (--known: as known, completed unless --refetch);
             prints each ack: OK, SKIPPED (already known, or not a URL) or
             FAIL, a tab, the URL
  get        hands out due URLs (they are in transit until updated or
             until --delay-requestable passes): URL, tab, queue
  status     what the frontier knows of a URL: URL, queue, state
             (queued, in_transit, completed), due time, creation time
  list       a crawl's (or queue's) URLs, as status prints them
  count      counts them
  queues     the crawl's active queues (all with --include-inactive)
  crawls     the crawls
  stats      the crawl's (or queue's) counts
  delete     deletes a queue (--key) or the whole crawl (--whole-crawl)
             with its URLs; prints how many URLs not completed went
  purge      deletes the URLs first stored more than --days days ago
  delay      sets a queue's politeness delay, or the crawl's default
  block      blocks a queue until a time (unix seconds; 0 unblocks)
  limit      stops a queue once --limit of its URLs are completed
  active     prints whether the frontier hands out URLs, or sets it
  nodes      the frontier's nodes
  log-level  sets the server's log level (TRACE, DEBUG, INFO, WARN, ERROR)

The crawl is --crawl (default: the default crawl, DEFAULT). A server with
a token reads it from URLHASH_TOKEN.
`,
		example: `$ urlhash serve --db crawl.idx --frontier 127.0.0.1:7071 &
$ urlhash frontier put https://example.com/ https://example.com/about
OK	https://example.com/
OK	https://example.com/about
$ urlhash frontier get --max-urls-per-queue 1
https://example.com/	example.com
`,
		argValues: func() []string { return frontierActions },
		setFlags: func(fs *flagSet) runFunc {
			o := new(frontierOptions)
			fs.StringVar(&o.addr, "addr", "127.0.0.1:7071", "the service's `HOST:PORT` (default 127.0.0.1:7071, the reference service's port)")
			fs.StringVar(&o.crawl, "crawl", "", "the crawl `ID` (default: the default crawl)")
			fs.BoolVar(&o.anyCrawl, "any-crawl", false, "get: from any crawl")
			fs.StringVar(&o.key, "key", "", "the queue `KEY` (put: default the URL's host)")
			fs.BoolVar(&o.known, "known", false, "put: the URLs are known (updates): completed, or due again at --refetch")
			fs.Int64Var(&o.refetch, "refetch", 0, "put --known: due again at `UNIX` seconds (default 0: completed, never again)")
			fs.IntVar(&o.maxQueues, "max-queues", 0, "get: from at most `N` queues (default 0: no limit)")
			fs.IntVar(&o.maxPerQueue, "max-urls-per-queue", 0, "get: at most `N` URLs a queue (default 0: no limit)")
			fs.IntVar(&o.delayRequestable, "delay-requestable", 0, "get: the URLs are due again after `SECONDS` unless updated (default 0: the service's, 30 s)")
			fs.StringVar(&o.filter, "filter", "", "list, count: only URLs that contain `TEXT`")
			fs.BoolVar(&o.ignoreCase, "ignore-case", false, "list, count: --filter in any case")
			fs.IntVar(&o.start, "start", 0, "list, queues: skip the first `N`")
			fs.IntVar(&o.size, "size", 0, "list, queues: at most `N` (default 0: the service's, 100)")
			fs.BoolVar(&o.inactive, "include-inactive", false, "queues: also the inactive ones (empty or blocked)")
			fs.BoolVar(&o.wholeCrawl, "whole-crawl", false, "delete: the whole crawl")
			fs.IntVar(&o.days, "days", -1, "purge: URLs first stored more than `N` days ago (required)")
			fs.IntVar(&o.seconds, "seconds", -1, "delay: the delay in `SECONDS` (required)")
			fs.Int64Var(&o.until, "until", -1, "block: until `UNIX` seconds, 0 to unblock (required)")
			fs.Int64Var(&o.limit, "limit", -1, "limit: `N` completed URLs, 0 for none (required)")
			fs.StringVar(&o.pkg, "package", "", "log-level: the `PACKAGE` (logged only)")
			fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up after `DURATION` (default 30s)")
			return o.run
		},
	}
}

type frontierOptions struct {
	addr, crawl, key, filter, pkg            string
	anyCrawl, known, ignoreCase, inactive    bool
	wholeCrawl                               bool
	refetch, until, limit                    int64
	maxQueues, maxPerQueue, delayRequestable int
	start, size, days, seconds               int
	timeout                                  time.Duration
}

func (o *frontierOptions) run(e *env, args []string) error {
	if len(args) == 0 {
		return usagef("want an action: %s", strings.Join(frontierActions, ", "))
	}
	action, args := args[0], args[1:]
	conn, err := grpc.NewClient(o.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	c := urlfrontier.NewURLFrontierClient(conn)
	ctx, cancel := context.WithTimeout(e.ctx, o.timeout)
	defer cancel()
	if tok := os.Getenv("URLHASH_TOKEN"); tok != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	}
	w := bufio.NewWriter(e.stdout)
	if err := o.do(ctx, e, c, w, action, args); err != nil {
		return err
	}
	return w.Flush()
}

func (o *frontierOptions) do(ctx context.Context, e *env, c urlfrontier.URLFrontierClient, w *bufio.Writer, action string, args []string) error {
	noArgs := func() error {
		if len(args) > 0 {
			return usagef("frontier %s takes no argument (%q)", action, args[0])
		}
		return nil
	}
	required := func(name string, v int64) error {
		if v < 0 {
			return usagef("frontier %s needs --%s", action, name)
		}
		return noArgs()
	}
	switch action {
	case "put":
		return o.put(ctx, e, c, w, args)
	case "get":
		if err := noArgs(); err != nil {
			return err
		}
		p := &urlfrontier.GetParams{MaxQueues: uint32(o.maxQueues), MaxUrlsPerQueue: uint32(o.maxPerQueue), Key: o.key, DelayRequestable: uint32(o.delayRequestable)}
		if o.anyCrawl {
			p.Item = &urlfrontier.GetParams_AnyCrawlID{AnyCrawlID: &urlfrontier.AnyCrawlID{}}
		} else {
			p.Item = &urlfrontier.GetParams_CrawlID{CrawlID: o.crawl}
		}
		stream, err := c.GetURLs(ctx, p)
		if err != nil {
			return err
		}
		for {
			in, err := stream.Recv()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\t%s\n", in.GetUrl(), in.GetKey())
		}
	case "status":
		if len(args) != 1 {
			return usagef("frontier status takes one URL")
		}
		it, err := c.GetURLStatus(ctx, &urlfrontier.URLStatusRequest{Url: args[0], Key: o.key, CrawlID: o.crawl})
		if err != nil {
			return err
		}
		printItem(w, it)
		return nil
	case "list":
		if err := noArgs(); err != nil {
			return err
		}
		p := &urlfrontier.ListUrlParams{Start: uint32(o.start), Size: uint32(o.size), Key: o.key, CrawlID: o.crawl, Filter: &o.filter, IgnoreCase: &o.ignoreCase}
		stream, err := c.ListURLs(ctx, p)
		if err != nil {
			return err
		}
		for {
			it, err := stream.Recv()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			printItem(w, it)
		}
	case "count":
		if err := noArgs(); err != nil {
			return err
		}
		n, err := c.CountURLs(ctx, &urlfrontier.CountUrlParams{Key: o.key, CrawlID: o.crawl, Filter: &o.filter, IgnoreCase: &o.ignoreCase})
		if err != nil {
			return err
		}
		fmt.Fprintln(w, n.GetValue())
		return nil
	case "queues":
		if err := noArgs(); err != nil {
			return err
		}
		l, err := c.ListQueues(ctx, &urlfrontier.Pagination{Start: uint32(o.start), Size: uint32(o.size), IncludeInactive: o.inactive, CrawlID: o.crawl})
		if err != nil {
			return err
		}
		for _, q := range l.GetValues() {
			fmt.Fprintln(w, q)
		}
		return nil
	case "crawls", "nodes":
		if err := noArgs(); err != nil {
			return err
		}
		var l *urlfrontier.StringList
		var err error
		if action == "crawls" {
			l, err = c.ListCrawls(ctx, &urlfrontier.Local{})
		} else {
			l, err = c.ListNodes(ctx, &urlfrontier.Empty{})
		}
		if err != nil {
			return err
		}
		for _, v := range l.GetValues() {
			fmt.Fprintln(w, v)
		}
		return nil
	case "stats":
		if err := noArgs(); err != nil {
			return err
		}
		s, err := c.GetStats(ctx, &urlfrontier.QueueWithinCrawlParams{Key: o.key, CrawlID: o.crawl})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "crawl: %s\nqueues: %d\nactive queues: %d\nsize: %d\nin transit: %d\ncompleted: %d\n",
			s.GetCrawlID(), s.GetNumberOfQueues(), s.GetCounts()["active_queues"], s.GetSize(), s.GetInProcess(), s.GetCounts()["completed"])
		return nil
	case "delete":
		if err := noArgs(); err != nil {
			return err
		}
		var n *urlfrontier.Long
		var err error
		switch {
		case o.key != "" && !o.wholeCrawl:
			n, err = c.DeleteQueue(ctx, &urlfrontier.QueueWithinCrawlParams{Key: o.key, CrawlID: o.crawl})
		case o.key == "" && o.wholeCrawl:
			n, err = c.DeleteCrawl(ctx, &urlfrontier.DeleteCrawlMessage{Value: o.crawl})
		default:
			return usagef("frontier delete needs --key K (a queue) or --whole-crawl (the crawl), not both")
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(w, n.GetValue())
		return nil
	case "purge":
		if err := required("days", int64(o.days)); err != nil {
			return err
		}
		n, err := c.PurgeURLs(ctx, &urlfrontier.PurgeUrlParams{Key: o.key, CrawlID: o.crawl, Days: uint32(o.days)})
		if err != nil {
			return err
		}
		fmt.Fprintln(w, n.GetValue())
		return nil
	case "delay":
		if err := required("seconds", int64(o.seconds)); err != nil {
			return err
		}
		_, err := c.SetDelay(ctx, &urlfrontier.QueueDelayParams{Key: o.key, DelayRequestable: uint32(o.seconds), CrawlID: o.crawl})
		return err
	case "block":
		if err := required("until", o.until); err != nil {
			return err
		}
		_, err := c.BlockQueueUntil(ctx, &urlfrontier.BlockQueueParams{Key: o.key, Time: uint64(o.until), CrawlID: o.crawl})
		return err
	case "limit":
		if err := required("limit", o.limit); err != nil {
			return err
		}
		_, err := c.SetCrawlLimit(ctx, &urlfrontier.CrawlLimitParams{Key: o.key, Limit: uint32(o.limit), CrawlID: o.crawl})
		return err
	case "active":
		switch len(args) {
		case 0:
			b, err := c.GetActive(ctx, &urlfrontier.Local{})
			if err != nil {
				return err
			}
			fmt.Fprintln(w, b.GetState())
			return nil
		case 1:
			v, err := strconv.ParseBool(args[0])
			if err != nil {
				return usagef("frontier active %q: want true or false", args[0])
			}
			_, err = c.SetActive(ctx, &urlfrontier.Active{State: v})
			return err
		}
		return usagef("frontier active takes at most one argument")
	case "log-level":
		if len(args) != 1 {
			return usagef("frontier log-level takes one level: TRACE, DEBUG, INFO, WARN or ERROR")
		}
		lv, ok := urlfrontier.LogLevelParams_Level_value[strings.ToUpper(args[0])]
		if !ok {
			return usagef("frontier log-level %q: want TRACE, DEBUG, INFO, WARN or ERROR", args[0])
		}
		_, err := c.SetLogLevel(ctx, &urlfrontier.LogLevelParams{Package: o.pkg, Level: urlfrontier.LogLevelParams_Level(lv)})
		return err
	}
	return usagef("unknown action %q (want %s)", action, strings.Join(frontierActions, ", "))
}

// printItem prints a URL as status and list do: URL, queue, state, due
// time (RFC 3339, "-" when completed), creation time.
func printItem(w io.Writer, it *urlfrontier.URLItem) {
	k := it.GetKnown()
	state, due := "completed", "-"
	if s := k.GetRefetchableFromDate(); s > 0 {
		state, due = "queued", time.Unix(int64(s), 0).UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.GetInfo().GetUrl(), k.GetInfo().GetKey(), state, due,
		time.Unix(int64(it.GetCreationDate()), 0).UTC().Format(time.RFC3339))
}

// put streams the URLs to PutURLs and prints each ack in order.
func (o *frontierOptions) put(ctx context.Context, e *env, c urlfrontier.URLFrontierClient, w *bufio.Writer, args []string) error {
	urls := args
	if len(urls) == 0 {
		sc := bufio.NewScanner(e.stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
				urls = append(urls, l)
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	stream, err := c.PutURLs(ctx)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		for _, u := range urls {
			info := &urlfrontier.URLInfo{Url: u, Key: o.key, CrawlID: o.crawl}
			it := &urlfrontier.URLItem{Item: &urlfrontier.URLItem_Discovered{Discovered: &urlfrontier.DiscoveredURLItem{Info: info}}}
			if o.known {
				it.Item = &urlfrontier.URLItem_Known{Known: &urlfrontier.KnownURLItem{Info: info, RefetchableFromDate: uint64(max(0, o.refetch))}}
			}
			if err := stream.Send(it); err != nil {
				errc <- err
				return
			}
		}
		errc <- stream.CloseSend()
	}()
	failed := false
	for range urls {
		ack, err := stream.Recv()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%s\n", ack.GetStatus(), ack.GetID())
		failed = failed || ack.GetStatus() == urlfrontier.AckMessage_FAIL
	}
	if err := <-errc; err != nil {
		return err
	}
	if failed {
		return errReported
	}
	return nil
}
