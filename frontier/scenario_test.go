package frontier

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/urlhash/urlhash/internal/fakeclock"
)

// TestScenarios runs the scripts in testdata/scenarios: each command
// drives the frontier on a fake clock and prints what it answered (times
// as offsets from the clock's start). Regenerate the expected output
// with -rewrite, then read it.
//
//	put [crawl=C] [key=K]        lines: URL [known] [refetch=DUR] [priority=N] [fp=HEX]
//	get [crawl=C|any] [key=K] [queues=N] [per-queue=N] [max=N] [transit=DUR]
//	complete|release [crawl=C]   lines: URL (by its ID)
//	extend [crawl=C] transit=DUR lines: URL (by its ID)
//	advance DUR | reopen | crawls | queues [crawl=C] [inactive]
//	stats [crawl=C] [key=K] | due [crawl=C] | status URL [crawl=C]
//	list|count [crawl=C] [key=K] [filter=F] [ignore-case] [start=N] [size=N]
//	delay [crawl=C] [key=K] seconds=S | block key=K until=DUR|0 | limit key=K n=N
//	watch | changed | next-due [crawl=C|any] [key=K] [per-queue=N]
//	active [true|false] | delete-queue key=K [crawl=C] | delete-crawl crawl=C | purge days=N [crawl=C] [key=K]
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		clock := fakeclock.New(fakeclock.Start())
		dir := filepath.Join(t.TempDir(), "frontier")
		f := reopen(t, dir, clock)
		ctx := context.Background()
		var watched <-chan struct{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			arg := func(key string) string {
				if a, ok := td.Arg(key); ok && len(a.Vals) > 0 {
					return a.Vals[0]
				}
				return ""
			}
			num := func(key string) int {
				n, _ := strconv.Atoi(arg(key))
				return n
			}
			crawl := arg("crawl")
			var b strings.Builder
			switch td.Cmd {
			case "put":
				var items []Item
				for _, l := range strings.Split(strings.TrimSpace(td.Input), "\n") {
					fields := strings.Fields(l)
					it := Item{Info: URLInfo{URL: fields[0], Crawl: crawl, Key: arg("key")}}
					for _, fl := range fields[1:] {
						k, v, _ := strings.Cut(fl, "=")
						switch k {
						case "known":
							it.Known = true
						case "refetch":
							d, err := time.ParseDuration(v)
							if err != nil {
								t.Fatal(err)
							}
							it.Refetch = clock.Now().Add(d)
						case "priority":
							p, _ := strconv.Atoi(v)
							it.Info.Priority = int32(p)
						case "fp":
							it.Fingerprint = []byte(v)
						case "key":
							it.Info.Key = v
						default:
							t.Fatalf("%s: unknown flag %q", td.Pos, fl)
						}
					}
					items = append(items, it)
				}
				res, err := f.Put(ctx, items)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for _, r := range res {
					b.WriteString([]string{"new", "updated", "present", "invalid"}[r.Status])
					if r.Err != nil {
						b.WriteString(": " + r.Err.Error())
					}
					b.WriteByte('\n')
				}
			case "get":
				p := GetParams{Crawl: crawl, AnyCrawl: crawl == "any", Key: arg("key"), MaxQueues: num("queues"), MaxPerQueue: num("per-queue"), MaxURLs: num("max")}
				if v := arg("transit"); v != "" {
					d, err := time.ParseDuration(v)
					if err != nil {
						t.Fatal(err)
					}
					p.Transit = d
				}
				hs, err := f.GetURLs(ctx, p)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for _, h := range hs {
					fmt.Fprintf(&b, "%s %s %s\n", h.Info.URL, h.Info.Key, h.Info.Crawl)
				}
				if len(hs) == 0 {
					b.WriteString("(none)\n")
				}
			case "complete", "release", "extend":
				var ids []ID
				for _, l := range strings.Split(strings.TrimSpace(td.Input), "\n") {
					p, err := f.prepare(&Item{Info: URLInfo{URL: l, Crawl: crawl, Key: "-"}})
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, ID(p.u))
				}
				var found []bool
				var err error
				switch td.Cmd {
				case "complete":
					found, err = f.Complete(ctx, crawl, ids)
				case "release":
					found, err = f.Release(ctx, crawl, ids)
				default:
					d, perr := time.ParseDuration(arg("transit"))
					if perr != nil {
						t.Fatal(perr)
					}
					found, err = f.Extend(ctx, crawl, ids, d)
				}
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				for _, ok := range found {
					fmt.Fprintln(&b, ok)
				}
			case "watch":
				watched = f.Changes()
				return ""
			case "changed":
				select {
				case <-watched:
					return "true\n"
				default:
					return "false\n"
				}
			case "next-due":
				t := f.NextDue(GetParams{Crawl: crawl, AnyCrawl: crawl == "any", Key: arg("key"), MaxPerQueue: num("per-queue")})
				if t.IsZero() {
					return "none\n"
				}
				return "+" + t.Sub(fakeclock.Start()).String() + "\n"
			case "advance":
				d, err := time.ParseDuration(td.CmdArgs[0].Key)
				if err != nil {
					t.Fatal(err)
				}
				clock.Advance(d)
				return ""
			case "reopen":
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				f = reopen(t, dir, clock)
				waitRecount(f)
				return ""
			case "crawls":
				fmt.Fprintln(&b, f.Crawls())
			case "queues":
				l := f.ListQueues(crawl, num("start"), num("size"), td.HasArg("inactive"))
				fmt.Fprintln(&b, l.Keys)
			case "stats":
				s, err := f.Stats(crawl, arg("key"))
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				fmt.Fprintf(&b, "size=%d in_transit=%d completed=%d queues=%d active_queues=%d puts=%d gets=%d\n",
					s.Size, s.InTransit, s.Completed, s.Queues, s.ActiveQueues, s.Puts, s.Gets)
			case "due":
				fmt.Fprintln(&b, f.Due(crawl))
			case "status":
				it, err := f.URLStatus(ctx, crawl, td.CmdArgs[0].Key)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				writeItem(&b, &it)
			case "list":
				err := f.ListURLs(ctx, ListParams{Crawl: crawl, Key: arg("key"), Filter: arg("filter"), IgnoreCase: td.HasArg("ignore-case"),
					Start: num("start"), Size: num("size")}, func(it URLItem) error {
					writeItem(&b, &it)
					return nil
				})
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
			case "count":
				n, err := f.CountURLs(ctx, ListParams{Crawl: crawl, Key: arg("key"), Filter: arg("filter"), IgnoreCase: td.HasArg("ignore-case")})
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				fmt.Fprintln(&b, n)
			case "delay":
				err := f.SetDelay(ctx, crawl, arg("key"), time.Duration(num("seconds"))*time.Second)
				return result(err)
			case "block":
				var until time.Time
				if v := arg("until"); v != "0" {
					d, err := time.ParseDuration(v)
					if err != nil {
						t.Fatal(err)
					}
					until = clock.Now().Add(d)
				}
				return result(f.BlockQueueUntil(ctx, crawl, arg("key"), until))
			case "limit":
				return result(f.SetCrawlLimit(ctx, crawl, arg("key"), uint64(num("n"))))
			case "active":
				if len(td.CmdArgs) > 0 {
					return result(f.SetActive(ctx, td.CmdArgs[0].Key == "true"))
				}
				fmt.Fprintln(&b, f.IsActive())
			case "delete-queue":
				n, err := f.DeleteQueue(ctx, crawl, arg("key"))
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				fmt.Fprintf(&b, "active=%d urls=%d\n", n.Active, n.URLs)
			case "delete-crawl":
				n, err := f.DeleteCrawl(ctx, crawl)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				fmt.Fprintf(&b, "active=%d urls=%d\n", n.Active, n.URLs)
			case "purge":
				n, err := f.PurgeURLs(ctx, crawl, arg("key"), num("days"))
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				fmt.Fprintln(&b, n)
			default:
				t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
			}
			return b.String()
		})
	})
}

func result(err error) string {
	switch {
	case err == nil:
		return "ok\n"
	case errors.Is(err, ErrNotFound):
		return "not found\n"
	}
	return "error: " + err.Error() + "\n"
}

// writeItem prints an item: URL, queue, state, due (offset), created
// (offset), metadata.
func writeItem(b *strings.Builder, it *URLItem) {
	start := fakeclock.Start()
	state, due := "queued", "-"
	switch {
	case it.IsCompleted():
		state = "completed"
	case it.InTransit:
		state = "in_transit"
	}
	if !it.IsCompleted() {
		due = "+" + it.Refetch.Sub(start).Round(time.Millisecond).String()
	}
	fmt.Fprintf(b, "%s %s %s due=%s created=+%s", it.Info.URL, it.Info.Key, state, due, it.Created.Sub(start))
	if len(it.Info.Data) > 0 {
		fmt.Fprintf(b, " data=%q", it.Info.Data)
	}
	b.WriteByte('\n')
}
