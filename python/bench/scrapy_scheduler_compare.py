"""Compares two shared scrapy schedulers on one local site crawled by several
concurrent scrapy processes: a stand-in of scrapy-redis's Scheduler (its
defaults: RFPDupeFilter's SADD of scrapy's request fingerprint, then ZADD of
the pickled request into one priority queue, ZPOPMIN of one request per
next_request, has_pending_requests while the queue is not empty;
SCHEDULER_PERSIST on, as distributed crawls run it; scrapy-redis is not in
Debian or reachable here, so RedisScheduler below stands in for it) and
urlhash.scrapy.Scheduler over "urlhash serve"'s frontier. Each crawls the
site twice: every process to the end, then again with one process killed
(SIGKILL) once half the site was fetched, on the site with one spelling of
each page's URL (there a request lost is a page lost).

    /usr/bin/python3 python/bench/scrapy_scheduler_compare.py [--pages 2000] [--procs 3]

Needs Debian's python3-scrapy, python3-redis and redis-server, and a urlhash
with the frontier (it builds urlhash from this repository, or takes
$URLHASH_BIN). The site (127.0.0.1 only) is scrapy_redis_compare.py's: its
links spell each page's URL 8 ways. Prints, per scheduler and run, the pages
fetched (with repeats), the distinct pages, the pages whose callback never
finished in any process (a page the killed process fetched and did not parse
counts, unless another process did it), the time to the last page fetched and
to the last process's exit, the CPU time of the scrapy processes and of the
server (Redis or urlhash serve); and, for urlhash, how long a request waited
in a process before the frontier had it (the window in which a kill loses it).
"""

import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
from serve import Server  # noqa: E402
from localsite import RECORDING_SPIDER, crawl_cmd  # noqa: E402
from scrapy_redis_compare import SPELLINGS, Site, redis_server  # noqa: E402

REDIS_SCHEDULER = textwrap.dedent(
    """
    # A stand-in for scrapy-redis's Scheduler with its defaults: the request
    # fingerprint SADDed to a set, the pickled request ZADDed to one sorted
    # set scored by -priority, ZPOPMIN of one request per next_request, and
    # has_pending_requests while the queue is not empty.
    import pickle
    import redis
    from scrapy.utils.request import request_from_dict

    class RedisScheduler:
        def __init__(self, server, crawler):
            self.server, self.crawler = server, crawler

        @classmethod
        def from_crawler(cls, crawler):
            return cls(redis.Redis.from_url(crawler.settings.get("REDIS_URL")), crawler)

        def open(self, spider):
            self.spider = spider
            self.queue, self.seen = spider.name + ":requests", spider.name + ":dupefilter"

        def close(self, reason):
            self.server.close()

        def enqueue_request(self, request):
            fp = self.crawler.request_fingerprinter.fingerprint(request).hex()
            if not request.dont_filter and self.server.sadd(self.seen, fp) == 0:
                return False
            data = pickle.dumps(request.to_dict(spider=self.spider), protocol=-1)
            self.server.zadd(self.queue, {data: -request.priority})
            return True

        def next_request(self):
            got = self.server.zpopmin(self.queue, 1)
            if got:
                return request_from_dict(pickle.loads(got[0][0]), spider=self.spider)
            return None

        def has_pending_requests(self):
            return self.server.zcard(self.queue) > 0
    """
)


class PlainSite(Site):
    """The site with each page's URL spelled one way: a request lost is a
    page lost, not found again through another spelling."""

    def spell(self, j, k):
        return f"{self.base}/page/{j}"


def crawl(site, tmp, settings, env, procs, kill):
    """Runs procs crawlers at once from spread start pages; with kill, kills
    the second with SIGKILL once half the site was fetched. Returns the wall
    time, the time to the last fetch, the survivors' logs and the pages whose
    callback finished in any process."""
    spider = os.path.join(tmp, "spider.py")
    starts = [site.pages * i // procs for i in range(procs)]
    record = os.path.join(tmp, "processed.txt")
    if os.path.exists(record):
        os.remove(record)
    t0 = time.monotonic()
    ps = []
    for i, start in enumerate(starts):
        err = open(os.path.join(tmp, f"crawler-{i}.log"), "w+")
        cmd = crawl_cmd(spider, site.url(start), settings) + ["-a", f"record={record}"]
        ps.append((subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=err), err))
    if kill:
        while sum(site.fetches.values()) < site.pages // 2 and ps[1][0].poll() is None:
            time.sleep(0.01)
        ps[1][0].send_signal(signal.SIGKILL)
    logs = []
    for i, (p, err) in enumerate(ps):
        p.wait()
        err.seek(0)
        log = err.read()
        err.close()
        if kill and i == 1:
            continue
        if p.returncode != 0:
            raise SystemExit(f"scrapy failed: {log[-2000:]}")
        logs.append(log)
    with open(record) as f:
        processed = set(f.read().split())
    return time.monotonic() - t0, site.last - t0, logs, processed


def cpu(pid):
    """The CPU seconds (user and system) process pid used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu():
    """The CPU seconds of this process's children that were waited for."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def stat(logs, key):
    """The values of a stat in the stats dumps of logs."""
    return [float(m) for log in logs for m in re.findall(rf"'{re.escape(key)}': ([0-9.]+)", log)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--links", type=int, default=8)
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--concurrent", type=int, default=16, help="CONCURRENT_REQUESTS of each process")
    ap.add_argument("--lease", type=float, default=10, help="URLHASH_LEASE: when a killed crawler's requests come back")
    ap.add_argument("--only", choices=("redis", "urlhash"), help="run one scheduler only")
    ap.add_argument("--no-kill", action="store_true", help="skip the runs with a process killed")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each scheduler and scenario, in alternating order")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="urlhash-sched-vs-redis-")
    redis_proc = server = None
    try:
        with open(os.path.join(tmp, "spider.py"), "w") as f:
            f.write(RECORDING_SPIDER)
        with open(os.path.join(tmp, "redisscheduler.py"), "w") as f:
            f.write(REDIS_SCHEDULER)
        redis_proc, sock = redis_server(tmp)
        import redis

        rdb = redis.Redis(unix_socket_path=sock)
        server = Server()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(HERE, "..", "src"), tmp]))
        common = {"ROBOTSTXT_OBEY": "False", "TELNETCONSOLE_ENABLED": "False", "LOG_LEVEL": "INFO",
                  "CONCURRENT_REQUESTS": str(args.concurrent), "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"}
        schedulers = [
            ("scrapy-redis stand-in (Redis)", {"SCHEDULER": "redisscheduler.RedisScheduler", "REDIS_URL": "unix://" + sock}),
            ("urlhash.scrapy.Scheduler", {"SCHEDULER": "urlhash.scrapy.Scheduler",
                                          "DUPEFILTER_CLASS": "urlhash.scrapy.RFPDupeFilter",
                                          "URLHASH_URL": server.url, "URLHASH_DELAY": "0",
                                          "URLHASH_PER_HOST": "10000",
                                          "URLHASH_LEASE": str(args.lease), "URLHASH_IDLE_TIMEOUT": "1"}),
        ]
        print(f"site: {args.pages} pages, {args.links} links each, spellings: "
              + ", ".join(sorted({n for n, _ in SPELLINGS})))
        print(f"{args.procs} scrapy processes at once, CONCURRENT_REQUESTS {args.concurrent} each, "
              f"site and servers on 127.0.0.1; urlhash: URLHASH_IDLE_TIMEOUT 1, URLHASH_LEASE {args.lease:g}; "
              "'one killed': the second process killed at half the site, links spelled one way")
        print(f"{'scheduler':30} {'run':10} {'fetched':>8} {'distinct':>9} {'never done':>10} {'repeats':>8} "
              f"{'to last page s':>15} {'wall s':>7} {'crawlers CPU s':>11} {'server CPU s':>10}")
        windows = []
        run = 0
        if args.only:
            schedulers = [x for x in schedulers if ("URLHASH_URL" in x[1]) == (args.only == "urlhash")]
        order = []
        for kill in (False,) if args.no_kill else (False, True):
            for r in range(args.repeat):
                order += [(kill, x) for x in (schedulers if r % 2 == 0 else schedulers[::-1])]
        for kill, (name, s) in order:
            run += 1
            rdb.flushall()
            site = (PlainSite if kill else Site)(args.pages, args.links)
            peer = server.proc.pid if "URLHASH_URL" in s else redis_proc.pid
            cpu0, crawlers0 = cpu(peer), children_cpu()
            wall, last, logs, processed = crawl(site, tmp, dict(common, URLHASH_CRAWL=f"run{run}", **s), env,
                                                args.procs, kill)
            fetched = sum(site.fetches.values())
            label = "one killed" if kill else "all"
            print(f"{name:30} {label:10} {fetched:8d} {len(site.fetches):9d} {args.pages - len(processed):10d} "
                  f"{fetched - len(site.fetches):8d} {last:15.1f} {wall:7.1f} {children_cpu() - crawlers0:11.1f} "
                  f"{cpu(peer) - cpu0:10.1f}", flush=True)
            if "URLHASH_URL" in s:
                lines, waits = sum(stat(logs, "urlhash/enqueue_lines")), sum(stat(logs, "urlhash/enqueue_wait_sum"))
                windows.append((label, lines, sum(stat(logs, "urlhash/enqueue_batches")), waits,
                                max(stat(logs, "urlhash/enqueue_wait_max") or [0])))
            site.stop()
        print("urlhash: requests enqueued by the processes that finished, batches, mean and max wait before the frontier had them")
        for label, lines, batches, waits, worst in windows:
            print(f"  {label:10} {lines:8.0f} requests in {batches:6.0f} batches ({lines / max(batches, 1):.1f} a batch): "
                  f"mean {1000 * waits / max(lines, 1):.1f} ms, max {1000 * worst:.0f} ms")
    finally:
        if server is not None:
            server.stop()
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
