package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/urlhash/urlhash/frontier/urlfrontier"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// frontierAction is one action of "urlhash frontier" (its first
// argument): its arguments, the flags it takes besides --addr, --crawl and
// --timeout (each declared once, in frontierCommand), what it does and
// how. The synopsis, the description, each flag's list of actions, the
// completion and the check that no other flag is given are made from it.
type frontierAction struct {
	name     string
	args     string   // the synopsis of its arguments; "" for none
	flags    []string // the flags it takes
	required []string // of them, those it needs
	short    string   // what it does, for the help
	run      func(a *frontierCall) error
}

// frontierCall is an action's call: its options, client, output and
// arguments.
type frontierCall struct {
	ctx  context.Context
	e    *env
	o    *frontierOptions
	c    urlfrontier.URLFrontierClient
	w    *bufio.Writer
	name string
	args []string
}

// frontierActions are the actions of "urlhash frontier", in the order its
// help lists them.
func frontierActions() []frontierAction {
	return []frontierAction{
		{name: "put", args: "[URL...]", flags: []string{"key", "known", "refetch"}, run: frontierPut,
			short: "puts the URLs (arguments, or standard input one a line) as discovered (--known: as known, completed unless --refetch); prints each ack: OK, SKIPPED (already known, or not a URL) or FAIL, a tab, the URL"},
		{name: "get", flags: []string{"key", "any-crawl", "max-queues", "max-urls-per-queue", "delay-requestable"}, run: frontierGet,
			short: "hands out due URLs (they are in transit until updated or until --delay-requestable passes): URL, tab, queue"},
		{name: "status", args: "URL", flags: []string{"key"}, run: frontierStatus,
			short: "what the frontier knows of a URL: URL, queue, state (queued, in_transit, completed), due time, creation time"},
		{name: "list", flags: []string{"key", "filter", "ignore-case", "start", "size"}, run: frontierList,
			short: "a crawl's (or queue's) URLs, as status prints them"},
		{name: "count", flags: []string{"key", "filter", "ignore-case"}, run: frontierCount,
			short: "counts them"},
		{name: "queues", flags: []string{"include-inactive", "start", "size"}, run: frontierQueues,
			short: "the crawl's active queues (all with --include-inactive)"},
		{name: "crawls", run: frontierStrings, short: "the crawls"},
		{name: "stats", flags: []string{"key"}, run: frontierStats, short: "the crawl's (or queue's) counts"},
		{name: "delete", flags: []string{"key", "whole-crawl"}, run: frontierDelete,
			short: "deletes a queue (--key) or the whole crawl (--whole-crawl) with its URLs; prints how many URLs not completed went"},
		{name: "purge", flags: []string{"key", "days"}, required: []string{"days"}, run: frontierPurge,
			short: "deletes the URLs first stored more than --days days ago"},
		{name: "delay", flags: []string{"key", "seconds"}, required: []string{"seconds"}, run: frontierDelay,
			short: "sets a queue's politeness delay, or the crawl's default"},
		{name: "block", flags: []string{"key", "until"}, required: []string{"key", "until"}, run: frontierBlock,
			short: "blocks a queue until a time (unix seconds; 0 unblocks)"},
		{name: "limit", flags: []string{"key", "limit"}, required: []string{"key", "limit"}, run: frontierLimit,
			short: "stops a queue once --limit of its URLs are completed"},
		{name: "active", args: "[true|false]", run: frontierActive,
			short: "prints whether the frontier hands out URLs, or sets it"},
		{name: "nodes", run: frontierStrings, short: "the frontier's nodes"},
		{name: "log-level", args: "LEVEL", flags: []string{"package"}, run: frontierLogLevel,
			short: "sets the server's log level (TRACE, DEBUG, INFO, WARN, ERROR)"},
	}
}

// frontierCommonFlags are the flags every action takes.
var frontierCommonFlags = []string{"addr", "crawl", "timeout"}

func frontierActionNames() []string {
	var names []string
	for _, a := range frontierActions() {
		names = append(names, a.name)
	}
	return names
}

func findFrontierAction(name string) *frontierAction {
	for _, a := range frontierActions() {
		if a.name == name {
			return &a
		}
	}
	return nil
}

func frontierCommand() *command {
	c := &command{
		name:  "frontier",
		short: "talk to a crawl frontier's gRPC service (urlhash serve --frontier), for debugging",
		example: `$ urlhash serve --db crawl.idx --frontier 127.0.0.1:7071 &
$ urlhash frontier put https://example.com/ https://example.com/about
OK	https://example.com/
OK	https://example.com/about
$ urlhash frontier get --max-urls-per-queue 1
https://example.com/	example.com
`,
		argValues: frontierActionNames,
		setFlags: func(fs *flagSet) runFunc {
			o := &frontierOptions{fs: fs}
			fs.StringVar(&o.addr, "addr", "127.0.0.1:7071", "the service's `HOST:PORT` (default 127.0.0.1:7071, the reference service's port)")
			fs.StringVar(&o.crawl, "crawl", "", "the crawl `ID` (default: the default crawl)")
			fs.BoolVar(&o.anyCrawl, "any-crawl", false, "from any crawl")
			fs.StringVar(&o.key, "key", "", "the queue `KEY` (put: default the URL's host)")
			fs.BoolVar(&o.known, "known", false, "the URLs are known (updates): completed, or due again at --refetch")
			fs.Int64Var(&o.refetch, "refetch", 0, "with --known: due again at `UNIX` seconds (default 0: completed, never again)")
			fs.IntVar(&o.maxQueues, "max-queues", 0, "from at most `N` queues (default 0: no limit)")
			fs.IntVar(&o.maxPerQueue, "max-urls-per-queue", 0, "at most `N` URLs a queue (default 0: no limit)")
			fs.IntVar(&o.delayRequestable, "delay-requestable", 0, "the URLs are due again after `SECONDS` unless updated (default 0: the service's, 30 s)")
			fs.StringVar(&o.filter, "filter", "", "only URLs that contain `TEXT`")
			fs.BoolVar(&o.ignoreCase, "ignore-case", false, "--filter in any case")
			fs.IntVar(&o.start, "start", 0, "skip the first `N`")
			fs.IntVar(&o.size, "size", 0, "at most `N` (default 0: the service's, 100)")
			fs.BoolVar(&o.inactive, "include-inactive", false, "also the inactive queues (empty or blocked)")
			fs.BoolVar(&o.wholeCrawl, "whole-crawl", false, "the whole crawl")
			fs.IntVar(&o.days, "days", 0, "URLs first stored more than `N` days ago")
			fs.IntVar(&o.seconds, "seconds", 0, "the delay in `SECONDS`")
			fs.Int64Var(&o.until, "until", 0, "until `UNIX` seconds, 0 to unblock")
			fs.Int64Var(&o.limit, "limit", 0, "`N` completed URLs, 0 for none")
			fs.StringVar(&o.pkg, "package", "", "the `PACKAGE` (logged only)")
			fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up after `DURATION` (default 30s)")
			fs.check(func() error {
				for name, v := range map[string]int64{"refetch": o.refetch, "max-queues": int64(o.maxQueues), "max-urls-per-queue": int64(o.maxPerQueue),
					"delay-requestable": int64(o.delayRequestable), "start": int64(o.start), "size": int64(o.size), "days": int64(o.days),
					"seconds": int64(o.seconds), "until": o.until, "limit": o.limit} {
					if v < 0 {
						return usagef("--%s %d: want 0 or more", name, v)
					}
				}
				return nil
			})
			// Each flag's help names the actions that take it.
			fs.VisitAll(func(f *pflag.Flag) {
				if !slices.Contains(frontierCommonFlags, f.Name) {
					f.Usage += " [" + strings.Join(frontierActionsTaking(f.Name), ", ") + "]"
				}
			})
			return o.run
		},
	}
	c.usageLine, c.long = frontierHelp(c)
	return c
}

// frontierActionsTaking returns the actions that take the flag name.
func frontierActionsTaking(name string) []string {
	var out []string
	for _, a := range frontierActions() {
		if slices.Contains(a.flags, name) {
			out = append(out, a.name)
		}
	}
	return out
}

// frontierHelp returns the synopsis and the description of "urlhash
// frontier", from its actions and their flags.
func frontierHelp(c *command) (usageLine, long string) {
	fs := &flagSet{FlagSet: pflag.NewFlagSet(c.name, pflag.ContinueOnError)}
	c.setFlags(fs)
	var lines []string
	var b strings.Builder
	b.WriteString(`Calls the URL Frontier gRPC service at --addr (crawler-commons'
urlfrontier.proto, which "urlhash serve --frontier ADDR" serves), as the
reference service's client does, and prints the answer, one item a line.
The first argument is the action:

`)
	for _, a := range frontierActions() {
		line := "frontier " + a.name
		for _, name := range a.flags {
			f := fs.Lookup(name)
			arg := "--" + name
			if v, _ := pflag.UnquoteUsage(f); v != "" {
				arg += " " + v
			}
			if !slices.Contains(a.required, name) {
				arg = "[" + arg + "]"
			}
			line += " " + arg
		}
		if a.args != "" {
			line += " " + a.args
		}
		lines = append(lines, line)
		text := indent(wrap(a.short, 76-13), 13)
		fmt.Fprintf(&b, "  %-10s %s", a.name, text[13:])
	}
	b.WriteString(`
Every action takes --addr, --crawl (default: the default crawl, DEFAULT)
and --timeout, and the flags its synopsis shows (those out of brackets it
needs): another is a mistake. A server with a token reads it from
URLHASH_TOKEN.
`)
	return strings.Join(lines, "\n"), b.String()
}

type frontierOptions struct {
	fs                                       *flagSet
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
		return usagef("want an action: %s", strings.Join(frontierActionNames(), ", "))
	}
	a := findFrontierAction(args[0])
	if a == nil {
		return usagef("unknown action %q (want %s)", args[0], strings.Join(frontierActionNames(), ", "))
	}
	var stray error
	o.fs.Visit(func(f *pflag.Flag) {
		if stray == nil && !slices.Contains(a.flags, f.Name) && !slices.Contains(frontierCommonFlags, f.Name) {
			stray = usagef("frontier %s does not take --%s (it is %s's)", a.name, f.Name, strings.Join(frontierActionsTaking(f.Name), ", "))
		}
	})
	if stray != nil {
		return stray
	}
	for _, name := range a.required {
		if !o.fs.Changed(name) {
			return usagef("frontier %s needs --%s", a.name, name)
		}
	}
	conn, err := grpc.NewClient(o.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(e.ctx, o.timeout)
	defer cancel()
	if tok := os.Getenv("URLHASH_TOKEN"); tok != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	}
	call := &frontierCall{ctx: ctx, e: e, o: o, c: urlfrontier.NewURLFrontierClient(conn), w: bufio.NewWriter(e.stdout), name: a.name, args: args[1:]}
	if err := a.run(call); err != nil {
		return err
	}
	return call.w.Flush()
}

// noArgs refuses arguments to an action that takes none.
func (a *frontierCall) noArgs() error {
	if len(a.args) > 0 {
		return usagef("frontier %s takes no argument (%q)", a.name, a.args[0])
	}
	return nil
}

func frontierGet(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	o := a.o
	p := &urlfrontier.GetParams{MaxQueues: uint32(o.maxQueues), MaxUrlsPerQueue: uint32(o.maxPerQueue), Key: o.key, DelayRequestable: uint32(o.delayRequestable)}
	if o.anyCrawl {
		p.Item = &urlfrontier.GetParams_AnyCrawlID{AnyCrawlID: &urlfrontier.AnyCrawlID{}}
	} else {
		p.Item = &urlfrontier.GetParams_CrawlID{CrawlID: o.crawl}
	}
	stream, err := a.c.GetURLs(a.ctx, p)
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
		fmt.Fprintf(a.w, "%s\t%s\n", in.GetUrl(), in.GetKey())
	}
}

func frontierStatus(a *frontierCall) error {
	if len(a.args) != 1 {
		return usagef("frontier status takes one URL")
	}
	it, err := a.c.GetURLStatus(a.ctx, &urlfrontier.URLStatusRequest{Url: a.args[0], Key: a.o.key, CrawlID: a.o.crawl})
	if err != nil {
		return err
	}
	printItem(a.w, it)
	return nil
}

func frontierList(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	o := a.o
	p := &urlfrontier.ListUrlParams{Start: uint32(o.start), Size: uint32(o.size), Key: o.key, CrawlID: o.crawl, Filter: &o.filter, IgnoreCase: &o.ignoreCase}
	stream, err := a.c.ListURLs(a.ctx, p)
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
		printItem(a.w, it)
	}
}

func frontierCount(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	o := a.o
	n, err := a.c.CountURLs(a.ctx, &urlfrontier.CountUrlParams{Key: o.key, CrawlID: o.crawl, Filter: &o.filter, IgnoreCase: &o.ignoreCase})
	if err != nil {
		return err
	}
	fmt.Fprintln(a.w, n.GetValue())
	return nil
}

func frontierQueues(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	o := a.o
	l, err := a.c.ListQueues(a.ctx, &urlfrontier.Pagination{Start: uint32(o.start), Size: uint32(o.size), IncludeInactive: o.inactive, CrawlID: o.crawl})
	if err != nil {
		return err
	}
	for _, q := range l.GetValues() {
		fmt.Fprintln(a.w, q)
	}
	return nil
}

// frontierStrings prints the crawls or the nodes.
func frontierStrings(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	var l *urlfrontier.StringList
	var err error
	if a.name == "crawls" {
		l, err = a.c.ListCrawls(a.ctx, &urlfrontier.Local{})
	} else {
		l, err = a.c.ListNodes(a.ctx, &urlfrontier.Empty{})
	}
	if err != nil {
		return err
	}
	for _, v := range l.GetValues() {
		fmt.Fprintln(a.w, v)
	}
	return nil
}

func frontierStats(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	s, err := a.c.GetStats(a.ctx, &urlfrontier.QueueWithinCrawlParams{Key: a.o.key, CrawlID: a.o.crawl})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.w, "crawl: %s\nqueues: %d\nactive queues: %d\nsize: %d\nin transit: %d\ncompleted: %d\n",
		s.GetCrawlID(), s.GetNumberOfQueues(), s.GetCounts()["active_queues"], s.GetSize(), s.GetInProcess(), s.GetCounts()["completed"])
	return nil
}

func frontierDelete(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	o := a.o
	var n *urlfrontier.Long
	var err error
	switch {
	case o.key != "" && !o.wholeCrawl:
		n, err = a.c.DeleteQueue(a.ctx, &urlfrontier.QueueWithinCrawlParams{Key: o.key, CrawlID: o.crawl})
	case o.key == "" && o.wholeCrawl:
		n, err = a.c.DeleteCrawl(a.ctx, &urlfrontier.DeleteCrawlMessage{Value: o.crawl})
	default:
		return usagef("frontier delete needs --key K (a queue) or --whole-crawl (the crawl), not both")
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(a.w, n.GetValue())
	return nil
}

func frontierPurge(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	n, err := a.c.PurgeURLs(a.ctx, &urlfrontier.PurgeUrlParams{Key: a.o.key, CrawlID: a.o.crawl, Days: uint32(a.o.days)})
	if err != nil {
		return err
	}
	fmt.Fprintln(a.w, n.GetValue())
	return nil
}

func frontierDelay(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	_, err := a.c.SetDelay(a.ctx, &urlfrontier.QueueDelayParams{Key: a.o.key, DelayRequestable: uint32(a.o.seconds), CrawlID: a.o.crawl})
	return err
}

func frontierBlock(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	_, err := a.c.BlockQueueUntil(a.ctx, &urlfrontier.BlockQueueParams{Key: a.o.key, Time: uint64(a.o.until), CrawlID: a.o.crawl})
	return err
}

func frontierLimit(a *frontierCall) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	_, err := a.c.SetCrawlLimit(a.ctx, &urlfrontier.CrawlLimitParams{Key: a.o.key, Limit: uint32(a.o.limit), CrawlID: a.o.crawl})
	return err
}

func frontierActive(a *frontierCall) error {
	switch len(a.args) {
	case 0:
		b, err := a.c.GetActive(a.ctx, &urlfrontier.Local{})
		if err != nil {
			return err
		}
		fmt.Fprintln(a.w, b.GetState())
		return nil
	case 1:
		v, err := strconv.ParseBool(a.args[0])
		if err != nil {
			return usagef("frontier active %q: want true or false", a.args[0])
		}
		_, err = a.c.SetActive(a.ctx, &urlfrontier.Active{State: v})
		return err
	}
	return usagef("frontier active takes at most one argument")
}

func frontierLogLevel(a *frontierCall) error {
	if len(a.args) != 1 {
		return usagef("frontier log-level takes one level: TRACE, DEBUG, INFO, WARN or ERROR")
	}
	lv, ok := urlfrontier.LogLevelParams_Level_value[strings.ToUpper(a.args[0])]
	if !ok {
		return usagef("frontier log-level %q: want TRACE, DEBUG, INFO, WARN or ERROR", a.args[0])
	}
	_, err := a.c.SetLogLevel(a.ctx, &urlfrontier.LogLevelParams{Package: a.o.pkg, Level: urlfrontier.LogLevelParams_Level(lv)})
	return err
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

// frontierPut streams the URLs to PutURLs and prints each ack in order.
func frontierPut(a *frontierCall) error {
	ctx, e, c, w, o := a.ctx, a.e, a.c, a.w, a.o
	urls := a.args
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
				it.Item = &urlfrontier.URLItem_Known{Known: &urlfrontier.KnownURLItem{Info: info, RefetchableFromDate: uint64(o.refetch)}}
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
